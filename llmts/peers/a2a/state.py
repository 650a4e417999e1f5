"""One scripted agent's state in a session (``session.peers.state("a2a", name, ...)``): the cursor over its
``responses``, the tasks it created and their push-notification configurations.

Bounds (docs/a2a.md, "Limits"): at most ``a2a_tasks_per_agent`` tasks and ``TASK_BYTES`` bytes of the
messages they keep, the oldest task evicted first (a later get answers TaskNotFound); a task keeps its
last ``HISTORY_PER_TASK`` messages and at most ``PUSH_CONFIGS_PER_TASK`` push configurations.

Locking: ``lock`` guards everything here; the engine holds it for one request's decision and rendering
(never across a wait or a write), so one agent's slow client never holds the session lock.
"""

from __future__ import annotations

import threading

from llmts.peers.a2a.model import Msg, TaskRecord
from llmts.schema.a2a import A2aAgent, A2aResponse
from llmts.schema.peer_limits import PEER_LIMITS

__all__ = ["HISTORY_PER_TASK", "PUSH_CONFIGS_PER_TASK", "TASK_BYTES", "A2aAgentState"]

HISTORY_PER_TASK = 64
PUSH_CONFIGS_PER_TASK = 16
TASK_BYTES = 8 * 1024 * 1024
_TASKS = PEER_LIMITS["a2a_tasks_per_agent"]


class A2aAgentState:
    __slots__ = ("_bytes", "_next", "_order", "_tasks", "agent", "closed", "evicted", "lock")

    def __init__(self, agent: A2aAgent) -> None:
        self.agent = agent
        self.lock = threading.Lock()
        self.closed = False
        self.evicted = 0
        self._next = 0
        self._order = 0
        self._bytes = 0
        # Insertion order is creation order: eviction takes the first.
        self._tasks: dict[str, TaskRecord] = {}

    def close(self) -> None:
        """The configuration is gone (reset, configure, delete): nothing waits on this state, so there is
        nothing to end; answers already decided are still written."""
        self.closed = True

    # --- with ``lock`` held -----------------------------------------------------------------------------

    def next_response_locked(self) -> tuple[int, A2aResponse] | None:
        """The next scripted response and its index, under the agent's ``terminal_policy``; None when the
        script is exhausted (``reject``) or empty."""
        responses = self.agent.responses
        if not responses:
            return None
        index = self._next
        if index >= len(responses):
            policy = self.agent.terminal_policy
            if policy == "repeat_last_response":
                index = len(responses) - 1
            elif policy == "restart":
                index = 0
            else:
                return None
        self._next = index + 1
        return index, responses[index]

    def task_locked(self, task_id: str) -> TaskRecord | None:
        return self._tasks.get(task_id)

    def tasks_locked(self) -> list[TaskRecord]:
        return list(self._tasks.values())

    def touch_locked(self, task: TaskRecord) -> None:
        """The task changed: it moves to the front of ListTasks."""
        self._order += 1
        task.order = self._order

    def add_locked(self, task: TaskRecord) -> None:
        self.touch_locked(task)
        self._tasks[task.id] = task
        self._bytes += task.retained
        self._evict_locked()

    def remember_locked(self, task: TaskRecord, message: Msg, size: int) -> None:
        """Append ``message`` (``size``: an upper bound of the bytes it holds) to the task's history."""
        task.history.append(message)
        task.retained += size
        if task.id in self._tasks:
            self._bytes += size
        while len(task.history) > HISTORY_PER_TASK:
            task.history.pop(0)
        self._evict_locked(keep=task.id)

    def _evict_locked(self, keep: str | None = None) -> None:
        tasks = self._tasks
        while len(tasks) > _TASKS or (self._bytes > TASK_BYTES and len(tasks) > 1):
            oldest = next(iter(tasks))
            if oldest == keep:  # the task being answered stays; take the next oldest
                oldest = next((task_id for task_id in tasks if task_id != keep), keep)
                if oldest == keep:
                    return
            self._bytes -= tasks.pop(oldest).retained
            self.evicted += 1
