"""The per-session request journal: bounded, append-only with a rising sequence, updated in place.

Limits (defaults; configurable per session): 500 entries and 16 MiB retained. The oldest entries are
evicted first and counted; the journal records how many attempts it observed in total.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, fields
from datetime import datetime, timezone
from typing import Any

from llmts.schema.faults import StreamDelivery
from llmts.schema.journal import JournalEntry

__all__ = ["DEFAULT_JOURNAL_BYTES", "DEFAULT_JOURNAL_ENTRIES", "Journal", "JournalRecord", "JournalSnapshot"]

DEFAULT_JOURNAL_ENTRIES = 500
DEFAULT_JOURNAL_BYTES = 16 * 1024 * 1024
# Estimated retained size of an entry without payload previews.
_ENTRY_BYTES = 768


def utc_iso(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    return (
        datetime.fromtimestamp(epoch, timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")
    )


@dataclass(slots=True)
class JournalRecord:
    """The live, mutable record of one provider attempt (cheap to update on the request path).

    Queries turn records into ``JournalEntry`` models; times stay epoch floats until then.
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

    def to_entry(self) -> JournalEntry:
        values: dict[str, Any] = {name: getattr(self, name) for name in _ENTRY_FIELDS}
        values["started_at"] = utc_iso(self.started_epoch)
        values["completed_at"] = utc_iso(self.completed_epoch)
        return JournalEntry.model_validate(values)


_ENTRY_FIELDS = tuple(
    f.name for f in fields(JournalRecord) if f.name not in ("started_epoch", "completed_epoch")
)


@dataclass(frozen=True, slots=True)
class JournalSnapshot:
    entries: tuple[JournalEntry, ...]
    total_observed: int
    evicted: int
    retained_bytes: int
    truncated: bool


class Journal:
    """Not thread-safe on its own: the owning session guards it with its lock."""

    def __init__(
        self, max_entries: int = DEFAULT_JOURNAL_ENTRIES, max_bytes: int = DEFAULT_JOURNAL_BYTES
    ) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._entries: OrderedDict[int, JournalRecord] = OrderedDict()
        self._sizes: dict[int, int] = {}
        self._bytes = 0
        self._observed = 0
        self._evicted = 0
        self._truncated = False

    def next_sequence(self) -> int:
        self._observed += 1
        return self._observed

    def append(self, entry: JournalRecord) -> None:
        self._entries[entry.sequence] = entry
        self._sizes[entry.sequence] = _ENTRY_BYTES
        self._bytes += _ENTRY_BYTES
        self._evict()

    def resize(self, sequence: int, size: int) -> None:
        old = self._sizes.get(sequence)
        if old is None:
            return
        self._sizes[sequence] = size
        self._bytes += size - old
        self._evict()

    def _evict(self) -> None:
        while self._entries and (len(self._entries) > self.max_entries or self._bytes > self.max_bytes):
            sequence, _ = self._entries.popitem(last=False)
            self._bytes -= self._sizes.pop(sequence)
            self._evicted += 1

    def mark_truncated(self) -> None:
        self._truncated = True

    def clear(self) -> None:
        self._entries.clear()
        self._sizes.clear()
        self._bytes = 0
        self._observed = 0
        self._evicted = 0
        self._truncated = False

    def snapshot(self) -> JournalSnapshot:
        return JournalSnapshot(
            entries=tuple(record.to_entry() for record in self._entries.values()),
            total_observed=self._observed,
            evicted=self._evicted,
            retained_bytes=self._bytes,
            truncated=self._truncated,
        )
