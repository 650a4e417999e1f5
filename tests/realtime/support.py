"""Shared helpers of the realtime tests (docs/realtime.md): strict checks of every server event against the
official SDKs' own models (the openai SDK does not validate what it receives), and readers that stop at a
turn's end."""

from __future__ import annotations

import base64
from collections.abc import Iterable, Iterator
from typing import Any, get_args

from openai.types.realtime.realtime_server_event import RealtimeServerEvent

__all__ = ["OPENAI_EVENT_MODELS", "check_openai_event", "events_until", "pcm_bytes", "text_of"]


def _event_models() -> dict[str, Any]:
    union = get_args(RealtimeServerEvent)[0]
    return {get_args(model.model_fields["type"].annotation)[0]: model for model in get_args(union)}


OPENAI_EVENT_MODELS = _event_models()


def check_openai_event(event: Any) -> dict[str, Any]:
    """The event as a dict, after validating it strictly with the SDK's model of its type (an unknown type
    is a KeyError, a missing or mistyped field a ValidationError)."""
    data: dict[str, Any] = (
        event.model_dump(mode="json", exclude_unset=True) if hasattr(event, "model_dump") else event
    )
    OPENAI_EVENT_MODELS[data["type"]].model_validate(data)
    return data


def events_until(connection: Iterable[Any], last: str = "response.done") -> Iterator[dict[str, Any]]:
    """Checked events of an openai realtime connection, up to and including the first ``last``."""
    for event in connection:
        data = check_openai_event(event)
        yield data
        if data["type"] == last:
            return


def text_of(events: Iterable[dict[str, Any]], kind: str = "response.output_text.delta") -> str:
    return "".join(event["delta"] for event in events if event["type"] == kind)


def pcm_bytes(events: Iterable[dict[str, Any]]) -> bytes:
    return b"".join(
        base64.b64decode(event["delta"]) for event in events if event["type"] == "response.output_audio.delta"
    )
