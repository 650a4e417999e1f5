"""The session part that keeps what a ``record: true`` session recorded (docs/recording.md): the
``Recorder`` of its configuration (None when not recording), charged to the process memory budget.

Order: a request takes its place with ``reserve`` when it is admitted and ``keep`` puts its exchange
there, so the recording is in request order, not completion order (``Recorder``).

Locking: ``room`` and ``active`` read one reference; ``reserve``, ``keep``, ``drop`` and ``recorded`` take
the session lock (``keep`` redacts before taking it: CPU only); the ``*_locked`` methods are the
session's, called with that lock held.
"""

from __future__ import annotations

import inspect
import threading
import weakref
from collections.abc import Callable

from llmts.errors import RecordingFull
from llmts.runtime.memory import MemoryBudget
from llmts.runtime.recording import Exchange, Recorder
from llmts.runtime.session_memory import MemoryShare

__all__ = ["SessionRecorder"]


class SessionRecorder:
    """The kept exchanges of the session's current configuration, within ``recording``'s bounds."""

    __slots__ = ("_is_current", "_last_ordinal", "_lock", "_recorder", "_share")

    def __init__(
        self, lock: threading.Lock, budget: MemoryBudget | None, is_current: Callable[[int], bool]
    ) -> None:
        self._lock = lock
        self._share = MemoryShare(budget, "recording")
        # The session's generation check: an exchange of a reset or reconfigured session is not kept. Held
        # weakly: a strong reference to the session's bound method would make session and part a cycle,
        # so a deleted session (its plan, caches, queues) would wait for the cyclic collector.
        self._is_current: Callable[[], Callable[[int], bool] | None] = (
            weakref.WeakMethod(is_current) if inspect.ismethod(is_current) else lambda: is_current
        )
        self._recorder: Recorder | None = None
        # The last place handed out (``reserve``). Never reset, not even by a reconfigure: a place always
        # names one request, and an earlier request always has a smaller one.
        self._last_ordinal = 0

    @property
    def memory_charged(self) -> int:
        """What this part has charged to the memory budget (a reconfigure frees it)."""
        return self._share.charged

    @property
    def active(self) -> bool:
        """Whether the session records (``record: true``)."""
        return self._recorder is not None

    def room(self) -> None:
        """Raise 507 when the recording already holds ``max_exchanges`` (before anything is forwarded)."""
        recorder = self._recorder
        if recorder is not None and recorder.full:
            raise RecordingFull(
                f"this session's recording already keeps {recorder.settings.max_exchanges} exchanges "
                "(recording.max_exchanges); fetch it and reset the session"
            )

    def reserve(self) -> int | None:
        """A request's place in the recording, taken when it is admitted (None: the session does not
        record). A place that is never kept leaves no gap and holds nothing back."""
        if self._recorder is None:
            return None
        with self._lock:
            self._last_ordinal += 1
            return self._last_ordinal

    def keep(
        self, exchange: Exchange, secrets: tuple[str, ...], generation: int, ordinal: int | None = None
    ) -> bool:
        """Keep an answered exchange, redacted (``secrets``: the credential the client presented, and a
        signer's own key id and token; and the configured patterns), at the place ``ordinal`` that
        ``reserve`` gave its request (None: after every place taken so far). False when it was not kept: no
        recording, the session moved on (``generation``: a place of an earlier recording is never kept),
        or it does not fit ``max_exchanges``, ``max_bytes`` or the memory budget (counted as dropped)."""
        recorder = self._recorder
        if recorder is None:
            return False
        redacted = recorder.redactor.exchange(exchange, secrets)  # outside the lock: CPU only
        size = redacted.retained_bytes()
        with self._lock:
            is_current = self._is_current()
            if self._recorder is not recorder or is_current is None or not is_current(generation):
                return False
            if not recorder.fits(size) or not self._share.fits(size):
                recorder.dropped += 1
                return False
            if ordinal is None:
                self._last_ordinal += 1
                ordinal = self._last_ordinal
            recorder.keep(redacted, size, ordinal)
            self._share.charge(recorder.retained_bytes)
            return True

    def drop(self) -> None:
        """An answered exchange that could not be kept (over the recorded-answer limits): counted."""
        with self._lock:
            if self._recorder is not None:
                self._recorder.dropped += 1

    def recorded(self) -> tuple[list[Exchange], int]:
        """The kept exchanges in request order, and how many were dropped."""
        with self._lock:
            recorder = self._recorder
            return (recorder.exchanges(), recorder.dropped) if recorder is not None else ([], 0)

    def install_locked(self, recorder: Recorder | None) -> None:
        self._recorder = recorder

    def clear_locked(self) -> None:
        if self._recorder is not None:
            self._recorder.clear()
        self._share.charge(0)

    def retire_locked(self) -> None:
        self._recorder = None
        self._share.detach()
