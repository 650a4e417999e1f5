"""OpenAI Chat Completions request -> ``NeutralRequest``.

Lenient where the SDKs add fields (unknown keys are ignored), strict where a real API would answer 400
(wrong types, missing ``model``/``messages``, unknown roles). Errors name the offending ``param``.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import orjson

from llmts.errors import InvalidRequest
from llmts.providers.base import ProviderCall
from llmts.providers.chat_completions.ranges import MAX_N, N_BOUND, openai_range_violation
from llmts.providers.chat_completions.token_count import chat_exact_tokens
from llmts.providers.strict import OutOfRange
from llmts.schema.fixtures import LIMITS
from llmts.schema.neutral import (
    NeutralMessage,
    NeutralRequest,
    NeutralToolCall,
    ToolChoice,
    build,
    neutral_message,
    reasoning_settings,
)
from llmts.schema.wire_values import one_of

__all__ = ["MAX_CHOICES", "chat_request_from_body", "parse_chat_request"]

# Most choices one request may ask for (``n``); each takes a scripted response (docs/providers.md).
MAX_CHOICES = LIMITS["choices_per_request"]

_ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
_TOOL_CHOICE_MODES = frozenset({"auto", "none", "required"})
_AUTO = ToolChoice()
_CHOICE_NONE = ToolChoice(mode="none")
_CHOICE_REQUIRED = ToolChoice(mode="required")


def _bad(message: str, param: str, code: str = "invalid_value") -> InvalidRequest:
    return InvalidRequest(message, code=code, param=param)


def _content_text(content: Any, param: str) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list):
        parts = []
        for index, part in enumerate(content):
            if not isinstance(part, dict) or not isinstance(part.get("type"), str):
                raise _bad(
                    "each content part must be an object with a type", f"{param}[{index}]", "invalid_type"
                )
            if part["type"] in ("text", "input_text"):
                text = part.get("text")
                if not isinstance(text, str):
                    raise _bad("a text part needs a string text", f"{param}[{index}].text", "invalid_type")
                parts.append(text)
        return "".join(parts)
    raise _bad("content must be a string, an array of parts, or null", param, "invalid_type")


def _tool_calls(raw: Any, param: str) -> tuple[NeutralToolCall, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise _bad("tool_calls must be an array", param, "invalid_type")
    calls = []
    for index, call in enumerate(raw):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise _bad("a tool call needs function.name", f"{param}[{index}].function.name", "invalid_type")
        arguments = function.get("arguments", "")
        calls.append(
            build(
                NeutralToolCall,
                id=str(call.get("id", "")),
                name=function["name"],
                arguments=arguments if isinstance(arguments, str) else orjson.dumps(arguments).decode(),
                arguments_chunks=(),
            )
        )
    return tuple(calls)


def _messages(raw: Any) -> tuple[NeutralMessage, ...]:
    if not isinstance(raw, list) or not raw:
        raise _bad("messages must be a non-empty array", "messages", "invalid_type")
    messages = []
    for index, message in enumerate(raw):
        param = f"messages[{index}]"
        if not isinstance(message, dict):
            raise _bad("each message must be an object", param, "invalid_type")
        role = message.get("role")
        if not one_of(role, _ROLES):
            raise _bad(
                f"role must be one of system, developer, user, assistant, tool (got {role!r})",
                f"{param}.role",
            )
        tool_call_id = message.get("tool_call_id")
        if role == "tool" and not isinstance(tool_call_id, str):
            raise _bad(
                "a tool message needs tool_call_id", f"{param}.tool_call_id", "missing_required_parameter"
            )
        if role == "function":  # the deprecated function-calling role carries a result like a tool message
            role = "tool"
        messages.append(
            neutral_message(
                role=role,
                text=_content_text(message.get("content"), f"{param}.content"),
                tool_calls=_tool_calls(message.get("tool_calls"), f"{param}.tool_calls")
                if role == "assistant"
                else (),
                tool_call_id=tool_call_id if isinstance(tool_call_id, str) else None,
            )
        )
    return tuple(messages)


def _tools(raw: Any, refused_types: Collection[str]) -> tuple[tuple[str, ...], str]:
    if raw is None:
        return (), ""
    if not isinstance(raw, list):
        raise _bad("tools must be an array", "tools", "invalid_type")
    names = []
    for index, tool in enumerate(raw):
        if not isinstance(tool, dict):
            raise _bad("each tool must be an object", f"tools[{index}]", "invalid_type")
        if one_of(tool.get("type"), refused_types):
            raise _bad(
                f"{tool['type']} is a Responses API tool; Chat Completions accepts function tools only",
                f"tools[{index}].type",
            )
        kind = tool.get("type", "function")
        spec = (
            tool.get("function") if kind == "function" else tool.get(kind) if isinstance(kind, str) else None
        )
        name = spec.get("name") if isinstance(spec, dict) else None
        if not isinstance(name, str) or not name:
            raise _bad(
                "each tool needs a name", f"tools[{index}].function.name", "missing_required_parameter"
            )
        names.append(name)
    return tuple(names), orjson.dumps(raw).decode()


def _tool_choice(raw: Any) -> ToolChoice:
    if raw is None:
        return _AUTO
    if isinstance(raw, str):
        if raw not in _TOOL_CHOICE_MODES:
            raise _bad("tool_choice must be auto, none, required or a named function", "tool_choice")
        return _AUTO if raw == "auto" else _CHOICE_NONE if raw == "none" else _CHOICE_REQUIRED
    if isinstance(raw, dict):
        kind = raw.get("type")
        if kind == "function":
            function = raw.get("function")
            name = function.get("name") if isinstance(function, dict) else None
            if not isinstance(name, str):
                raise _bad("tool_choice.function.name is required", "tool_choice.function.name")
            return build(ToolChoice, mode="function", name=name)
        if kind == "allowed_tools":
            mode = (raw.get("allowed_tools") or {}).get("mode", "auto")
            return _CHOICE_REQUIRED if mode == "required" else _AUTO
    raise _bad("tool_choice must be auto, none, required or a named function", "tool_choice")


def _response_format(raw: Any) -> str:
    if raw is None:
        return "text"
    kind = raw.get("type") if isinstance(raw, dict) else None
    if kind == "json_schema":
        schema = raw.get("json_schema")
        if not isinstance(schema, dict) or not isinstance(schema.get("name"), str):
            raise _bad("response_format.json_schema.name is required", "response_format.json_schema")
        return "json_schema"
    if kind in ("text", "json_object"):
        return str(kind)
    raise _bad("response_format.type must be text, json_object or json_schema", "response_format.type")


def parse_chat_request(
    call: ProviderCall, *, provider: str = "openai", refused_tool_types: Collection[str] = ()
) -> NeutralRequest:
    return chat_request_from_body(
        call.request.json_object(), provider=provider, refused_tool_types=refused_tool_types
    )


def chat_request_from_body(
    body: dict[str, Any],
    *,
    provider: str = "openai",
    model: str | None = None,
    refused_tool_types: Collection[str] = (),
) -> NeutralRequest:
    """``model`` overrides the body's (Azure deployment routes name the model in the path);
    ``refused_tool_types`` are tool types the provider serves on another API (OpenAI's Responses tools)."""
    named: object = body.get("model") if model is None else model  # any JSON value until checked
    if not isinstance(named, str) or not named:
        raise _bad("you must provide a model parameter", "model", "missing_required_parameter")
    model = named
    stream = body.get("stream", False)
    if not isinstance(stream, bool) and stream is not None:
        raise _bad("stream must be a boolean", "stream", "invalid_type")
    stream_options = body.get("stream_options")
    if stream_options is not None:
        if not stream:
            raise _bad("stream_options is only allowed when stream is true", "stream_options")
        if not isinstance(stream_options, dict):
            raise _bad("stream_options must be an object", "stream_options", "invalid_type")
    n = body.get("n")
    if n is None:
        n = 1
    elif isinstance(n, bool) or not isinstance(n, int):
        raise _bad("Invalid type for 'n': expected an integer.", "n", "invalid_type")
    elif not 1 <= n <= MAX_N:  # the API's own range and wording, whatever ``strict_requests`` says
        found = openai_range_violation(OutOfRange(N_BOUND, n, n > MAX_N))
        raise _bad(found.message, "n", found.code or "invalid_value")
    elif n > MAX_CHOICES:
        raise _bad(f"n must be an integer from 1 to {MAX_CHOICES} (llmts' limit)", "n", "invalid_value")
    tool_names, tools_text = _tools(body.get("tools"), refused_tool_types)
    messages = _messages(body.get("messages"))
    return build(
        NeutralRequest,
        provider=provider,
        operation="chat.completions",
        model=model,
        messages=messages,
        tool_names=tool_names,
        tool_choice=_tool_choice(body.get("tool_choice")),
        response_format=_response_format(body.get("response_format")),
        stream=bool(stream),
        preamble=tools_text,
        system="",
        cache_mode="implicit",
        cache_breakpoints=(),
        reasoning_settings=reasoning_settings({"effort": body.get("reasoning_effort")})
        if body.get("reasoning_effort") is not None
        else None,
        stream_include_usage=bool(stream_options and stream_options.get("include_usage")),
        choices=n,
        exact_tokens=chat_exact_tokens(model, body["messages"], messages, body.get("tools")),
    )
