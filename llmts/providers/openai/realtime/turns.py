"""A model turn: ``response.create``'s overrides checked, and the ``Turn`` the session's scenarios answer.

The turn's neutral request (operation ``realtime``) carries the conversation's items as messages (or the
response's own ``input``), the instructions as ``system`` (and, with the tools, as the token-counted
``preamble``), the tools' names and the tool choice; the response's settings travel in the turn's
``context`` for ``answer``, ``failed`` and ``interrupted``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from llmts.providers.openai.realtime.fields import (
    neutral_tool_choice,
    parse_max_output_tokens,
    parse_modalities,
    parse_output_audio,
    parse_tool_choice,
    parse_tools,
    tool_names,
)
from llmts.providers.openai.realtime.items import Item, neutral_messages, parse_item
from llmts.providers.openai.realtime.limits import REALTIME_LIMITS
from llmts.providers.openai.realtime.response import ResponseContext
from llmts.providers.openai.realtime.session import SessionSettings
from llmts.providers.openai.realtime.state import Conversation
from llmts.providers.openai.realtime.wire import (
    EventError,
    check_keys,
    invalid_type,
    one_of,
    optional,
    require_str,
    too_long,
)
from llmts.providers.realtime import ClientEvent, Turn
from llmts.schema.neutral import NeutralRequest, build, reasoning_settings

__all__ = ["Overrides", "make_turn", "parse_overrides"]

_RESPONSE_KEYS = (
    "audio",
    "conversation",
    "input",
    "instructions",
    "max_output_tokens",
    "metadata",
    "output_modalities",
    "parallel_tool_calls",
    "prompt",
    "reasoning",
    "tool_choice",
    "tools",
)
_ITEM_CHARS = REALTIME_LIMITS["item_chars"]


@dataclass(slots=True)
class Overrides:
    """A ``response.create``'s ``response`` object, checked (None: the session's setting)."""

    instructions: str | None = None
    modalities: list[str] | None = None
    tools: list[dict[str, Any]] | None = None
    tool_choice: Any = None
    max_output_tokens: int | str | None = None
    metadata: dict[str, str] | None = None
    audio: dict[str, Any] | None = None
    # False for ``conversation: "none"`` (out of band: the answer joins no conversation).
    in_conversation: bool = True
    # The response's own context instead of the conversation (``input``).
    input: list[Item] | None = None


def _metadata(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        raise invalid_type("response.metadata", "an object", value)
    if len(value) > REALTIME_LIMITS["metadata_keys"]:
        raise EventError(
            f"Invalid 'response.metadata': at most {REALTIME_LIMITS['metadata_keys']} keys.",
            "invalid_value",
            "response.metadata",
        )
    for key, entry in value.items():
        param = f"response.metadata.{key}"
        if len(key) > REALTIME_LIMITS["metadata_key_chars"]:
            raise too_long(param, REALTIME_LIMITS["metadata_key_chars"], len(key))
        if not isinstance(entry, str):
            raise invalid_type(param, "a string", entry)
        if len(entry) > REALTIME_LIMITS["metadata_value_chars"]:
            raise too_long(param, REALTIME_LIMITS["metadata_value_chars"], len(entry))
    return dict(value)


def _input(
    value: Any, conversation: Conversation, new_id: Callable[[str], str], transcribe: Callable[[int], str]
) -> list[Item]:
    """A response's ``input``: new items, or references to the conversation's (``item_reference``)."""
    if not isinstance(value, list):
        raise invalid_type("response.input", "an array", value)
    if len(value) > REALTIME_LIMITS["conversation_items"]:
        raise EventError(
            f"Invalid 'response.input': at most {REALTIME_LIMITS['conversation_items']} items.",
            "array_above_max_length",
            "response.input",
        )
    items = []
    for index, raw in enumerate(value):
        param = f"response.input[{index}]"
        if isinstance(raw, dict) and raw.get("type") == "item_reference":
            check_keys(raw, ("type", "id"), param)
            item_id = require_str(raw, "id", param)
            item = conversation.get(item_id)
            if item is None:
                raise EventError(
                    f"Item reference with id '{item_id}' not found in the conversation.",
                    "item_reference_not_found",
                    f"{param}.id",
                )
            items.append(item)
        else:
            items.append(parse_item(raw, param, new_id, transcribe))
    return items


def parse_overrides(
    raw: Any, conversation: Conversation, new_id: Callable[[str], str], transcribe: Callable[[int], str]
) -> Overrides:
    if raw is None:
        return Overrides()
    if not isinstance(raw, dict):
        raise invalid_type("response", "an object", raw)
    check_keys(raw, _RESPONSE_KEYS, "response")
    found = Overrides()
    instructions = optional(raw, "instructions", "response", str, "a string")
    if instructions is not None and len(instructions) > _ITEM_CHARS:
        raise too_long("response.instructions", _ITEM_CHARS, len(instructions))
    found.instructions = instructions
    if raw.get("output_modalities") is not None:
        found.modalities = parse_modalities(raw["output_modalities"], "response.output_modalities")
    if raw.get("tools") is not None:
        found.tools = parse_tools(raw["tools"], "response.tools")
    if raw.get("tool_choice") is not None:
        found.tool_choice = parse_tool_choice(raw["tool_choice"], "response.tool_choice")
    if raw.get("max_output_tokens") is not None:
        found.max_output_tokens = parse_max_output_tokens(
            raw["max_output_tokens"], "response.max_output_tokens"
        )
    if raw.get("metadata") is not None:
        found.metadata = _metadata(raw["metadata"])
    if raw.get("audio") is not None:
        audio = raw["audio"]
        if not isinstance(audio, dict):
            raise invalid_type("response.audio", "an object", audio)
        check_keys(audio, ("output",), "response.audio")
        if audio.get("output") is not None:
            found.audio = parse_output_audio(audio["output"], "response.audio.output", speed=False)
    if raw.get("conversation") is not None:
        found.in_conversation = (
            one_of(raw["conversation"], ("auto", "none"), "response.conversation") == "auto"
        )
    for key, kind, expected in (("parallel_tool_calls", bool, "a boolean"), ("prompt", dict, "an object")):
        optional(raw, key, "response", kind, expected)
    optional(raw, "reasoning", "response", dict, "an object")
    if raw.get("input") is not None:
        found.input = _input(raw["input"], conversation, new_id, transcribe)
    return found


def make_turn(
    *,
    provider: str,
    settings: SessionSettings,
    overrides: Overrides,
    conversation: Conversation,
    response_id: str,
    client_events: list[ClientEvent],
    client_event_id: str | None,
) -> Turn:
    """The turn of one response, with its ``ResponseContext`` in ``context["response"]``."""
    instructions = overrides.instructions if overrides.instructions is not None else settings.instructions
    tools = overrides.tools if overrides.tools is not None else settings.tools
    choice = overrides.tool_choice if overrides.tool_choice is not None else settings.tool_choice
    audio = overrides.audio or {}
    response = ResponseContext(
        id=response_id,
        conversation_id=conversation.id if overrides.in_conversation else None,
        modalities=overrides.modalities or settings.output_modalities,
        max_output_tokens=overrides.max_output_tokens or settings.max_output_tokens,
        metadata=overrides.metadata,
        output_format=audio.get("format") or settings.output_format,
        voice=audio.get("voice") or settings.voice,
        client_event_id=client_event_id,
    )
    items = overrides.input if overrides.input is not None else conversation.items()
    preamble = instructions
    if tools:
        preamble = (
            f"{instructions}\n{orjson.dumps(tools).decode()}"
            if instructions
            else orjson.dumps(tools).decode()
        )
    neutral = build(
        NeutralRequest,
        provider=provider,
        operation="realtime",
        model=settings.model,
        messages=neutral_messages(items),
        tool_names=tool_names(tools),
        tool_choice=neutral_tool_choice(choice),
        response_format="text",
        stream=True,
        stream_include_usage=False,
        preamble=preamble,
        system=instructions,
        cache_mode="implicit",
        cache_breakpoints=(),
        choices=1,
        reasoning_settings=reasoning_settings(settings.reasoning),
        exact_tokens=None,
    )
    return Turn(
        neutral=neutral,
        client_events=client_events,
        response_id=response_id,
        audio=response.audio,
        context={"response": response},
    )
