"""One scripted agent's state in a session (``session.peers.state("a2a", name, ...)``): the cursor over its
``responses``, the tasks it created and their push-notification configurations.

Bounds (docs/a2a.md, "Limits"): at most ``a2a_tasks_per_agent`` tasks, holding at most ``TASK_BYTES``
bytes in all: each history message at the size of the request body that brought it (a reply at its text's
length), each artifact and push configuration at the length of its texts (data as JSON) plus
``ITEM_BYTES``. The oldest task is evicted first (a later get answers TaskNotFound); the engine refuses a
request that would make one task hold more than ``TASK_BYTES`` by itself, so the task being answered
never has to go. A task keeps its last ``HISTORY_PER_TASK`` messages and at most ``PUSH_CONFIGS_PER_TASK``
push configurations.

Memory: the state charges ``resident_bytes`` to the process memory budget through its ``MemoryShare``:
each received message at the estimate of what it holds (``message_resident`` of its request body), a
reply at its text plus ``MESSAGE_RESIDENT_BYTES``, artifacts and push configurations as counted, and
``TASK_RESIDENT_BYTES`` per task. The engine checks a change (``task_change_locked``) against the task
limit and the budget (``fits_locked``) before it makes a task grow.

Locking: ``lock`` guards everything here; the engine holds it for one request's decision and rendering
(never across a wait or a write), so one agent's slow client never holds the session lock. ``closed`` is
set (without that lock) when the configuration is gone: an answer decided from a closed state is
superseded, since what it changed is in a state nobody reads any more.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence

import orjson

from llmts.peers.a2a.model import Artifact, Msg, PushConfig, TaskRecord
from llmts.runtime.resident_size import json_size
from llmts.runtime.session_memory import MemoryShare
from llmts.schema.a2a import A2aAgent, A2aResponse
from llmts.schema.peer_limits import PEER_LIMITS

__all__ = [
    "HISTORY_PER_TASK",
    "ITEM_BYTES",
    "MESSAGE_RESIDENT_BYTES",
    "PUSH_CONFIGS_PER_TASK",
    "TASK_BYTES",
    "TASK_RESIDENT_BYTES",
    "A2aAgentState",
    "message_resident",
    "push_bytes",
]

HISTORY_PER_TASK = 64
PUSH_CONFIGS_PER_TASK = 16
TASK_BYTES = 8 * 1024 * 1024
# What an artifact or a push configuration counts beyond its texts (so empty ones are not free).
ITEM_BYTES = 64
# What the budget is charged beyond the texts for a task itself and for a message llmts wrote (measured:
# tests/peers/a2a/test_a2a_memory.py).
TASK_RESIDENT_BYTES = 1024
MESSAGE_RESIDENT_BYTES = 512


def message_resident(body: bytes) -> int:
    """The estimated resident bytes of the message a request ``body`` brings: its parts as objects, not
    the parsed JSON-RPC envelope, so two thirds of ``json_size``, and never less than the body. Measured
    1.05-1.7 times what stored messages hold, from one long text to hundreds of short parts or data
    values; up to 3.3 times for messages of a few words."""
    return max(len(body), json_size(body) * 2 // 3)


_TASKS = PEER_LIMITS["a2a_tasks_per_agent"]


def push_bytes(config: PushConfig) -> int:
    texts = (config.id, config.url, config.token or "", config.credentials or "", *config.schemes)
    return ITEM_BYTES + sum(len(text) for text in texts)


def _growth(
    task: TaskRecord,
    held: Sequence[int],
    messages: Sequence[int],
    artifacts: int,
    push: PushConfig | None,
) -> int:
    """What ``task`` gains with ``messages`` added to a history whose messages count ``held`` (the oldest
    beyond ``HISTORY_PER_TASK`` dropped), ``artifacts`` more and ``push`` stored in place of its id's."""
    sizes = [*held, *messages]
    growth = sum(messages) - sum(sizes[: max(0, len(sizes) - HISTORY_PER_TASK)]) + artifacts
    if push is not None:
        growth += push_bytes(push)
        replaced = task.push_configs.get(push.id)
        if replaced is not None:
            growth -= push_bytes(replaced)
    return growth


class A2aAgentState:
    __slots__ = (
        "_artifact_bytes",
        "_bytes",
        "_next",
        "_order",
        "_resident",
        "_tasks",
        "agent",
        "closed",
        "evicted",
        "lock",
        "memory",
    )

    def __init__(self, agent: A2aAgent, memory: MemoryShare | None = None) -> None:
        self.agent = agent
        self.memory = memory if memory is not None else MemoryShare(None, "peer")
        self.lock = threading.Lock()
        self.closed = False
        self.evicted = 0
        self._next = 0
        self._order = 0
        self._bytes = 0
        self._resident = 0
        # Insertion order is creation order: eviction takes the first.
        self._tasks: dict[str, TaskRecord] = {}
        # The bytes of each task response's artifacts, by response index (measured on first use).
        self._artifact_bytes: dict[int, int] = {}

    def close(self) -> None:
        """The configuration is gone (reset, configure, delete): answers decided from now on are
        superseded (must not block: called with the session lock held)."""
        self.closed = True

    @property
    def retained_bytes(self) -> int:
        """What the agent's tasks hold in all (at most ``TASK_BYTES``)."""
        return self._bytes

    @property
    def resident_bytes(self) -> int:
        """What the process budget is charged for the tasks (their estimated resident size)."""
        return self._resident

    @property
    def task_byte_limit(self) -> int:
        """What all tasks, and so each one, may hold: ``TASK_BYTES``."""
        return TASK_BYTES

    # --- with ``lock`` held -----------------------------------------------------------------------------

    def peek_response_locked(self) -> tuple[int, A2aResponse] | None:
        """The next scripted response and its index, under the agent's ``terminal_policy``, without
        consuming it (``consume_locked``); None when the script is exhausted (``reject``) or empty."""
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
        return index, responses[index]

    def consume_locked(self, index: int) -> None:
        self._next = index + 1

    def artifact_bytes_locked(self, index: int) -> int:
        """What the artifacts of task response ``index`` count (``ITEM_BYTES`` plus the texts of each)."""
        size = self._artifact_bytes.get(index)
        if size is None:
            task = self.agent.responses[index].task
            size = 0
            for artifact in task.artifacts if task is not None else ():
                text = artifact.text
                content = len(text) if text is not None else len(orjson.dumps(artifact.data))
                size += ITEM_BYTES + content + len(artifact.name or "") + len(artifact.description or "")
            self._artifact_bytes[index] = size
        return size

    def task_change_locked(
        self,
        task: TaskRecord,
        messages: Sequence[tuple[int, int]] = (),
        artifacts: int = 0,
        push: PushConfig | None = None,
    ) -> tuple[int, int]:
        """What ``task`` (one not stored yet: a new one) would hold with ``messages`` (each its counted and
        its resident size) added to its history (the oldest beyond ``HISTORY_PER_TASK`` dropped),
        ``artifacts`` bytes more artifacts and ``push`` stored (replacing the configuration with its id):
        the bytes it would count, and the resident bytes it would gain (the budget's charge)."""
        counted = [size for size, _ in messages]
        resident = [size for _, size in messages]
        size = task.retained + _growth(task, task.history_bytes, counted, artifacts, push)
        growth = _growth(task, task.history_resident, resident, artifacts, push)
        if self._tasks.get(task.id) is not task:
            growth += TASK_RESIDENT_BYTES
        return size, growth

    def fits_locked(self, growth: int) -> bool:
        """Whether ``growth`` more resident bytes fit the process memory budget (journal entries are
        evicted for the room; a refusal is counted)."""
        return growth <= 0 or self.memory.fits(growth)

    def task_locked(self, task_id: str) -> TaskRecord | None:
        return self._tasks.get(task_id)

    def tasks_locked(self) -> list[TaskRecord]:
        return list(self._tasks.values())

    def add_locked(self, task: TaskRecord) -> None:
        """Store a new task (what it holds already counted in ``task.retained``)."""
        self._tasks[task.id] = task
        task.resident += TASK_RESIDENT_BYTES
        self._bytes += task.retained
        self._resident += task.resident
        self.touch_locked(task)
        self.memory.charge(self._resident)

    def touch_locked(self, task: TaskRecord) -> None:
        """The task changed: it moves to the front of ListTasks, and older tasks go to make room."""
        self._order += 1
        task.order = self._order
        self._evict_locked(keep=task.id)

    def remember_locked(self, task: TaskRecord, message: Msg, size: int, resident: int) -> None:
        """Append ``message`` (``size``: an upper bound of the bytes it holds; ``resident``: the estimate
        of what it holds parsed) to the task's history."""
        task.history.append(message)
        task.history_bytes.append(size)
        task.history_resident.append(resident)
        grown, grown_resident = size, resident
        while len(task.history) > HISTORY_PER_TASK:
            task.history.pop(0)
            grown -= task.history_bytes.pop(0)
            grown_resident -= task.history_resident.pop(0)
        self._grow_locked(task, grown, grown_resident)

    def add_artifacts_locked(self, task: TaskRecord, artifacts: Iterable[Artifact], size: int) -> None:
        task.artifacts.extend(artifacts)
        self._grow_locked(task, size, size)

    def set_push_locked(self, task: TaskRecord, config: PushConfig) -> None:
        replaced = task.push_configs.get(config.id)
        task.push_configs[config.id] = config
        size = push_bytes(config) - (push_bytes(replaced) if replaced is not None else 0)
        self._grow_locked(task, size, size)
        self._evict_locked(keep=task.id)

    def delete_push_locked(self, task: TaskRecord, config_id: str) -> None:
        removed = task.push_configs.pop(config_id, None)
        if removed is not None:
            self._grow_locked(task, -push_bytes(removed), -push_bytes(removed))

    def _grow_locked(self, task: TaskRecord, size: int, resident: int) -> None:
        task.retained += size
        task.resident += resident
        if self._tasks.get(task.id) is task:
            self._bytes += size
            self._resident += resident
            self.memory.charge(self._resident)

    def _evict_locked(self, keep: str) -> None:
        # The kept task fits by itself (the engine refuses a request that would make it not), so taking
        # every other task is always enough.
        tasks = self._tasks
        while len(tasks) > _TASKS or (self._bytes > TASK_BYTES and len(tasks) > 1):
            oldest = next(task_id for task_id in tasks if task_id != keep)
            evicted = tasks.pop(oldest)
            self._bytes -= evicted.retained
            self._resident -= evicted.resident
            self.evicted += 1
        self.memory.charge(self._resident)
