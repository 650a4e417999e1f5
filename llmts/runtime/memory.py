"""The process-wide memory budget (``llmts serve --max-memory``), owned by the session registry.

Theory of operation (docs/journal.md, "Process memory budget"):

* Every session charges what it retains to the one budget: journal entries, stored objects (e.g. OpenAI
  stored responses), conversation state, recorded exchanges and its configuration, each at its documented
  accounted size.
* Journal entries are the evidence a test can lose: when the total goes over ``max_bytes``, journal
  entries are evicted oldest-first **across the whole process** until it fits again (each session's
  journal counts them as evicted, so ``/admin-api/verify`` reports incomplete evidence).
* Stored objects, conversation state, recordings and configurations change behaviour when lost, so
  they are never evicted for the budget: growth that cannot be made to fit even after every journal entry
  went is refused with 507 ``llm_test_server_memory_exhausted`` (a recorded exchange that cannot fit is not
  kept and counted as dropped: docs/recording.md); growth that could not fit even without any journal
  entry is refused before one is evicted.
* Response bytes waiting for a client that does not read (``held_write_bytes``) count while the write
  waits (``hold``/``release``, called by the server's handler): a stalled reader holds its whole
  answer until the write timeout. A write that cannot be held even after every journal entry went is
  refused (the server drops that connection, journaled as ``llm_test_server_memory_exhausted``).

The oldest entry across sessions is found without scanning sessions: ``_arrivals`` holds one reference
to the receiving journal per entry appended, in arrival order. Within one journal, entries leave oldest
first (eviction by its own limits, ``clear``), so a journal counts how many of its arrivals are gone
(``stale``) and the budget skips that many of its references before it evicts. The deque is compacted
when stale references outnumber live ones, so it stays within twice the live entries (plus a constant).

No lock of its own: counters are plain integers changed between cooperative switches (one gevent
worker), and a session's journal lock is only ever *tried* by another session's eviction, never waited
for (a busy journal ends that eviction round; the next growth resumes it). Sessions never wait on each
other.
"""

from __future__ import annotations

import os
from collections import deque
from typing import Protocol

__all__ = [
    "DEFAULT_MAX_MEMORY_BYTES",
    "MIN_MAX_MEMORY_BYTES",
    "MemoryBudget",
    "default_max_memory",
    "parse_memory_size",
]

_MiB = 1024 * 1024
# Without a readable machine size: 1 GiB.
DEFAULT_MAX_MEMORY_BYTES = 1024 * _MiB
# Default: a quarter of the machine's memory, between 256 MiB and 8 GiB.
_DEFAULT_SHARE = 4
_DEFAULT_FLOOR = 256 * _MiB
_DEFAULT_CEILING = 8 * 1024 * _MiB
# Smallest accepted budget: a few sessions' worth of small entries.
MIN_MAX_MEMORY_BYTES = 1 * _MiB
# Stale arrivals tolerated before a compaction (beyond as many as there are live entries).
_COMPACT_SLACK = 4096
_UNITS = {"": 1, "b": 1, "k": 1024, "kb": 1024, "kib": 1024, "m": _MiB, "mb": _MiB, "mib": _MiB}
_UNITS.update({"g": 1024 * _MiB, "gb": 1024 * _MiB, "gib": 1024 * _MiB})


def default_max_memory() -> int:
    """A quarter of the machine's physical memory, clamped to [256 MiB, 8 GiB]."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return DEFAULT_MAX_MEMORY_BYTES
    if total <= 0:
        return DEFAULT_MAX_MEMORY_BYTES
    return max(_DEFAULT_FLOOR, min(_DEFAULT_CEILING, total // _DEFAULT_SHARE))


def parse_memory_size(text: str) -> int:
    """``1073741824``, ``512M``, ``2GiB``, ``64kb`` (binary units) -> bytes; ValueError when malformed."""
    value = text.strip().lower()
    digits = value.rstrip("abgikm")
    unit = value[len(digits) :]
    if not digits.isdigit() or unit not in _UNITS:
        raise ValueError(f"not a memory size: {text!r} (examples: 536870912, 512M, 2G)")
    return int(digits) * _UNITS[unit]


class BudgetedJournal(Protocol):
    """What the budget needs of a journal (llmts.runtime.journal.Journal)."""

    stale: int

    def evict_oldest_for_budget(self) -> int | None:
        """Evict this journal's oldest entry; its accounted bytes, or None when the journal is busy."""


class MemoryBudget:
    """Accounted bytes of every session, against ``max_bytes``; evicts journal entries oldest-first."""

    def __init__(self, max_bytes: int | None = None) -> None:
        self.max_bytes = max_bytes if max_bytes is not None else default_max_memory()
        self.journal_bytes = 0
        self.journal_entries = 0
        self.store_bytes = 0
        self.conversation_bytes = 0
        # Exchanges recording sessions keep (docs/recording.md); never evicted, like stored objects.
        self.recording_bytes = 0
        # Every session's configuration in force, at its estimated resident size (runtime/resident_size.py).
        self.configuration_bytes = 0
        # What the sessions' MCP servers and A2A agents hold (client sessions, tasks): never evicted.
        self.peer_bytes = 0
        # What open realtime connections keep (their fixed cost and conversations).
        self.realtime_bytes = 0
        # Response bytes held for clients that do not read, while their write waits (``hold``).
        self.held_write_bytes = 0
        # Journal entries evicted because the process budget was full (not by a session's own limits).
        self.evicted_entries = 0
        # Growth of stores / conversation state refused with 507.
        self.refused = 0
        self._arrivals: deque[BudgetedJournal] = deque()

    @property
    def used_bytes(self) -> int:
        return (
            self.journal_bytes
            + self.store_bytes
            + self.conversation_bytes
            + self.recording_bytes
            + self.configuration_bytes
            + self.peer_bytes
            + self.realtime_bytes
            + self.held_write_bytes
        )

    # --- journals -----------------------------------------------------------------------------------

    def entry_added(self, journal: BudgetedJournal, size: int) -> None:
        self._arrivals.append(journal)
        self.journal_entries += 1
        self.journal_bytes += size
        if len(self._arrivals) > 2 * self.journal_entries + _COMPACT_SLACK:
            self._compact()
        if self.used_bytes > self.max_bytes:
            self._evict(0)

    def journal_grew(self, delta: int) -> None:
        self.journal_bytes += delta
        if delta > 0 and self.used_bytes > self.max_bytes:
            self._evict(0)

    def entries_removed(self, count: int, size: int) -> None:
        """A journal dropped ``count`` entries of ``size`` bytes by itself (its limits, reset, delete)."""
        self.journal_entries -= count
        self.journal_bytes -= size

    def _evict(self, room: int) -> None:
        arrivals = self._arrivals
        while arrivals and self.used_bytes + room > self.max_bytes:
            journal = arrivals.popleft()
            if journal.stale:
                journal.stale -= 1
                continue
            freed = journal.evict_oldest_for_budget()
            if freed is None:  # that session is busy right now: never wait for it
                arrivals.appendleft(journal)
                return
            if not freed:  # nothing left there (cannot happen while ``stale`` is kept right)
                continue
            self.journal_entries -= 1
            self.journal_bytes -= freed
            self.evicted_entries += 1

    def _compact(self) -> None:
        """Drop the references of entries already gone (runs without yielding, so nothing interleaves)."""
        kept: deque[BudgetedJournal] = deque()
        skip: dict[int, int] = {}
        for journal in self._arrivals:
            key = id(journal)
            left = skip.setdefault(key, journal.stale)
            if left:
                skip[key] = left - 1
            else:
                kept.append(journal)
        for journal in self._arrivals:
            journal.stale = 0
        self._arrivals = kept

    # --- stores and conversation state ----------------------------------------------------------------

    def make_room(self, growth: int) -> bool:
        """Evict journal entries until ``growth`` more bytes fit; whether they do. Growth that could not fit
        even without any journal entry is refused before any is evicted: their evidence stays."""
        if growth <= 0:
            return True
        if not self.fits_without_journals(growth):
            self.refused += 1
            return False
        if self.used_bytes + growth > self.max_bytes:
            self._evict(growth)
        if self.used_bytes + growth > self.max_bytes:  # a busy journal ended the eviction round
            self.refused += 1
            return False
        return True

    def fits_without_journals(self, growth: int) -> bool:
        """Whether ``growth`` more bytes could fit once every journal entry were evicted."""
        return self.used_bytes - self.journal_bytes + growth <= self.max_bytes

    def evict_for(self, growth: int) -> None:
        """Evict journal entries until ``growth`` more bytes fit, or no idle journal has any left."""
        if growth > 0 and self.used_bytes + growth > self.max_bytes:
            self._evict(growth)

    def hold(self, size: int) -> bool:
        """A write of ``size`` bytes waits for its client: charge them (evicting journal entries to make
        room); False, and nothing charged, when they cannot fit."""
        if not self.make_room(size):
            return False
        self.held_write_bytes += size
        return True

    def release(self, size: int) -> None:
        """The write ``hold`` charged for is over (sent, timed out or failed)."""
        self.held_write_bytes -= size

    def state_changed(self, kind: str, delta: int) -> None:
        """A share of ``kind`` (``store``, ``conversation``, ``recording``, ``configuration``, ``peer``,
        ``realtime``) grew by ``delta`` bytes (negative: shrank)."""
        attribute = kind + "_bytes"
        setattr(self, attribute, getattr(self, attribute) + delta)

    def report(self) -> dict[str, int]:
        """The ``memory`` object of ``GET /admin-api/process``."""
        return {
            "max_bytes": self.max_bytes,
            "used_bytes": self.used_bytes,
            "journal_bytes": self.journal_bytes,
            "journal_entries": self.journal_entries,
            "store_bytes": self.store_bytes,
            "conversation_bytes": self.conversation_bytes,
            "recording_bytes": self.recording_bytes,
            "configuration_bytes": self.configuration_bytes,
            "peer_bytes": self.peer_bytes,
            "realtime_bytes": self.realtime_bytes,
            "held_write_bytes": self.held_write_bytes,
            "evicted_entries": self.evicted_entries,
            "refused": self.refused,
        }
