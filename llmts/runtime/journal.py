"""The per-session request journal: bounded, append-only with a rising sequence, updated in place.

Limits (the ``journal`` configuration section; defaults 500 entries, 16 MiB retained, 64 KiB previews).
The oldest entries are evicted first and counted; the journal records how many attempts it observed in
total. Anything cut to the limits (a payload preview, a tool list) sets the sticky ``truncated`` flag
until the next reset. The journal also hands out provider-local request ordinals (the wire sequence of
seeded ids): they have its lifecycle, start at 1 per provider and restart on reset/configure.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import datetime, timezone
from typing import Any

from llmts.runtime.journal_capture import (
    ToolCallItem,
    ToolResultItem,
    frames_preview,
    history_tools,
    output_calls,
)
from llmts.schema.faults import StreamDelivery
from llmts.schema.journal import JOURNAL_LIMITS, JournalEntry, JournalSettings
from llmts.schema.neutral import NeutralMessage, NeutralToolCall

__all__ = ["Journal", "JournalRecord", "JournalSnapshot", "utc_iso"]

# Estimated retained size of an entry without payload previews, and of one structured tool item.
_ENTRY_BYTES = 768
_TOOL_ITEM_BYTES = 96
_DEFAULT_SETTINGS = JournalSettings()
_MAX_TOOL_ITEMS = JOURNAL_LIMITS["journal_tool_items"]


def utc_iso(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    return (
        datetime.fromtimestamp(epoch, timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")
    )


def _text(data: bytes | None) -> str | None:
    return data.decode("utf-8", "replace") if data is not None else None


@dataclass(slots=True)
class JournalRecord:
    """The live, mutable record of one provider attempt (cheap to update on the request path).

    Queries turn records into ``JournalEntry`` models; times stay epoch floats and previews bytes until then.
    """

    request_id: str
    sequence: int
    provider: str
    started_epoch: float
    started_monotonic_seconds: float
    method: str = "POST"
    path: str = ""
    model: str | None = None
    operation: str | None = None
    status: int | None = None
    scenario: str | None = None
    response_index: int | None = None
    conversation: str | None = None
    step: str | None = None
    turn: int | None = None
    streaming: bool = False
    completed: bool = False
    success: bool | None = None
    error_code: str | None = None
    completed_epoch: float | None = None
    completed_monotonic_seconds: float | None = None
    retry_group: str | None = None
    retry_after_seconds: float | None = None
    stream_delivery: StreamDelivery | None = None
    stream_delivery_applied: bool = False
    emitted_content_frames: int = 0
    terminal_marker_observed: bool = False
    transport_outcome: str | None = None
    wire_clock_mode: str = "live"
    wire_created_at: int | None = None
    wire_sequence: int | None = None
    usage: dict[str, int] | None = None
    # A conversation replay: the retained answer was returned and nothing advanced.
    replayed: bool = False
    request_preview: bytes | None = None
    request_bytes: int = 0
    response_preview: bytes | None = None
    response_bytes: int = 0
    response_tool_calls: tuple[ToolCallItem, ...] = ()
    request_tool_calls: tuple[ToolCallItem, ...] = ()
    tool_results: tuple[ToolResultItem, ...] = ()
    truncated: bool = False

    def retained_bytes(self) -> int:
        size = _ENTRY_BYTES
        if self.request_preview is not None:
            size += len(self.request_preview)
        if self.response_preview is not None:
            size += len(self.response_preview)
        for items in (self.response_tool_calls, self.request_tool_calls, self.tool_results):
            for item in items:
                size += _TOOL_ITEM_BYTES + len(item[0]) + len(item[1] or "") + len(item[2])
        return size

    def to_entry(self) -> JournalEntry:
        values: dict[str, Any] = {name: getattr(self, name) for name in _PLAIN_FIELDS}
        values["started_at"] = utc_iso(self.started_epoch)
        values["completed_at"] = utc_iso(self.completed_epoch)
        # An attempt still in progress has no outcome yet.
        if not self.completed:
            values["success"] = None
        values["request_preview"] = _text(self.request_preview)
        values["request_truncated"] = (
            self.request_preview is not None and len(self.request_preview) < self.request_bytes
        )
        values["response_preview"] = _text(self.response_preview)
        values["response_truncated"] = (
            self.response_preview is not None and len(self.response_preview) < self.response_bytes
        )
        values["response_tool_calls"] = [_call(item) for item in self.response_tool_calls]
        values["request_tool_calls"] = [_call(item) for item in self.request_tool_calls]
        values["tool_results"] = [
            {"call_id": call_id, "name": name, "content": content, "truncated": cut}
            for call_id, name, content, cut in self.tool_results
        ]
        return JournalEntry.model_validate(values)


def _call(item: ToolCallItem) -> dict[str, Any]:
    return {"id": item[0], "name": item[1], "arguments": item[2], "truncated": item[3]}


_DERIVED = frozenset(
    {
        "started_epoch",
        "completed_epoch",
        "request_preview",
        "response_preview",
        "response_tool_calls",
        "request_tool_calls",
        "tool_results",
    }
)
_PLAIN_FIELDS = tuple(f.name for f in fields(JournalRecord) if f.name not in _DERIVED)


@dataclass(frozen=True, slots=True)
class JournalSnapshot:
    """One consistent view of the journal: its entries (sequence order) and its counters."""

    entries: tuple[JournalEntry, ...]
    total_observed: int
    evicted: int
    retained_bytes: int
    truncated: bool

    @property
    def first_sequence(self) -> int | None:
        return self.entries[0].sequence if self.entries else None

    @property
    def last_sequence(self) -> int | None:
        return self.entries[-1].sequence if self.entries else None


class Journal:
    """Thread-safe on its own (one short lock per operation); records are mutated by their request only."""

    def __init__(self, settings: JournalSettings = _DEFAULT_SETTINGS) -> None:
        self._lock = threading.Lock()
        self.settings = settings
        self._entries: OrderedDict[int, JournalRecord] = OrderedDict()
        self._sizes: dict[int, int] = {}
        self._ordinals: dict[str, int] = {}
        self._bytes = 0
        self._observed = 0
        self._evicted = 0
        self._truncated = False

    @property
    def preview_bytes(self) -> int:
        return self.settings.preview_bytes

    def apply(self, settings: JournalSettings | None) -> None:
        """New retention limits (configure); the caller clears the journal right after."""
        with self._lock:
            self.settings = settings or _DEFAULT_SETTINGS

    # --- recording ----------------------------------------------------------------------------------

    def begin(
        self, request_id: str, provider: str, method: str, path: str, epoch: float, monotonic: float
    ) -> JournalRecord:
        """Append an in-progress record; reserves the next sequence and the provider's next ordinal."""
        with self._lock:
            self._observed += 1
            ordinal = self._ordinals.get(provider, 0) + 1
            self._ordinals[provider] = ordinal
            record = JournalRecord(request_id, self._observed, provider, epoch, monotonic, method, path)
            record.wire_sequence = ordinal
            self._entries[record.sequence] = record
            self._sizes[record.sequence] = _ENTRY_BYTES
            self._bytes += _ENTRY_BYTES
            self._evict()
        return record

    def record_request(self, record: JournalRecord, body: bytes) -> None:
        limit = self.settings.preview_bytes
        record.request_bytes = len(body)
        record.request_preview = body if len(body) <= limit else body[:limit]
        if len(body) > limit:
            record.truncated = True

    def record_history(self, record: JournalRecord, messages: Sequence[NeutralMessage]) -> None:
        calls, results, cut = history_tools(messages, _MAX_TOOL_ITEMS, self.settings.preview_bytes)
        if not (calls or results or cut):
            return
        record.request_tool_calls, record.tool_results = calls, results
        if cut:
            record.truncated = True

    def record_output_calls(self, record: JournalRecord, calls: Sequence[NeutralToolCall]) -> None:
        if not calls:
            return
        record.response_tool_calls, cut = output_calls(calls, _MAX_TOOL_ITEMS, self.settings.preview_bytes)
        if cut:
            record.truncated = True

    def record_response(self, record: JournalRecord, body: bytes, frames: Sequence[bytes] | None) -> None:
        limit = self.settings.preview_bytes
        if frames is not None:
            record.response_preview, record.response_bytes = frames_preview(frames, limit)
        else:
            record.response_bytes = len(body)
            record.response_preview = body if len(body) <= limit else body[:limit]
        if record.response_bytes > limit:
            record.truncated = True

    def settle(self, record: JournalRecord) -> None:
        """Account a finished record's retained size and truncation (once, when the attempt is over: the
        record_* calls only fill fields, so the request path takes this lock once)."""
        size = record.retained_bytes()
        with self._lock:
            if record.truncated:
                self._truncated = True
            old = self._sizes.get(record.sequence)
            if old is None:  # already evicted
                return
            self._sizes[record.sequence] = size
            self._bytes += size - old
            self._evict()

    def _evict(self) -> None:
        limits = self.settings
        while self._entries and (len(self._entries) > limits.max_entries or self._bytes > limits.max_bytes):
            sequence, _ = self._entries.popitem(last=False)
            self._bytes -= self._sizes.pop(sequence)
            self._evicted += 1

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._sizes.clear()
            self._ordinals.clear()
            self._bytes = 0
            self._observed = 0
            self._evicted = 0
            self._truncated = False

    def snapshot(self) -> JournalSnapshot:
        with self._lock:
            records = tuple(self._entries.values())
            counters = (self._observed, self._evicted, self._bytes, self._truncated)
        return JournalSnapshot(tuple(record.to_entry() for record in records), *counters)
