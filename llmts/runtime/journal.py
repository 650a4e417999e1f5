"""The per-session request journal: bounded, append-only with a rising sequence, updated in place.

Limits (the ``journal`` configuration section; defaults 500 entries, 16 MiB retained, 64 KiB previews).
The oldest entries are evicted first and counted; the journal records how many attempts it observed in
total. Anything cut to the limits (a payload preview, a tool list) sets the sticky ``truncated`` flag
until the next reset. The journal also hands out provider-local request ordinals (the wire sequence of
seeded ids): they have its lifecycle, start at 1 per provider and restart on reset/configure.
"""

from __future__ import annotations

import itertools
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from llmts.runtime.clock import Clock, SystemClock
from llmts.runtime.journal_record import DeliveryOutcome, JournalRecord, utc_iso
from llmts.schema.journal import JournalEntry, JournalSettings
from llmts.schema.neutral import NeutralMessage, NeutralToolCall

if TYPE_CHECKING:
    from llmts.runtime.memory import MemoryBudget

__all__ = ["DeliveryOutcome", "Journal", "JournalRecord", "JournalSnapshot", "utc_iso"]

_DEFAULT_SETTINGS = JournalSettings()


@dataclass(frozen=True, slots=True)
class JournalSnapshot:
    """One consistent view of the journal: its entries (sequence order) and its counters."""

    entries: tuple[JournalEntry, ...]
    total_observed: int
    evicted: int
    retained_bytes: int
    truncated: bool
    # The journal's first and last retained sequences (``entries`` may be only a tail: ``after``).
    first_sequence: int | None = None
    last_sequence: int | None = None
    retained_entries: int = 0
    # Of ``evicted``, those the process memory budget took (``--max-memory``: oldest first, any session).
    evicted_by_budget: int = 0

    def eviction_causes(self) -> str:
        """Who evicted, for reports: the journal's own limits, the process memory budget (another
        session's traffic can make it take this session's entries: docs/journal.md), or both."""
        own = "the journal's max_entries/max_bytes"
        budget = "the server's memory budget (--max-memory), which evicts the oldest entries of any session"
        if not self.evicted_by_budget:
            return own
        if self.evicted_by_budget == self.evicted:
            return budget
        return f"{self.evicted - self.evicted_by_budget} by {own}, {self.evicted_by_budget} by {budget}"


class Journal:
    """Thread-safe on its own (one short lock per operation); records are mutated by their request only.

    Entries sit in a deque in sequence order (each record carries its own accounted size), so the journal
    costs one pointer per entry beyond the records. With a ``MemoryBudget`` every change of the retained
    size is also charged to the process; the budget may evict this journal's oldest entries. As a session
    part it times attempts on the session's ``clock`` (``start``/``finish``; the system clock by default).
    """

    def __init__(
        self,
        settings: JournalSettings = _DEFAULT_SETTINGS,
        budget: MemoryBudget | None = None,
        clock: Clock | None = None,
    ) -> None:
        self._lock = threading.Lock()
        self.settings = settings
        self._budget = budget
        self._clock: Clock = clock if clock is not None else SystemClock()
        # ``determinism.fixed_utc``: records say their wire clock is fixed (set by ``apply``).
        self._fixed_clock = False
        self._entries: deque[JournalRecord] = deque()
        self._ordinals: dict[str, int] = {}
        self._bytes = 0
        self._observed = 0
        self._evicted = 0
        self._evicted_by_budget = 0  # of ``_evicted``: taken by the process memory budget
        self._truncated = False
        # Entries that left without the budget's doing (see llmts.runtime.memory).
        self.stale = 0

    @property
    def preview_bytes(self) -> int:
        return self.settings.preview_bytes

    def apply(self, settings: JournalSettings | None, *, fixed_clock: bool = False) -> None:
        """New retention limits and wire clock mode (configure); the caller clears the journal right after."""
        with self._lock:
            self.settings = settings or _DEFAULT_SETTINGS
            self._fixed_clock = fixed_clock

    def start(self, request_id: str, provider: str, method: str, path: str) -> JournalRecord:
        """Record a provider attempt at entry, now on the session's clock (reserving its provider-local
        ordinal, ``wire_sequence``); the request completes the returned record in place."""
        clock = self._clock
        record = self.begin(request_id, provider, method, path, clock.now(), clock.monotonic())
        if self._fixed_clock:
            record.wire_clock_mode = "fixed"
        return record

    def finish(self, record: JournalRecord) -> None:
        """The attempt is over: its completion times, then its accounted size (``settle``)."""
        clock = self._clock
        record.finish(clock.now(), clock.monotonic())
        self.settle(record)

    # --- recording ----------------------------------------------------------------------------------

    def begin(
        self, request_id: str, provider: str, method: str, path: str, epoch: float, monotonic: float
    ) -> JournalRecord:
        """Append an in-progress record; reserves the next sequence and the provider's next ordinal."""
        with self._lock:
            self._observed += 1
            ordinal = self._ordinals.get(provider, 0) + 1
            self._ordinals[provider] = ordinal
            # Positional, then set: the record's keyword arguments would cost every request ~140 ns.
            record = JournalRecord(request_id, self._observed, provider, epoch, monotonic, method, path)
            record.wire_sequence = ordinal
            record.accounted = size = record.initial_bytes()
            self._entries.append(record)
            self._bytes += size
            count, freed = self._evict()
            budget = self._budget
        if budget is not None:
            budget.entry_added(self, size)
            if count:
                budget.entries_removed(count, freed)
        return record

    # The request path calls the record's own capture methods; these keep the journal's preview limit.
    def record_request(self, record: JournalRecord, body: bytes) -> None:
        record.capture_request(body, self.settings.preview_bytes)

    def record_history(self, record: JournalRecord, messages: Sequence[NeutralMessage]) -> None:
        record.capture_history(messages, self.settings.preview_bytes)

    def record_output_calls(self, record: JournalRecord, calls: Sequence[NeutralToolCall]) -> None:
        record.capture_output_calls(calls, self.settings.preview_bytes)

    def record_response(self, record: JournalRecord, body: bytes, frames: Sequence[bytes] | None) -> None:
        record.capture_response(body, frames, self.settings.preview_bytes)

    def settle(self, record: JournalRecord) -> None:
        """Account a finished record's retained size and truncation (once, when the attempt is over: the
        capture calls only fill fields, so the request path takes this lock once)."""
        size = record.retained_bytes()
        with self._lock:
            if record.truncated:
                self._truncated = True
            old = record.accounted
            if not old:  # already evicted
                return
            record.accounted = size
            self._bytes += size - old
            count, freed = self._evict()
            budget = self._budget
        if budget is not None:
            budget.journal_grew(size - old)
            if count:
                budget.entries_removed(count, freed)

    def _evict(self) -> tuple[int, int]:
        """Drop the oldest entries beyond this journal's own limits; (count, bytes). Lock held."""
        limits = self.settings
        count = freed = 0
        while self._entries and (len(self._entries) > limits.max_entries or self._bytes > limits.max_bytes):
            record = self._entries.popleft()
            freed += record.accounted
            self._bytes -= record.accounted
            record.accounted = 0
            count += 1
        if count:
            self._evicted += count
            self.stale += count
        return count, freed

    def evict_oldest_for_budget(self) -> int | None:
        """The process budget's eviction of this journal's oldest entry: its bytes (0 when empty), or None
        when another greenlet holds the lock (never waited for)."""
        if not self._lock.acquire(blocking=False):
            return None
        try:
            if not self._entries:
                return 0
            record = self._entries.popleft()
            size, record.accounted = record.accounted, 0
            self._bytes -= size
            self._evicted += 1
            self._evicted_by_budget += 1
            return size
        finally:
            self._lock.release()

    def clear(self) -> None:
        with self._lock:
            count, freed = len(self._entries), self._bytes
            for record in self._entries:
                record.accounted = 0
            self._entries.clear()
            self.stale += count
            self._ordinals.clear()
            self._bytes = 0
            self._observed = 0
            self._evicted = self._evicted_by_budget = 0
            self._truncated = False
            budget = self._budget
        if budget is not None and count:
            budget.entries_removed(count, freed)

    def detach(self) -> None:
        """The session was deleted: give its bytes back to the budget and charge nothing more."""
        self.clear()
        with self._lock:
            self._budget = None

    def counters(self) -> tuple[int, int, int, int]:
        """(retained entries, retained bytes, attempts observed since the last reset, evicted)."""
        with self._lock:
            return len(self._entries), self._bytes, self._observed, self._evicted

    def snapshot(
        self,
        after: int = 0,
        pick: Callable[[Sequence[JournalRecord]], Sequence[JournalRecord]] | None = None,
    ) -> JournalSnapshot:
        """The entries with a sequence above ``after`` (all by default) and the journal's counters.

        ``pick`` chooses, from those records, the ones to return (a query's filter and page). Only what
        is returned becomes ``JournalEntry`` models, so a page of a full journal, or a poll for what is
        new (the dashboard's live journal), costs what it returns (docs/journal.md, "Querying").
        """
        with self._lock:
            entries = self._entries
            first = entries[0].sequence if entries else None
            last = entries[-1].sequence if entries else None
            if after and first is not None and after >= first:
                records = tuple(itertools.takewhile(lambda r: r.sequence > after, reversed(entries)))[::-1]
            else:
                records = tuple(entries)
            counters = (self._observed, self._evicted, self._bytes, self._truncated)
            retained, by_budget = len(entries), self._evicted_by_budget
        chosen = pick(records) if pick is not None else records
        return JournalSnapshot(
            tuple(record.to_entry() for record in chosen), *counters, first, last, retained, by_budget
        )
