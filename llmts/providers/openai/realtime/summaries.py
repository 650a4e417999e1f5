"""What a turn tells the journal about the client events that led to it (``Turn.client_events``).

Each summary names the event's ``type`` and what identifies what it carried: item ids, roles, texts (cut
to ``summary_chars``), call ids and outputs, audio byte counts (never the audio). Consecutive
``input_audio_buffer.append`` events fold into one summary with their count and bytes. A turn carries the
latest ``turn_client_events`` summaries; older ones are counted in a leading ``{"type": "omitted"}``.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from llmts.providers.openai.realtime.items import Item
from llmts.providers.openai.realtime.limits import REALTIME_LIMITS
from llmts.providers.realtime import ClientEvent

__all__ = ["EventLog", "item_summary", "shorten"]

_CHARS = REALTIME_LIMITS["summary_chars"]
_APPEND = "input_audio_buffer.append"


def shorten(text: str) -> str:
    return text if len(text) <= _CHARS else text[: _CHARS - 1] + "…"


def item_summary(item: Item) -> dict[str, Any]:
    """An item's identity and (shortened) contents."""
    wire = item.wire
    summary: dict[str, Any] = {"item_id": item.id, "item_type": item.kind}
    if item.kind == "message":
        summary["role"] = wire["role"]
        summary["text"] = shorten(item.text)
        audio = [part for part in wire["content"] if part["type"] == "input_audio"]
        if audio:
            summary["audio_parts"] = len(audio)
    elif item.kind == "function_call":
        summary.update(
            call_id=wire["call_id"], name=shorten(wire["name"]), arguments=shorten(wire["arguments"])
        )
    else:
        summary.update(call_id=wire["call_id"], output=shorten(wire["output"]))
    return summary


class EventLog:
    """The summaries since the previous turn, bounded."""

    __slots__ = ("_entries", "_omitted")

    def __init__(self) -> None:
        self._entries: deque[ClientEvent] = deque(maxlen=REALTIME_LIMITS["turn_client_events"])
        self._omitted = 0

    def add(self, kind: str, event_id: str | None = None, **fields: Any) -> None:
        summary: ClientEvent = {"type": kind}
        if event_id is not None:
            summary["event_id"] = event_id
        summary.update(fields)
        if len(self._entries) == self._entries.maxlen:
            self._omitted += 1
        self._entries.append(summary)

    def add_audio(self, size: int) -> None:
        """An append: folded into the previous summary when that was an append too (not a refused one,
        whose summary carries its error instead of counts)."""
        if self._entries and self._entries[-1]["type"] == _APPEND and "events" in self._entries[-1]:
            last = self._entries[-1]
            last["events"] += 1
            last["audio_bytes"] += size
            return
        self.add(_APPEND, events=1, audio_bytes=size)

    def take(self) -> list[ClientEvent]:
        """The summaries for a turn, and a fresh start."""
        taken: list[ClientEvent] = list(self._entries)
        if self._omitted:
            taken.insert(0, {"type": "omitted", "count": self._omitted})
        self._entries.clear()
        self._omitted = 0
        return taken
