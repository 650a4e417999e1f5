"""Client events: decoding a message and checking its envelope against the SDK's client event models.

``check`` refuses what the service refuses before looking at an event's meaning: a message that is not a
JSON object, a missing or unknown ``type``, an ``event_id`` that is not a string, a key the event's model
does not have, a required field left out (``openai/types/realtime/*_event.py``). The fields' contents
(items, the session, a response's overrides) are checked by the handlers that use them.
"""

from __future__ import annotations

from typing import Any

import orjson

from llmts.providers.openai.realtime.limits import REALTIME_LIMITS
from llmts.providers.openai.realtime.wire import EventError, check_keys, invalid_type, one_of, require
from llmts.schema.wire_values import nests_deeper

__all__ = ["CLIENT_EVENTS", "check", "decode", "event_id_of"]

# type -> (its fields besides ``type`` and ``event_id``, the required ones)
CLIENT_EVENTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "session.update": (("session",), ("session",)),
    "input_audio_buffer.append": (("audio",), ("audio",)),
    "input_audio_buffer.commit": ((), ()),
    "input_audio_buffer.clear": ((), ()),
    "output_audio_buffer.clear": ((), ()),
    "conversation.item.create": (("item", "previous_item_id"), ("item",)),
    "conversation.item.retrieve": (("item_id",), ("item_id",)),
    "conversation.item.truncate": (
        ("item_id", "content_index", "audio_end_ms"),
        ("item_id", "content_index", "audio_end_ms"),
    ),
    "conversation.item.delete": (("item_id",), ("item_id",)),
    "response.create": (("response",), ()),
    "response.cancel": (("response_id",), ()),
}
_TYPES = tuple(CLIENT_EVENTS)


def decode(message: bytes) -> dict[str, Any]:
    """The message as a JSON object, or the ``error`` the service sends for anything else."""
    try:
        raw = orjson.loads(message)
    except orjson.JSONDecodeError:
        raise EventError(
            "The server could not parse the event: it is not valid JSON.", "invalid_json", None
        ) from None
    if not isinstance(raw, dict):
        raise EventError(
            f"Invalid event: expected a JSON object, but got {_json_kind(raw)} instead.", "invalid_type", None
        )
    if nests_deeper(raw, REALTIME_LIMITS["event_depth"]):
        raise EventError(
            f"Invalid event: JSON nested deeper than {REALTIME_LIMITS['event_depth']} levels.",
            "invalid_value",
            None,
        )
    return raw


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return "null"


def event_id_of(raw: dict[str, Any]) -> str | None:
    """The client's ``event_id`` when it is a usable string (errors echo it)."""
    value = raw.get("event_id")
    return value if isinstance(value, str) and len(value) <= REALTIME_LIMITS["id_chars"] else None


def check(raw: dict[str, Any]) -> str:
    """The event's type, once its envelope is what the SDK's model of that type allows."""
    kind = one_of(require(raw, "type", ""), _TYPES, "type")
    event_id = raw.get("event_id")
    if event_id is not None:
        if not isinstance(event_id, str):
            raise invalid_type("event_id", "a string", event_id)
        if len(event_id) > REALTIME_LIMITS["id_chars"]:
            raise EventError(
                f"Invalid 'event_id': string too long (at most {REALTIME_LIMITS['id_chars']} characters).",
                "string_above_max_length",
                "event_id",
            )
    fields, required = CLIENT_EVENTS[kind]
    check_keys(raw, ("type", "event_id", *fields), "")
    for key in required:
        require(raw, key, "")
    return kind
