"""OpenAI Responses create request -> ``ResponsesRequest`` (docs/providers.md).

``input`` (a string or items: messages, ``function_call``, ``function_call_output``), ``instructions`` (a
system message in front, not carried over by ``previous_response_id``, as on the real API), function
``tools`` (name at the top level), ``tool_choice``, ``text.format`` and ``previous_response_id`` (the stored
history restored in front of the new input). Lenient about fields SDKs add; 400 naming ``param`` for
wrong types, as the real API does.
"""

from __future__ import annotations

from typing import Any

import orjson
from pydantic import Field

from llmts.errors import InvalidRequest
from llmts.providers.base import ProviderCall
from llmts.providers.chat_completions.media_tokens import content_media_tokens
from llmts.providers.chat_completions.token_count import exact_tokens
from llmts.providers.openai.native_parse import NATIVE_CHOICES, NATIVE_INPUT_TYPES, parse_native
from llmts.providers.openai.responses_store import load_stored
from llmts.schema.native import NativeRequest
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

__all__ = ["ResponsesRequest", "parse_responses_body"]

_AUTO = ToolChoice()
_CHOICE_NONE = ToolChoice(mode="none")
_CHOICE_REQUIRED = ToolChoice(mode="required")
_MESSAGE_ROLES = frozenset({"user", "assistant", "system", "developer"})
_TEXT_PARTS = frozenset({"input_text", "output_text", "text"})
# Input items that carry nothing a scripted model reads; accepted so users can pass ``response.output`` back.
_IGNORED_ITEMS = frozenset({"reasoning", "item_reference"})
_TEXT_FORMAT = {"type": "text"}
_NO_REASONING = {"effort": None, "summary": None}


class ResponsesRequest(NeutralRequest):
    """The neutral request plus what the Response object echoes and what storing it needs."""

    # Request fields the Response object echoes (tools, tool_choice, text, temperature...).
    echo: dict[str, Any] = Field(default_factory=dict)
    instructions: str | None = None
    store: bool = True
    previous_response_id: str | None = None
    # ``messages[history_start:]`` is the conversation a later ``previous_response_id`` restores
    # (the instructions message in front of it is not carried over).
    history_start: int = 0
    # This request's own input as wire items without ids (``GET /responses/{id}/input_items``).
    input_items: tuple[dict[str, Any], ...] = ()
    # Native tools (web_search, file_search, code_interpreter): declarations, named choice, include.
    native: NativeRequest | None = None


def _bad(message: str, param: str, code: str = "invalid_value") -> InvalidRequest:
    return InvalidRequest(message, code=code, param=param)


def _message(
    role: str, text: str, calls: tuple[NeutralToolCall, ...] = (), call_id: str | None = None
) -> Any:
    return neutral_message(role=role, text=text, tool_calls=calls, tool_call_id=call_id)


def _parts_text(content: Any, param: str) -> str:
    """The text of a string or a list of content parts; non-text parts (images, files) add nothing."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise _bad("content must be a string or an array of content parts", param, "invalid_type")
    texts = []
    for index, part in enumerate(content):
        if not isinstance(part, dict) or not isinstance(part.get("type"), str):
            raise _bad("each content part must be an object with a type", f"{param}[{index}]", "invalid_type")
        if part["type"] in _TEXT_PARTS:
            text = part.get("text")
            if not isinstance(text, str):
                raise _bad("a text part needs a string text", f"{param}[{index}].text", "invalid_type")
            texts.append(text)
    return "".join(texts)


def _wire_content(role: str, content: Any, text: str) -> list[Any]:
    """Content parts as ``input_items`` lists them: input parts for user/system, output_text for assistant."""
    if role == "assistant":
        return [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}]
    if isinstance(content, str):
        return [{"type": "input_text", "text": content}]
    return [
        {"type": "input_text", "text": part["text"]} if part["type"] in _TEXT_PARTS else part
        for part in content
    ]


def _string_field(item: dict[str, Any], key: str, param: str) -> str:
    value = item.get(key)
    if not isinstance(value, str):
        raise _bad(f"{key} must be a string", f"{param}.{key}", "missing_required_parameter")
    return value


def _input(raw: Any, keep_items: bool, media: list[int]) -> tuple[list[NeutralMessage], list[dict[str, Any]]]:
    """The messages and the items to keep; ``media`` gets each message's image and audio tokens."""
    if isinstance(raw, str):
        item: dict[str, Any] = {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": raw}],
        }
        media.append(0)
        return [_message("user", raw)], [item] if keep_items else []
    if raw is None:
        return [], []
    if not isinstance(raw, list):
        raise _bad("input must be a string or an array of input items", "input", "invalid_type")
    messages: list[NeutralMessage] = []
    items: list[dict[str, Any]] = []
    # Consecutive function_call items join the assistant turn before them (parallel calls).
    open_assistant = False
    for index, item in enumerate(raw):
        param = f"input[{index}]"
        if not isinstance(item, dict):
            raise _bad("each input item must be an object", param, "invalid_type")
        kind = item.get("type", "message" if "role" in item else None)
        if kind == "message":
            role = item.get("role")
            if not one_of(role, _MESSAGE_ROLES):
                raise _bad(
                    f"role must be one of user, assistant, system, developer (got {role!r})", f"{param}.role"
                )
            content = item.get("content")
            text = _parts_text(content, f"{param}.content")
            messages.append(_message(role, text))
            media.append(content_media_tokens(content))
            open_assistant = role == "assistant"
            if keep_items:
                items.append({"type": "message", "role": role, "content": _wire_content(role, content, text)})
        elif kind == "function_call":
            call_id = _string_field(item, "call_id", param)
            name = _string_field(item, "name", param)
            arguments = _string_field(item, "arguments", param)
            call = build(NeutralToolCall, id=call_id, name=name, arguments=arguments, arguments_chunks=())
            if open_assistant:
                last = messages[-1]
                messages[-1] = _message("assistant", last.text, (*last.tool_calls, call))
            else:
                messages.append(_message("assistant", "", (call,)))
                media.append(0)
                open_assistant = True
            if keep_items:
                wire: dict[str, Any] = {
                    "type": "function_call",
                    "call_id": call_id,
                    "name": name,
                    "arguments": arguments,
                }
                if isinstance(item.get("id"), str):
                    wire["id"] = item["id"]
                items.append(wire)
        elif kind == "function_call_output":
            call_id = _string_field(item, "call_id", param)
            output = item.get("output")
            text = _parts_text(output, f"{param}.output")
            messages.append(_message("tool", text, (), call_id))
            media.append(content_media_tokens(output))
            open_assistant = False
            if keep_items:
                items.append({"type": "function_call_output", "call_id": call_id, "output": output})
        elif one_of(
            kind, NATIVE_INPUT_TYPES
        ):  # a prior native call keeps its kind (validated by parse_native)
            if keep_items:
                items.append(dict(item))
        elif one_of(kind, _IGNORED_ITEMS):
            continue
        else:
            raise _bad(
                "llmts accepts input items of type message, function_call, function_call_output, "
                "web_search_call, file_search_call, code_interpreter_call, "
                f"reasoning and item_reference (got {kind!r})",
                f"{param}.type",
            )
    return messages, items


def _tools(raw: Any) -> tuple[tuple[str, ...], str]:
    if raw is None:
        return (), ""
    if not isinstance(raw, list):
        raise _bad("tools must be an array", "tools", "invalid_type")
    names = []
    for index, tool in enumerate(raw):
        if not isinstance(tool, dict) or not isinstance(tool.get("type"), str):
            raise _bad("each tool must be an object with a type", f"tools[{index}]", "invalid_type")
        if tool["type"] != "function":  # hosted tools (web_search, file_search...) are accepted, never called
            continue
        name = tool.get("name")
        if not isinstance(name, str) or not name:
            raise _bad("a function tool needs a name", f"tools[{index}].name", "missing_required_parameter")
        names.append(name)
    return tuple(names), orjson.dumps(raw).decode() if raw else ""


def _echoed_tools(raw: Any) -> list[Any]:
    """The tools as the Response object echoes them: a function tool always carries ``description``,
    ``parameters`` and ``strict`` (which defaults to true on the Responses API), as the real API sends."""
    if not raw:
        return []
    return [
        {
            **tool,
            "description": tool.get("description"),
            "parameters": tool.get("parameters"),
            "strict": True if tool.get("strict") is None else tool["strict"],
        }
        if tool.get("type") == "function"
        else tool
        for tool in raw
    ]


def _tool_choice(raw: Any) -> ToolChoice:
    if raw is None or raw == "auto":
        return _AUTO
    if raw == "none":
        return _CHOICE_NONE
    if raw == "required":
        return _CHOICE_REQUIRED
    if isinstance(raw, dict) and isinstance(raw.get("type"), str):
        kind = raw["type"]
        if kind == "function":
            name = raw.get("name")
            if not isinstance(name, str) or not name:
                raise _bad("tool_choice.name is required for a function", "tool_choice.name")
            return build(ToolChoice, mode="function", name=name)
        if kind == "allowed_tools":
            return _CHOICE_REQUIRED if raw.get("mode") == "required" else _AUTO
        if one_of(kind, NATIVE_CHOICES):  # a named native tool must be called (checked against the fixture)
            return _CHOICE_REQUIRED
        return _AUTO  # a hosted tool: the scripted answer decides
    raise _bad("tool_choice must be auto, none, required or a tool object", "tool_choice")


def _text(raw: Any) -> tuple[str, dict[str, Any]]:
    """(neutral response format, the ``text`` object the response echoes)."""
    if raw is None:
        return "text", {"format": _TEXT_FORMAT}
    if not isinstance(raw, dict):
        raise _bad("text must be an object", "text", "invalid_type")
    fmt = raw.get("format")
    if fmt is None:
        return "text", {**raw, "format": _TEXT_FORMAT}
    kind = fmt.get("type") if isinstance(fmt, dict) else None
    if kind == "json_schema":
        if not isinstance(fmt.get("name"), str) or not fmt["name"]:
            raise _bad("text.format.name is required", "text.format.name", "missing_required_parameter")
        if not isinstance(fmt.get("schema"), dict):
            raise _bad("text.format.schema is required", "text.format.schema", "missing_required_parameter")
    elif kind not in ("text", "json_object"):
        raise _bad("text.format.type must be text, json_object or json_schema", "text.format.type")
    return str(kind), raw


def _optional(body: dict[str, Any], key: str, types: type | tuple[type, ...], default: Any) -> Any:
    value = body.get(key)
    if value is None:
        return default
    allowed = types if isinstance(types, tuple) else (types,)
    # bool is an int to isinstance, not to the API
    if not isinstance(value, allowed) or (isinstance(value, bool) and bool not in allowed):
        raise _bad(f"{key} has the wrong type", key, "invalid_type")
    return value


def parse_responses_body(
    call: ProviderCall, body: dict[str, Any], *, provider: str, model: str, store_namespace: str
) -> ResponsesRequest:
    """``model`` is already resolved (Azure deployments); history comes from ``store_namespace``."""
    stream = _optional(body, "stream", bool, False)
    store = _optional(body, "store", bool, True)
    instructions = _optional(body, "instructions", str, None)
    previous_id = _optional(body, "previous_response_id", str, None)
    media: list[int] = []
    new_messages, items = _input(body.get("input"), store, media)
    history: tuple[NeutralMessage, ...] = ()
    if previous_id is not None:
        history = load_stored(call.session, store_namespace, previous_id, "previous_response_id").history
    if not new_messages and not history:
        raise _bad("Missing required parameter: 'input'.", "input", "missing_required_parameter")
    head = (_message("system", instructions),) if instructions else ()
    tool_names, preamble = _tools(body.get("tools"))
    response_format, text = _text(body.get("text"))
    raw_choice = body.get("tool_choice")
    echo = {
        "tools": _echoed_tools(body.get("tools")),
        "tool_choice": raw_choice if raw_choice is not None else "auto",
        "text": text,
        "parallel_tool_calls": _optional(body, "parallel_tool_calls", bool, True),
        "temperature": _optional(body, "temperature", (int, float), 1.0),
        "top_p": _optional(body, "top_p", (int, float), 1.0),
        "max_output_tokens": _optional(body, "max_output_tokens", int, None),
        "max_tool_calls": _optional(body, "max_tool_calls", int, None),
        "metadata": _optional(body, "metadata", dict, {}),
        "reasoning": _optional(body, "reasoning", dict, _NO_REASONING),
        "truncation": _optional(body, "truncation", str, "disabled"),
        "user": _optional(body, "user", str, None),
        "prompt_cache_key": _optional(body, "prompt_cache_key", str, None),
        "safety_identifier": _optional(body, "safety_identifier", str, None),
    }
    messages = (*head, *history, *new_messages)
    return build(
        ResponsesRequest,
        provider=provider,
        operation="responses",
        model=model,
        messages=messages,
        tool_names=tool_names,
        tool_choice=_tool_choice(raw_choice),
        response_format=response_format,
        stream=stream,
        stream_include_usage=False,
        preamble=preamble,
        system="",
        cache_mode="implicit",
        cache_breakpoints=(),
        choices=1,
        reasoning_settings=reasoning_settings(body.get("reasoning")),
        echo=echo,
        instructions=instructions,
        store=store,
        previous_response_id=previous_id,
        history_start=len(head),
        input_items=tuple(items),
        native=parse_native(body, call.request.body, model, call.strict_requests),
        exact_tokens=exact_tokens(
            model, messages, body.get("tools"), [0] * (len(head) + len(history)) + media
        ),
    )
