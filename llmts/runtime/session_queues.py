"""The session part that holds each scenario's queue cursor: how many of its responses the current pass
consumed. ``Session.admit`` advances a cursor when it commits a scenario's answer; configure and reset
start every queue over.

Locking: ``status`` takes the session lock; ``cursors`` and ``restart_locked`` are the session's, read and
changed with that lock held (admission selects and commits in one step).
"""

from __future__ import annotations

import threading

from llmts.runtime.conversations.selection import queue_position
from llmts.runtime.plans import SessionPlan
from llmts.schema.control import QueueStatus

__all__ = ["SessionQueues"]


class SessionQueues:
    """One cursor per scenario of the plan the queues were last restarted with."""

    __slots__ = ("_lock", "_plan", "cursors")

    def __init__(self, lock: threading.Lock) -> None:
        self._lock = lock
        self._plan: SessionPlan | None = None
        self.cursors: list[int] = []

    def status(self) -> list[QueueStatus]:
        """Each scenario's queue: responses consumed in the current pass and the next one to answer
        (``GET /admin-api/queues``)."""
        with self._lock:
            plan, cursors = self._plan, list(self.cursors)
        if plan is None:
            return []
        statuses = []
        for index, (scenario, cursor) in enumerate(zip(plan.scenarios, cursors, strict=True)):
            upcoming = queue_position(scenario, cursor)
            statuses.append(
                QueueStatus(
                    index=index,
                    scenario=scenario.id,
                    terminal_policy=scenario.terminal_policy,
                    length=len(scenario.responses),
                    consumed=cursor,
                    next_response_index=upcoming,
                    exhausted=upcoming is None,
                )
            )
        return statuses

    def restart_locked(self, plan: SessionPlan | None) -> None:
        self._plan = plan
        self.cursors = [0] * len(plan.scenarios) if plan is not None else []
