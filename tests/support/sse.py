"""Server-sent events as the providers frame them, parsed strictly: a test that reads frames also checks
the framing (every event ends with a blank line; an optional ``event:`` line, then one ``data:`` line).
A provider test reads a stream through these rather than splitting the body itself."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["data_events", "sse_events", "typed_events"]


def sse_events(body: bytes, *, newline: str = "\n") -> list[tuple[str | None, str]]:
    """(event name or None, data) per event of ``body``; ``newline`` is the stream's line end (Gemini's is
    ``\\r\\n``). Fails on anything else in the stream."""
    text = body.decode()
    separator = newline * 2
    assert text.endswith(separator), "every SSE event ends with a blank line"
    events: list[tuple[str | None, str]] = []
    for block in text.split(separator)[:-1]:
        lines = block.split(newline)
        name = None
        if lines[0].startswith("event: "):
            name = lines.pop(0)[len("event: ") :]
        assert len(lines) == 1 and lines[0].startswith("data: "), block
        assert "\n" not in lines[0] and "\r" not in lines[0], block
        events.append((name, lines[0][len("data: ") :]))
    return events


def typed_events(body: bytes) -> list[tuple[str, dict[str, Any]]]:
    """(type, data) per event of a stream whose every event is named by its JSON's ``type`` (Anthropic
    Messages, OpenAI Responses): the ``event:`` line and the data's type agree."""
    events: list[tuple[str, dict[str, Any]]] = []
    for name, data in sse_events(body):
        decoded = json.loads(data)
        assert name is not None and decoded["type"] == name, (name, data)
        events.append((name, decoded))
    return events


def data_events(body: bytes, *, newline: str = "\n", done: bool = False) -> list[Any]:
    """The decoded JSON data of each event of a stream without ``event:`` lines (Chat Completions, Gemini);
    ``done``: the stream's last event is ``data: [DONE]`` (Chat Completions), checked and left out."""
    events = sse_events(body, newline=newline)
    assert all(name is None for name, _ in events), "no event: lines in this stream"
    data = [text for _, text in events]
    if done:
        assert data and data[-1] == "[DONE]", "the stream ends with data: [DONE]"
        data.pop()
    assert "[DONE]" not in data, "[DONE] only as the last event"
    return [json.loads(text) for text in data]
