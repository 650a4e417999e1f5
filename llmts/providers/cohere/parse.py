"""Cohere v2 chat request -> ``NeutralRequest`` (``POST /v2/chat``, docs/providers.md "Cohere").

Lenient where the SDK adds fields (unknown keys and content types are ignored), strict where the API
answers 400 (missing ``model``/``messages``, unknown roles, wrong types, unknown ``tool_choice`` or
``response_format`` types). Messages name the offending field (``messages[1].tool_call_id: ...``).

Mapping:

* ``system`` messages stay ``system`` messages (like OpenAI Chat), so ``system_contains`` reads them;
* an assistant message's ``tool_calls`` become its neutral tool calls (``function.arguments`` is already
  a JSON string); its ``tool_plan`` is not text the model said to the user and is not matched on;
* a ``tool`` message (``tool_call_id`` + string or content blocks) becomes a ``tool`` message whose text
  is the string, the text blocks, or the compact JSON of document blocks' ``data``;
* ``thinking`` (``{"type", "token_budget"}``) is kept in the journal's ``reasoning_settings``; an
  assistant message's ``thinking`` content blocks are not text and are not matched on;
* ``tools`` and ``documents`` form the preamble (input tokens and the implicit prompt cache's first
  segment).
"""

from __future__ import annotations

from typing import Any

import orjson

from llmts.errors import InvalidRequest
from llmts.providers.base import ProviderCall
from llmts.schema.neutral import (
    NeutralMessage,
    NeutralRequest,
    NeutralToolCall,
    ResponseFormat,
    ToolChoice,
    build,
    neutral_message,
    reasoning_settings,
)

__all__ = ["OPERATION", "parse_chat_request"]

OPERATION = "chat"

_AUTO = ToolChoice()
_CHOICES = {"REQUIRED": ToolChoice(mode="required"), "NONE": ToolChoice(mode="none")}
_NO_CALLS: tuple[NeutralToolCall, ...] = ()


def _bad(param: str, message: str) -> InvalidRequest:
    return InvalidRequest(f"{param}: {message}", code="invalid_request", param=param)


def _text(content: Any, param: str, *, documents: bool = False) -> str:
    """A message's content (a string or a list of blocks) as text; non-text blocks are skipped, except a
    tool result's documents, whose ``data`` is the result."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise _bad(param, "must be a string or a list of content blocks")
    parts: list[str] = []
    for index, block in enumerate(content):
        if not isinstance(block, dict):
            raise _bad(f"{param}[{index}]", "must be an object")
        kind = block.get("type")
        if kind == "text":
            text = block.get("text")
            if not isinstance(text, str):
                raise _bad(f"{param}[{index}].text", "must be a string")
            parts.append(text)
        elif kind == "document" and documents:
            document = block.get("document")
            data = document.get("data") if isinstance(document, dict) else None
            parts.append(orjson.dumps(data).decode() if data is not None else "")
    return "".join(parts)


def _tool_calls(raw: Any, param: str) -> tuple[NeutralToolCall, ...]:
    if raw is None:
        return _NO_CALLS
    if not isinstance(raw, list):
        raise _bad(param, "must be a list")
    calls = []
    for index, call in enumerate(raw):
        where = f"{param}[{index}]"
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            raise _bad(f"{where}.function", "is required")
        call_id, name, arguments = call.get("id"), function.get("name"), function.get("arguments")
        if not isinstance(call_id, str) or not call_id:
            raise _bad(f"{where}.id", "is required")
        if not isinstance(name, str) or not name:
            raise _bad(f"{where}.function.name", "is required")
        if arguments is not None and not isinstance(arguments, str):
            raise _bad(f"{where}.function.arguments", "must be a string")
        calls.append(
            build(NeutralToolCall, id=call_id, name=name, arguments=arguments or "{}", arguments_chunks=())
        )
    return tuple(calls)


def _message(raw: Any, param: str) -> NeutralMessage:
    if not isinstance(raw, dict):
        raise _bad(param, "must be an object")
    role = raw.get("role")
    content = raw.get("content")
    if role in ("user", "system"):
        if content is None:
            raise _bad(f"{param}.content", "is required")
        return neutral_message(role=role, text=_text(content, f"{param}.content"))
    if role == "assistant":
        text = "" if content is None else _text(content, f"{param}.content")
        calls = _tool_calls(raw.get("tool_calls"), f"{param}.tool_calls")
        return neutral_message(role="assistant", text=text, tool_calls=calls)
    if role == "tool":
        call_id = raw.get("tool_call_id")
        if not isinstance(call_id, str) or not call_id:
            raise _bad(f"{param}.tool_call_id", "is required")
        if content is None:
            raise _bad(f"{param}.content", "is required")
        text = _text(content, f"{param}.content", documents=True)
        return neutral_message(role="tool", text=text, tool_call_id=call_id)
    raise _bad(f"{param}.role", "must be one of 'user', 'assistant', 'system' or 'tool'")


def _tools(raw: Any) -> tuple[tuple[str, ...], str]:
    if raw is None:
        return (), ""
    if not isinstance(raw, list):
        raise _bad("tools", "must be a list")
    names = []
    for index, tool in enumerate(raw):
        function = tool.get("function") if isinstance(tool, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(name, str) or not name:
            raise _bad(f"tools[{index}].function.name", "is required")
        names.append(name)
    return tuple(names), orjson.dumps(raw).decode() if raw else ""


def _documents(raw: Any) -> str:
    if raw is None:
        return ""
    if not isinstance(raw, list):
        raise _bad("documents", "must be a list")
    for index, document in enumerate(raw):
        if not isinstance(document, (str, dict)):
            raise _bad(f"documents[{index}]", "must be a string or an object with data")
    return orjson.dumps(raw).decode() if raw else ""


def _tool_choice(raw: Any) -> ToolChoice:
    if raw is None:
        return _AUTO
    choice = _CHOICES.get(raw.upper()) if isinstance(raw, str) else None
    if choice is None:
        raise _bad("tool_choice", "must be one of 'REQUIRED' or 'NONE'")
    return choice


def _response_format(raw: Any) -> ResponseFormat:
    if raw is None:
        return "text"
    kind = raw.get("type") if isinstance(raw, dict) else None
    if kind == "text":
        return "text"
    if kind == "json_object":
        schema = raw.get("json_schema")
        if schema is None:
            return "json_object"
        if not isinstance(schema, dict):
            raise _bad("response_format.json_schema", "must be an object")
        return "json_schema"
    raise _bad("response_format.type", "must be one of 'text' or 'json_object'")


def parse_chat_request(call: ProviderCall) -> NeutralRequest:
    body = call.request.json_object()
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _bad("model", "is required")
    raw_messages = body.get("messages")
    if not isinstance(raw_messages, list) or not raw_messages:
        raise _bad("messages", "is required and must be a non-empty list")
    stream = body.get("stream", False)
    if stream is not None and not isinstance(stream, bool):
        raise _bad("stream", "must be a boolean")
    messages = tuple(_message(message, f"messages[{index}]") for index, message in enumerate(raw_messages))
    tool_names, tools_text = _tools(body.get("tools"))
    documents = _documents(body.get("documents"))
    preamble = f"{tools_text}\n{documents}" if tools_text and documents else tools_text or documents
    return build(
        NeutralRequest,
        provider="cohere",
        operation=OPERATION,
        model=model,
        messages=messages,
        tool_names=tool_names,
        tool_choice=_tool_choice(body.get("tool_choice")),
        response_format=_response_format(body.get("response_format")),
        stream=bool(stream),
        stream_include_usage=False,
        preamble=preamble,
        system="",
        cache_mode="implicit",
        cache_breakpoints=(),
        reasoning_settings=reasoning_settings(body.get("thinking")),
    )
