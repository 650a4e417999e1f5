"""Anthropic Messages request -> ``NeutralRequest`` (docs/providers.md).

Lenient where the SDKs add fields (unknown keys and block types are ignored), strict where the real API
answers 400 (wrong types, missing ``model``/``messages``/``max_tokens``, unknown roles). Messages name the
offending field the way the API does (``messages.0.content.1.text: ...``).

Mapping:

* ``system`` (string or text blocks) and ``tools`` become the preamble (prompt-cache segment 0);
* a user message's ``tool_result`` blocks become ``tool`` messages (``tool_call_id`` = ``tool_use_id``),
  followed by a ``user`` message with its text when it has any;
* an assistant message's ``tool_use`` blocks become its ``tool_calls`` (arguments = compact JSON);
* ``cache_control`` markers become explicit cache breakpoints (segment 0 = preamble, 1 + i =
  ``messages[i]`` of the neutral request); the top-level ``cache_control`` marks the last segment.
"""

from __future__ import annotations

from dataclasses import dataclass
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

__all__ = [
    "MAX_CACHE_BREAKPOINTS",
    "OPERATION",
    "WARMUP_OPERATION",
    "Prompt",
    "parse_messages_request",
    "parse_prompt",
]

OPERATION = "messages"
# ``max_tokens: 0``: the request only writes/reads the prompt cache (answered by the route's shortcut).
WARMUP_OPERATION = "messages.cache_warmup"
# The API rejects more cache_control markers than this in one request.
MAX_CACHE_BREAKPOINTS = 4

_AUTO = ToolChoice()
_CHOICE_NONE = ToolChoice(mode="none")
_CHOICE_REQUIRED = ToolChoice(mode="required")
_NO_CALLS: tuple[NeutralToolCall, ...] = ()


def _bad(param: str, message: str, code: str = "invalid_value") -> InvalidRequest:
    # The API prefixes the field path to the message; ``param`` keeps it machine-readable too.
    return InvalidRequest(f"{param}: {message}" if param else message, code=code, param=param or None)


def _missing(param: str) -> InvalidRequest:
    return _bad(param, "Field required", "missing_required_parameter")


def _user(text: str) -> NeutralMessage:
    return neutral_message(role="user", text=text, tool_calls=_NO_CALLS, tool_call_id=None)


@dataclass(slots=True)
class _Markers:
    """The cache breakpoints found so far and how many ``cache_control`` markers set them."""

    segments: set[int]
    count: int = 0

    def check(self, value: Any, param: str) -> bool:
        """Is ``value`` (a ``cache_control`` field) a marker? Validates its shape."""
        if not isinstance(value, dict) or value.get("type") != "ephemeral":
            raise _bad(param, "Input should be an object with type 'ephemeral'", "invalid_type")
        ttl = value.get("ttl")
        if ttl is not None and ttl not in ("5m", "1h"):
            raise _bad(f"{param}.ttl", "Input should be '5m' or '1h'")
        self.count += 1
        return True

    def found(self, holder: dict[str, Any], param: str) -> bool:
        """Does ``holder`` (a block, message or tool) carry a ``cache_control`` marker?"""
        value = holder.get("cache_control")
        return value is not None and self.check(value, f"{param}.cache_control")


def _block_list(content: Any, param: str) -> list[dict[str, Any]]:
    if not isinstance(content, list):
        raise _bad(param, "Input should be a valid list", "invalid_type")
    for index, block in enumerate(content):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise _bad(f"{param}.{index}", "Input should be an object with a string type", "invalid_type")
    return content


def _text_of(block: dict[str, Any], param: str) -> str:
    text = block.get("text")
    if not isinstance(text, str):
        raise _bad(f"{param}.text", "Input should be a valid string", "invalid_type")
    return text


def _tool_result_text(content: Any, param: str, markers: _Markers) -> tuple[str, bool]:
    """A tool_result's content (string, blocks or absent) as text, and whether an inner block is marked."""
    if content is None or isinstance(content, str):
        return content or "", False
    marked = False
    parts = []
    for index, block in enumerate(_block_list(content, param)):
        marked |= markers.found(block, f"{param}.{index}")
        if block["type"] == "text":
            parts.append(_text_of(block, f"{param}.{index}"))
    return "".join(parts), marked


def _tool_use(block: dict[str, Any], param: str) -> NeutralToolCall:
    call_id, name, arguments = block.get("id"), block.get("name"), block.get("input")
    if not isinstance(call_id, str) or not call_id:
        raise _missing(f"{param}.id")
    if not isinstance(name, str) or not name:
        raise _missing(f"{param}.name")
    if not isinstance(arguments, dict):
        raise _bad(f"{param}.input", "Input should be a valid dictionary", "invalid_type")
    return build(
        NeutralToolCall,
        id=call_id,
        name=name,
        arguments=orjson.dumps(arguments).decode(),
        arguments_chunks=(),
    )


def _append_message(out: list[NeutralMessage], message: Any, param: str, markers: _Markers) -> None:
    """Append the neutral messages of one wire message; record its cache breakpoints."""
    if not isinstance(message, dict):
        raise _bad(param, "Input should be a valid dictionary", "invalid_type")
    role = message.get("role")
    if role not in ("user", "assistant"):
        raise _bad(f"{param}.role", "Input should be 'user' or 'assistant'")
    # A marker on the message itself or on one of its blocks ends a cache prefix after this message.
    marked = markers.found(message, param)
    content = message.get("content")
    if content is None:
        raise _missing(f"{param}.content")
    if isinstance(content, str):
        out.append(
            _user(content)
            if role == "user"
            else neutral_message(role="assistant", text=content, tool_calls=_NO_CALLS, tool_call_id=None)
        )
        if marked:
            markers.segments.add(len(out))
        return
    texts: list[str] = []
    calls: list[NeutralToolCall] = []
    tool_results = 0
    blocks_param = f"{param}.content"
    for index, block in enumerate(_block_list(content, blocks_param)):
        block_param = f"{blocks_param}.{index}"
        block_marked = markers.found(block, block_param)
        kind = block["type"]
        if kind == "text":
            texts.append(_text_of(block, block_param))
        elif kind == "tool_use":
            if role != "assistant":
                raise _bad(f"{block_param}.type", "tool_use blocks are only allowed in assistant messages")
            calls.append(_tool_use(block, block_param))
        elif kind == "tool_result":
            if role != "user":
                raise _bad(f"{block_param}.type", "tool_result blocks are only allowed in user messages")
            tool_use_id = block.get("tool_use_id")
            if not isinstance(tool_use_id, str) or not tool_use_id:
                raise _missing(f"{block_param}.tool_use_id")
            text, inner_marked = _tool_result_text(block.get("content"), f"{block_param}.content", markers)
            out.append(
                neutral_message(role="tool", text=text, tool_calls=_NO_CALLS, tool_call_id=tool_use_id)
            )
            tool_results += 1
            if block_marked or inner_marked:
                markers.segments.add(len(out))
            continue
        # Other blocks (image, document, thinking, ...) carry no text llmts matches on. A marker on any
        # block but a tool_result ends the prefix after this message's last neutral message.
        marked |= block_marked
    if role == "assistant":
        out.append(
            neutral_message(
                role="assistant",
                text="".join(texts),
                tool_calls=tuple(calls),
                tool_call_id=None,
            )
        )
    elif texts or not tool_results:  # a message of tool results alone adds no user turn
        out.append(_user("".join(texts)))
    if marked:
        markers.segments.add(len(out))


def _system(raw: Any, markers: _Markers) -> str:
    if raw is None or isinstance(raw, str):
        return raw or ""
    parts = []
    for index, block in enumerate(_block_list(raw, "system")):
        param = f"system.{index}"
        if block["type"] != "text":
            raise _bad(f"{param}.type", "Input should be 'text'")
        if markers.found(block, param):
            markers.segments.add(0)
        parts.append(_text_of(block, param))
    return "\n".join(parts)


def _tools(raw: Any, markers: _Markers) -> tuple[tuple[str, ...], str]:
    if raw is None:
        return (), ""
    if not isinstance(raw, list):
        raise _bad("tools", "Input should be a valid list", "invalid_type")
    names = []
    declared: list[Any] = []
    for index, tool in enumerate(raw):
        if not isinstance(tool, dict):
            raise _bad(f"tools.{index}", "Input should be a valid dictionary", "invalid_type")
        name = tool.get("name")
        if not isinstance(name, str) or not name:
            raise _missing(f"tools.{index}.name")
        names.append(name)
        if markers.found(tool, f"tools.{index}"):
            markers.segments.add(0)
            # The marker is not part of the prompt: moving it must not change the cached prefix.
            tool = {key: value for key, value in tool.items() if key != "cache_control"}
        declared.append(tool)
    return tuple(names), orjson.dumps(declared).decode() if declared else ""


def _tool_choice(raw: Any) -> ToolChoice:
    if raw is None:
        return _AUTO
    kind = raw.get("type") if isinstance(raw, dict) else None
    if kind == "auto":
        return _AUTO
    if kind == "any":
        return _CHOICE_REQUIRED
    if kind == "none":
        return _CHOICE_NONE
    if kind == "tool":
        name = raw.get("name")
        if not isinstance(name, str) or not name:
            raise _missing("tool_choice.name")
        return build(ToolChoice, mode="function", name=name)
    raise _bad("tool_choice", "Input should be an object with type 'auto', 'any', 'tool' or 'none'")


def _response_format(body: dict[str, Any]) -> ResponseFormat:
    config = body.get("output_config")
    if config is not None and not isinstance(config, dict):
        raise _bad("output_config", "Input should be a valid dictionary", "invalid_type")
    # ``output_config.format`` (GA) or the older beta ``output_format``.
    param = "output_config.format"
    output_format = config.get("format") if config else None
    if output_format is None:
        param, output_format = "output_format", body.get("output_format")
    if output_format is None:
        return "text"
    if not isinstance(output_format, dict) or output_format.get("type") != "json_schema":
        raise _bad(f"{param}.type", "Input should be 'json_schema'")
    if not isinstance(output_format.get("schema"), dict):
        raise _missing(f"{param}.schema")
    return "json_schema"


@dataclass(frozen=True, slots=True)
class Prompt:
    """The prompt part of a Messages or count_tokens body."""

    model: str
    messages: tuple[NeutralMessage, ...]
    preamble: str
    # The ``system`` text alone (``system_contains``); the preamble also carries the tools.
    system: str
    tool_names: tuple[str, ...]
    tool_choice: ToolChoice
    cache_breakpoints: tuple[int, ...]


def parse_prompt(body: dict[str, Any]) -> Prompt:
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _missing("model") if model is None else _bad("model", "Input should be a valid string")
    raw_messages = body.get("messages")
    if raw_messages is None:
        raise _missing("messages")
    if not isinstance(raw_messages, list):
        raise _bad("messages", "Input should be a valid list", "invalid_type")
    if not raw_messages:
        raise _bad("messages", "at least one message is required")
    markers = _Markers(set())
    tool_names, tools_text = _tools(body.get("tools"), markers)
    system = _system(body.get("system"), markers)
    messages: list[NeutralMessage] = []
    for index, message in enumerate(raw_messages):
        _append_message(messages, message, f"messages.{index}", markers)
    if body.get("cache_control") is not None and markers.check(body["cache_control"], "cache_control"):
        markers.segments.add(len(messages))  # automatic caching: the last cacheable block
    if markers.count > MAX_CACHE_BREAKPOINTS:
        raise _bad(
            "",
            f"A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. "
            f"Found {markers.count}.",
        )
    preamble = f"{tools_text}\n{system}" if tools_text and system else tools_text or system
    return Prompt(
        model=model,
        messages=tuple(messages),
        preamble=preamble,
        system=system,
        tool_names=tool_names,
        tool_choice=_tool_choice(body.get("tool_choice")),
        cache_breakpoints=tuple(sorted(markers.segments)),
    )


def parse_messages_request(call: ProviderCall, *, provider: str) -> NeutralRequest:
    """A Messages request of the route's ``provider`` namespace."""
    body = call.request.json_object()
    max_tokens = body.get("max_tokens")
    if max_tokens is None:
        raise _missing("max_tokens")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 0:
        raise _bad("max_tokens", "Input should be a non-negative integer", "invalid_type")
    stream = body.get("stream", False)
    if stream is not None and not isinstance(stream, bool):
        raise _bad("stream", "Input should be a valid boolean", "invalid_type")
    prompt = parse_prompt(body)
    return build(
        NeutralRequest,
        provider=provider,
        operation=OPERATION if max_tokens else WARMUP_OPERATION,
        model=prompt.model,
        messages=prompt.messages,
        tool_names=prompt.tool_names,
        tool_choice=prompt.tool_choice,
        response_format=_response_format(body),
        stream=bool(stream),
        stream_include_usage=False,
        preamble=prompt.preamble,
        system=prompt.system,
        cache_mode="explicit",
        cache_breakpoints=prompt.cache_breakpoints,
        choices=1,
        reasoning_settings=reasoning_settings(body.get("thinking")),
        exact_tokens=None,
    )
