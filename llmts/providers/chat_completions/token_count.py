"""Exact input tokens of an OpenAI request, per prompt-cache segment (docs/tokens.md).

The chat format's overhead is OpenAI's cookbook rule ("How to count tokens with tiktoken"): each
message costs 3 tokens plus its role's and its content's, a ``name`` its own tokens plus 1, and every
request 3 for priming the reply. Tool definitions follow the cookbook's ``num_tokens_for_tools``
(an approximation: OpenAI publishes no rule). Images and audio: ``media_tokens``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import orjson

from llmts.providers.chat_completions.encodings import CL100K_BASE, encoding_for_model, text_counter
from llmts.providers.chat_completions.media_tokens import content_media_tokens
from llmts.schema.neutral import ExactTokens, NeutralMessage

__all__ = [
    "REPLY_PRIMING_TOKENS",
    "TOKENS_PER_MESSAGE",
    "TOKENS_PER_NAME",
    "chat_exact_tokens",
    "exact_tokens",
    "message_tokens",
    "tools_tokens",
]

TOKENS_PER_MESSAGE = 3
TOKENS_PER_NAME = 1
REPLY_PRIMING_TOKENS = 3

# num_tokens_for_tools' constants: each function's start (10 on cl100k_base models, 7 on o200k_base),
# the properties' start, each property, an enum's start and each of its items, and the list's end.
_FUNCTION_START = {CL100K_BASE: 10}
_FUNCTION_START_DEFAULT = 7
_PROPERTIES_START = 3
_PROPERTY = 3
_ENUM_START = -3
_ENUM_ITEM = 3
_FUNCTIONS_END = 12

Count = Callable[[str], int]


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return "" if value is None else orjson.dumps(value).decode()


def _without_period(text: str) -> str:
    return text[:-1] if text.endswith(".") else text


def _function_tokens(count: Count, function: dict[str, Any], start: int) -> int:
    total = start + count(
        f"{_text(function.get('name'))}:{_without_period(_text(function.get('description')))}"
    )
    parameters = function.get("parameters")
    properties = parameters.get("properties") if isinstance(parameters, dict) else None
    if not isinstance(properties, dict) or not properties:
        return total
    total += _PROPERTIES_START
    for key, spec in properties.items():
        total += _PROPERTY
        spec = spec if isinstance(spec, dict) else {}
        enum = spec.get("enum")
        if isinstance(enum, list):
            total += _ENUM_START + sum(_ENUM_ITEM + count(_text(item)) for item in enum)
        description = _without_period(_text(spec.get("description")))
        total += count(f"{key}:{_text(spec.get('type'))}:{description}")
    return total


def tools_tokens(count: Count, encoding: str, tools: Any) -> int:
    """The tokens of a ``tools`` list: function tools (Chat Completions' ``function`` object or the
    Responses API's top-level fields) by the cookbook's rule (its closing 12 tokens once, when there is
    a function), any other tool (a hosted one) by its compact JSON's tokens."""
    if not isinstance(tools, list) or not tools:
        return 0
    start = _FUNCTION_START.get(encoding, _FUNCTION_START_DEFAULT)
    total = 0
    functions = False
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        if tool.get("type", "function") == "function":
            function = tool.get("function")
            total += _function_tokens(count, function if isinstance(function, dict) else tool, start)
            functions = True
        else:
            total += count(_text(tool))
    return total + _FUNCTIONS_END if functions else total


def message_tokens(count: Count, message: NeutralMessage, role: str, name: Any = None, media: int = 0) -> int:
    """One message: the overhead, its role, its text, its tool calls' names and arguments (a call id is
    not counted), a ``name`` and its ``media`` tokens."""
    total = TOKENS_PER_MESSAGE + count(role) + count(message.text) + media
    for call in message.tool_calls:
        total += count(call.name) + count(call.arguments)
    if isinstance(name, str) and name:
        total += count(name) + TOKENS_PER_NAME
    return total


def exact_tokens(
    model: str, messages: Sequence[NeutralMessage], tools: Any, media: Sequence[int] = ()
) -> ExactTokens | None:
    """Exact counts of a request whose messages carry nothing but their role, text and calls (plus the
    ``media`` tokens of message i, when given); None for a model without a known encoding."""
    encoding = encoding_for_model(model)
    if encoding is None:
        return None
    count = text_counter(encoding)
    segments = [REPLY_PRIMING_TOKENS + tools_tokens(count, encoding, tools)]
    for index, message in enumerate(messages):
        segments.append(
            message_tokens(count, message, message.role, None, media[index] if index < len(media) else 0)
        )
    return ExactTokens(segments=tuple(segments), count_text=count, encoding=encoding)


def chat_exact_tokens(
    model: str, raw_messages: list[Any], messages: Sequence[NeutralMessage], tools: Any
) -> ExactTokens | None:
    """Exact counts of a Chat Completions request (``raw_messages`` the body's, one per neutral message:
    the role as sent, ``name``, images and audio)."""
    encoding = encoding_for_model(model)
    if encoding is None:
        return None
    count = text_counter(encoding)
    segments = [REPLY_PRIMING_TOKENS + tools_tokens(count, encoding, tools)]
    for raw, message in zip(raw_messages, messages, strict=True):
        content = raw.get("content")
        media = content_media_tokens(content) if content.__class__ is list else 0
        segments.append(message_tokens(count, message, raw["role"], raw.get("name"), media))
    return ExactTokens(tuple(segments), count, encoding)
