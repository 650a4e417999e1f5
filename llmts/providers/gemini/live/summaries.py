"""The client events a Live turn journals: bounded summaries of the client messages since the previous turn
(docs/design/gemini-live.md).

Each is ``{"type": ...}`` named after the wire message (``setup``, ``clientContent``, ``toolResponse``,
``contextUpdate``, ``realtimeInput.audio``, ``realtimeInput.text``, ``realtimeInput.activityStart``...)
with what identifies its content: roles and texts, function call ids and names, function responses (id,
name, response JSON), audio and video byte counts (consecutive chunks add up in one event; the media itself
is never kept). Texts are cut at ``MAX_TEXT`` characters, lists at ``MAX_ITEMS`` entries, and a turn keeps
at most ``MAX_EVENTS`` events, then one ``{"type": "omitted", "count": n}``.
"""

from __future__ import annotations

from typing import Any

from llmts.providers.gemini.live.client_types import (
    LiveClientContent,
    LiveContextUpdate,
    LiveSetup,
    LiveToolResponse,
)
from llmts.providers.realtime import ClientEvent

__all__ = [
    "MAX_EVENTS",
    "MAX_ITEMS",
    "MAX_TEXT",
    "ClientEvents",
    "content_event",
    "context_update_event",
    "setup_event",
    "shorten",
    "tool_response_event",
]

MAX_EVENTS = 64
MAX_ITEMS = 16
MAX_TEXT = 200


# Ids and names in a summary (function call ids and names are client text).
_ID_CHARS = 128


def shorten(text: str, limit: int = MAX_TEXT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _short(value: str | None) -> str | None:
    """An id or a name as the journal keeps it (the parser does not bound them)."""
    return None if value is None else shorten(value, _ID_CHARS)


def _listed(entries: list[Any], event: ClientEvent, key: str) -> None:
    event[key] = entries[:MAX_ITEMS]
    if len(entries) > MAX_ITEMS:
        event[key + "Omitted"] = len(entries) - MAX_ITEMS


def setup_event(setup: LiveSetup) -> ClientEvent:
    event: ClientEvent = {
        "type": "setup",
        "model": setup.model,
        "responseModalities": ["AUDIO" if setup.audio else "TEXT"],
        "systemInstruction": shorten(setup.system),
        "automaticActivityDetection": setup.automatic_activity,
        "inputAudioTranscription": setup.input_transcription,
        "outputAudioTranscription": setup.output_transcription,
    }
    _listed(list(setup.tool_names), event, "tools")
    return event


def content_event(message: LiveClientContent) -> ClientEvent:
    turns = []
    for content in message.turns[: MAX_ITEMS + 1]:
        turn: dict[str, Any] = {"role": content.role, "text": shorten(content.text)}
        if content.calls:
            turn["functionCalls"] = [
                {"id": _short(call.id), "name": _short(call.name)} for call in content.calls[:MAX_ITEMS]
            ]
        if content.results:
            turn["functionResponses"] = [
                {"id": _short(result.id), "name": _short(result.name), "response": shorten(result.response)}
                for result in content.results[:MAX_ITEMS]
            ]
        turns.append(turn)
    event: ClientEvent = {"type": "clientContent", "turnComplete": message.turn_complete}
    _listed(turns, event, "turns")
    if len(message.turns) > MAX_ITEMS:
        event["turnsOmitted"] = len(message.turns) - MAX_ITEMS
    return event


def tool_response_event(message: LiveToolResponse) -> ClientEvent:
    responses = [
        {"id": _short(result.id), "name": _short(result.name), "response": shorten(result.response)}
        for result in message.results[: MAX_ITEMS + 1]
    ]
    event: ClientEvent = {"type": "toolResponse"}
    _listed(responses, event, "functionResponses")
    if len(message.results) > MAX_ITEMS:
        event["functionResponsesOmitted"] = len(message.results) - MAX_ITEMS
    return event


def context_update_event(message: LiveContextUpdate) -> ClientEvent:
    event: ClientEvent = {"type": "contextUpdate"}
    if message.system is not None:
        event["systemInstruction"] = shorten(message.system)
    if message.tool_names is not None:
        _listed(list(message.tool_names), event, "tools")
    return event


class ClientEvents:
    """The summaries since the previous turn."""

    __slots__ = ("_events", "_omitted")

    def __init__(self) -> None:
        self._events: list[ClientEvent] = []
        self._omitted = 0

    def add(self, event: ClientEvent) -> None:
        if len(self._events) < MAX_EVENTS:
            self._events.append(event)
        else:
            self._omitted += 1

    def media(self, kind: str, size: int, mime_type: str) -> None:
        """An audio or video chunk: added to the previous event when that one is the same kind of chunk."""
        kind, mime_type = f"realtimeInput.{kind}", shorten(mime_type, 64)
        last = self._events[-1] if self._events and not self._omitted else None
        if last is not None and last["type"] == kind and last["mimeType"] == mime_type:
            last["bytes"] += size
            last["chunks"] += 1
            return
        self.add({"type": kind, "bytes": size, "chunks": 1, "mimeType": mime_type})

    def take(self) -> list[ClientEvent]:
        events = self._events
        if self._omitted:
            events.append({"type": "omitted", "count": self._omitted})
        self._events = []
        self._omitted = 0
        return events
