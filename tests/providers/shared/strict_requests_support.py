"""How the strict-request tests send requests: one factory per API and SDK (the request's fields in; out, a
function of the session that sends the request with the official SDK and returns the answer's text),
the blocks the requests are built from, the session configuration with ``strict_requests`` unset, true
or false, and ``Case``, a row of the strict request table (strict_request_cases.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import botocore.config
import orjson
from google.genai import types

from llmts import SessionClient

__all__ = [
    "BEDROCK",
    "COHERE",
    "HI",
    "MODELS",
    "THINKING",
    "Case",
    "boto_client",
    "fn_call",
    "fn_response",
    "gemini_user",
    "send_azure_chat",
    "send_chat",
    "send_chat_stream",
    "send_cohere",
    "send_converse",
    "send_gemini",
    "send_gemini_config",
    "send_invoke",
    "send_messages",
    "send_messages_stream",
    "send_responses",
    "strict_config",
    "text_content",
    "tool_call",
    "tool_result",
    "tool_use",
]


BEDROCK = "anthropic.claude-3-7-sonnet-20250219-v1:0"
COHERE = "command-a-03-2025"
MODELS = [
    "gpt-test",
    "o3-mini",
    "gpt-5-mini",
    "gpt-4.1-nano",
    "claude-test-1",
    "gemini-test",
    BEDROCK,
    COHERE,
]
HI = [{"role": "user", "content": "Hi"}]


def strict_config(strict: bool | None) -> dict[str, Any]:
    config: dict[str, Any] = {
        "models": MODELS,
        "azure_deployments": {"gpt-test": "gpt-test"},
        "scenarios": [{"id": "s", "responses": [{"text": "first"}, {"text": "second"}]}],
    }
    if strict is not None:
        config["strict_requests"] = strict
    return config


def send_chat(**kwargs: Any) -> Callable[[SessionClient], str]:
    kwargs.setdefault("model", "gpt-test")
    kwargs.setdefault("messages", HI)

    def send(session: SessionClient) -> str:
        client = session.openai_client(_strict_response_validation=True, max_retries=0)
        return str(client.chat.completions.create(**kwargs).choices[0].message.content)

    return send


def send_azure_chat(**kwargs: Any) -> Callable[[SessionClient], str]:
    def send(session: SessionClient) -> str:
        client = session.azure_openai_client(_strict_response_validation=True, max_retries=0)
        return str(client.chat.completions.create(model="gpt-test", **kwargs).choices[0].message.content)

    return send


def send_responses(**kwargs: Any) -> Callable[[SessionClient], str]:
    kwargs.setdefault("model", "gpt-test")

    def send(session: SessionClient) -> str:
        client = session.openai_client(_strict_response_validation=True, max_retries=0)
        return str(client.responses.create(**kwargs).output_text)

    return send


def send_messages(**kwargs: Any) -> Callable[[SessionClient], str]:
    kwargs.setdefault("model", "claude-test-1")
    kwargs.setdefault("max_tokens", 256)
    kwargs.setdefault("messages", HI)

    def send(session: SessionClient) -> str:
        client = session.anthropic_client(_strict_response_validation=True, max_retries=0)
        message = client.messages.create(**kwargs)
        return "".join(block.text for block in message.content if block.type == "text")

    return send


def send_gemini(contents: list[types.Content], *, stream: bool = False) -> Callable[[SessionClient], str]:
    def send(session: SessionClient) -> str:
        client = session.gemini_client()  # kept: the client closes its connection pool when collected
        if stream:
            chunks = client.models.generate_content_stream(model="gemini-test", contents=contents)
            return "".join(chunk.text or "" for chunk in chunks)
        return str(client.models.generate_content(model="gemini-test", contents=contents).text)

    return send


def send_gemini_config(**config: Any) -> Callable[[SessionClient], str]:
    def send(session: SessionClient) -> str:
        client = session.gemini_client()
        answer = client.models.generate_content(
            model="gemini-test", contents="Hi", config=types.GenerateContentConfig(**config)
        )
        return str(answer.text)

    return send


def send_chat_stream(**kwargs: Any) -> Callable[[SessionClient], str]:
    def send(session: SessionClient) -> str:
        client = session.openai_client(_strict_response_validation=True, max_retries=0)
        chunks = client.chat.completions.create(model="gpt-test", stream=True, **kwargs)
        return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)

    return send


def send_messages_stream(**kwargs: Any) -> Callable[[SessionClient], str]:
    def send(session: SessionClient) -> str:
        client = session.anthropic_client(_strict_response_validation=True, max_retries=0)
        with client.messages.stream(model="claude-test-1", max_tokens=4096, **kwargs) as stream:
            return str(stream.get_final_text())

    return send


def tool_call(call_id: str, name: str = "get_weather") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": '{"city":"Paris"}'}}


def tool_use(tool_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": "get_weather", "input": {"city": "Paris"}}


def tool_result(tool_id: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": "sunny"}


def gemini_user(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def fn_call(name: str) -> types.Part:
    return types.Part(function_call=types.FunctionCall(name=name, args={"city": "Paris"}))


def fn_response(name: str) -> types.Part:
    return types.Part(function_response=types.FunctionResponse(name=name, response={"result": "sunny"}))


def send_cohere(messages: list[dict[str, Any]], **kwargs: Any) -> Callable[[SessionClient], str]:
    def send(session: SessionClient) -> str:
        client = session.cohere_client(max_retries=0)
        content = client.chat(model=COHERE, messages=messages, **kwargs).message.content
        return "".join(getattr(block, "text", "") for block in content or ())

    return send


def boto_client(session: SessionClient) -> Any:
    return session.bedrock_client(config=botocore.config.Config(retries={"total_max_attempts": 1}))


def send_converse(*, stream: bool = False, **kwargs: Any) -> Callable[[SessionClient], str]:
    def send(session: SessionClient) -> str:
        client = boto_client(session)
        if stream:
            events = client.converse_stream(modelId=BEDROCK, **kwargs)["stream"]
            return "".join(
                e["contentBlockDelta"]["delta"].get("text", "") for e in events if "contentBlockDelta" in e
            )
        content = client.converse(modelId=BEDROCK, **kwargs)["output"]["message"]["content"]
        return "".join(block.get("text", "") for block in content)

    return send


def send_invoke(**fields: Any) -> Callable[[SessionClient], str]:
    body = {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 4096, "messages": HI, **fields}

    def send(session: SessionClient) -> str:
        answer = orjson.loads(
            boto_client(session).invoke_model(modelId=BEDROCK, body=orjson.dumps(body))["body"].read()
        )
        return "".join(block.get("text", "") for block in answer["content"])

    return send


def text_content(text: str) -> list[dict[str, str]]:
    return [{"text": text}]


@dataclass(frozen=True)
class Case:
    rule: str
    send: Callable[[SessionClient], str]
    sdk: str  # openai | anthropic | gemini | cohere | bedrock
    error_type: str  # OpenAI/Anthropic ``type``, Gemini ``status``, the cohere exception, the AWS code
    param: str | None = None
    code: str | None = None  # the provider's code when it has one; else the rule's name


THINKING = {"type": "enabled", "budget_tokens": 1024}
