"""Conversation items: a client's item checked and kept in wire form, and items as neutral messages.

An item keeps what ``conversation.item.retrieve`` shows (never audio bytes: an ``input_audio`` part keeps
its transcript, an assistant audio part its transcript and duration) and the text the model "reads"
(``text``): a message's texts, an audio part's transcript (or ``input_transcript`` of its bytes), a call's
output. The neutral messages scenarios match are built from the items in conversation order.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from llmts.providers.openai.realtime.limits import REALTIME_LIMITS
from llmts.providers.openai.realtime.wire import (
    EventError,
    check_keys,
    invalid_type,
    one_of,
    optional_str,
    require,
    require_str,
    too_long,
)
from llmts.schema.neutral import NeutralMessage, NeutralToolCall, build, neutral_message

__all__ = ["Item", "decode_audio", "neutral_messages", "parse_item", "truncated_item", "user_audio_item"]

_ITEM_TYPES = ("message", "function_call", "function_call_output")
_MCP_TYPES = ("mcp_approval_response", "mcp_list_tools", "mcp_call", "mcp_approval_request")
_ROLES = ("system", "user", "assistant")
_PART_TYPES = {
    "user": ("input_text", "input_audio", "input_image"),
    "system": ("input_text",),
    "assistant": ("output_text", "output_audio"),
}
_PART_KEYS = {
    "input_text": ("type", "text"),
    "output_text": ("type", "text"),
    "input_audio": ("type", "audio", "transcript"),
    "output_audio": ("type", "audio", "transcript"),
    "input_image": ("type", "image_url", "detail"),
}
_STATUSES = ("completed", "incomplete", "in_progress")
_COMMON_KEYS = ("type", "id", "object", "status")
_ITEM_CHARS = REALTIME_LIMITS["item_chars"]
_AUDIO_BYTES = REALTIME_LIMITS["input_audio_bytes"]


@dataclass(slots=True)
class Item:
    """One conversation item: ``wire`` as the client sees it, ``text`` as the model reads it, the
    characters it holds (for the conversation's bound) and, for assistant audio, its duration."""

    id: str
    wire: dict[str, Any]
    text: str
    chars: int
    audio_ms: int = 0

    @property
    def kind(self) -> str:
        return str(self.wire["type"])

    @property
    def role(self) -> str | None:
        role = self.wire.get("role")
        return role if isinstance(role, str) else None


def decode_audio(value: Any, param: str) -> bytes:
    """Base64 audio, bounded before it is decoded."""
    if not isinstance(value, str):
        raise invalid_type(param, "a string", value)
    if len(value) > (_AUDIO_BYTES + 2) // 3 * 4:
        raise EventError(
            f"Invalid '{param}': audio too large. Expected at most {_AUDIO_BYTES} bytes of decoded audio.",
            "audio_too_large",
            param,
        )
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise EventError(
            f"Invalid '{param}': expected base64-encoded audio bytes.", "invalid_value", param
        ) from None


def _common(raw: dict[str, Any], param: str) -> tuple[str | None, str]:
    item_id = optional_str(raw, "id", param, REALTIME_LIMITS["id_chars"])
    if raw.get("object") is not None:
        one_of(raw["object"], ("realtime.item",), f"{param}.object")
    status = "completed"
    if raw.get("status") is not None:
        status = one_of(raw["status"], _STATUSES, f"{param}.status")
    return item_id, status


def _part(
    raw: Any, role: str, param: str, transcribe: Callable[[int], str]
) -> tuple[dict[str, Any], str, int]:
    """One content part: (its wire form, its text for the model, the characters it holds)."""
    if not isinstance(raw, dict):
        raise invalid_type(param, "an object", raw)
    kind = one_of(require(raw, "type", param), _PART_TYPES[role], f"{param}.type")
    check_keys(raw, _PART_KEYS[kind], param)
    if kind in ("input_text", "output_text"):
        text = require_str(raw, "text", param)
        return {"type": kind, "text": text}, text, len(text)
    if kind == "output_audio":
        raise EventError(
            "Assistant audio messages cannot be created by the client; send output_text content instead.",
            "invalid_value",
            f"{param}.type",
        )
    if kind == "input_audio":
        audio = decode_audio(require(raw, "audio", param), f"{param}.audio")
        transcript = optional_str(raw, "transcript", param, _ITEM_CHARS)
        heard = transcript if transcript is not None else transcribe(len(audio))
        return {"type": kind, "transcript": transcript}, heard, len(heard)
    url = require_str(raw, "image_url", param, _ITEM_CHARS)
    part: dict[str, Any] = {"type": kind, "image_url": url}
    if raw.get("detail") is not None:
        part["detail"] = one_of(raw["detail"], ("auto", "low", "high"), f"{param}.detail")
    return part, "", len(url)


def _message(
    raw: dict[str, Any], param: str, transcribe: Callable[[int], str]
) -> tuple[dict[str, Any], str, int]:
    check_keys(raw, (*_COMMON_KEYS, "role", "content"), param)
    role = one_of(require(raw, "role", param), _ROLES, f"{param}.role")
    content = require(raw, "content", param)
    if not isinstance(content, list):
        raise invalid_type(f"{param}.content", "an array", content)
    if len(content) > REALTIME_LIMITS["content_parts"]:
        raise EventError(
            f"Invalid '{param}.content': array too long. Expected an array with maximum length "
            f"{REALTIME_LIMITS['content_parts']}, but got an array with length {len(content)} instead.",
            "array_above_max_length",
            f"{param}.content",
        )
    parts, texts, chars = [], [], 0
    for index, raw_part in enumerate(content):
        part, text, size = _part(raw_part, role, f"{param}.content[{index}]", transcribe)
        parts.append(part)
        texts.append(text)
        chars += size
    return {"role": role, "content": parts}, "".join(texts), chars


def parse_item(raw: Any, param: str, new_id: Callable[[str], str], transcribe: Callable[[int], str]) -> Item:
    """A client's item (``conversation.item.create``'s ``item``, or an item of a response's ``input``);
    an ``id`` the client leaves out is assigned (``item_...``, and ``call_...`` for a call's ``call_id``)."""
    if not isinstance(raw, dict):
        raise invalid_type(param, "an object", raw)
    kind = require(raw, "type", param)
    if kind in _MCP_TYPES:
        raise EventError(f"llmts does not serve MCP items ('{kind}').", "invalid_value", f"{param}.type")
    one_of(kind, _ITEM_TYPES, f"{param}.type")
    item_id, status = _common(raw, param)
    item_id = item_id or new_id("item")
    head: dict[str, Any] = {"id": item_id, "object": "realtime.item", "type": kind, "status": status}
    if kind == "message":
        body, text, chars = _message(raw, param, transcribe)
    elif kind == "function_call":
        check_keys(raw, (*_COMMON_KEYS, "name", "arguments", "call_id"), param)
        name = require_str(raw, "name", param)
        arguments = require_str(raw, "arguments", param)
        call_id = optional_str(raw, "call_id", param, REALTIME_LIMITS["id_chars"]) or new_id("call")
        body = {"name": name, "call_id": call_id, "arguments": arguments}
        text, chars = "", len(name) + len(arguments)
    else:
        check_keys(raw, (*_COMMON_KEYS, "call_id", "output"), param)
        call_id = require_str(raw, "call_id", param, REALTIME_LIMITS["id_chars"])
        text = require_str(raw, "output", param)
        body, chars = {"call_id": call_id, "output": text}, len(text)
    if chars > _ITEM_CHARS:
        raise too_long(param, _ITEM_CHARS, chars)
    return Item(id=item_id, wire={**head, **body}, text=text, chars=chars)


def user_audio_item(item_id: str, heard: str) -> Item:
    """The user message committed audio becomes (its transcript is set once transcribed)."""
    wire = {
        "id": item_id,
        "object": "realtime.item",
        "type": "message",
        "status": "completed",
        "role": "user",
        "content": [{"type": "input_audio", "transcript": None}],
    }
    return Item(id=item_id, wire=wire, text=heard, chars=len(heard))


def _heard(text: str, end_ms: int, total_ms: int) -> str:
    """The words of ``text`` spoken by ``end_ms`` of ``total_ms`` (characters in proportion, cut back to a
    whole word)."""
    if total_ms <= 0 or end_ms >= total_ms:
        return text
    cut = len(text) * end_ms // total_ms
    if cut < len(text) and not text[cut].isspace():
        cut = max(text.rfind(" ", 0, cut), 0)
    return text[:cut].rstrip()


def truncated_item(item: Item, index: int, end_ms: int) -> Item:
    """An assistant audio message cut at ``end_ms`` (``conversation.item.truncate``): its audio ends there
    and its transcript keeps the words heard by then (the service deletes the transcript; llmts keeps
    what the model would hear, so scenarios can match it)."""
    if item.kind != "message" or item.role != "assistant":
        raise EventError("Only assistant messages can be truncated.", "invalid_value", "item_id")
    content = item.wire["content"]
    if index >= len(content) or content[index]["type"] != "output_audio":
        raise EventError(
            f"Content part {index} of item '{item.id}' is not audio: only audio can be truncated.",
            "invalid_value",
            "content_index",
        )
    if end_ms > item.audio_ms:
        raise EventError(
            f"audio_end_ms ({end_ms}) is longer than the item's audio ({item.audio_ms} ms).",
            "invalid_value",
            "audio_end_ms",
        )
    heard = _heard(item.text, end_ms, item.audio_ms)
    parts = [dict(part) for part in content]
    parts[index]["transcript"] = heard
    wire = {**item.wire, "content": parts}
    return Item(id=item.id, wire=wire, text=heard, chars=len(heard), audio_ms=end_ms)


def neutral_messages(items: Iterable[Item]) -> tuple[NeutralMessage, ...]:
    """The items as the neutral conversation: messages by role, a ``function_call`` as an assistant tool
    call (consecutive calls join the assistant turn before them), a ``function_call_output`` as a
    ``tool`` message answering its ``call_id``."""
    messages: list[NeutralMessage] = []
    open_assistant = False
    for item in items:
        wire = item.wire
        if item.kind == "message":
            messages.append(neutral_message(str(wire["role"]), item.text))
            open_assistant = wire["role"] == "assistant"
        elif item.kind == "function_call":
            call = build(
                NeutralToolCall,
                id=str(wire["call_id"]),
                name=str(wire["name"]),
                arguments=str(wire["arguments"]),
                arguments_chunks=(),
            )
            if open_assistant:
                last = messages[-1]
                messages[-1] = neutral_message("assistant", last.text, (*last.tool_calls, call))
            else:
                messages.append(neutral_message("assistant", "", (call,)))
                open_assistant = True
        else:
            messages.append(neutral_message("tool", item.text, (), str(wire["call_id"])))
            open_assistant = False
    return tuple(messages)
