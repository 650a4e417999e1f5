"""The neutral A2A objects both wires render (docs/a2a.md): parts, messages, artifacts and the stored task.

A task is kept in one spelling, whichever wire created it, so a task sent over the 1.0 wire can be read
over the 0.3 wire and the other way round. States use the lower-case spelling of the configuration
(``llmts.schema.a2a.TaskState``); each wire maps them to its own names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "INTERRUPTED_STATES",
    "TERMINAL_STATES",
    "Artifact",
    "FileRef",
    "Msg",
    "Part",
    "PushConfig",
    "Status",
    "TaskRecord",
    "TaskView",
]

# No further change can happen to a task in these states (cancel, subscribe and new messages refuse it).
TERMINAL_STATES = frozenset({"completed", "canceled", "failed", "rejected"})
# The task waits for the client: a message that names the task continues it.
INTERRUPTED_STATES = frozenset({"input-required", "auth-required"})


@dataclass(frozen=True, slots=True)
class FileRef:
    """A file part: a URI or inline base64 bytes, with its media type and file name."""

    uri: str | None = None
    bytes_b64: str | None = None
    media_type: str | None = None
    name: str | None = None


@dataclass(frozen=True, slots=True)
class Part:
    """One part of a message or artifact: ``kind`` is ``text``, ``data`` (any JSON value) or ``file``."""

    kind: str
    text: str | None = None
    data: Any = None
    file: FileRef | None = None
    metadata: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Msg:
    message_id: str
    role: str  # "user" or "agent"
    parts: tuple[Part, ...]
    context_id: str | None = None
    task_id: str | None = None
    metadata: dict[str, Any] | None = None
    reference_task_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Artifact:
    artifact_id: str
    parts: tuple[Part, ...]
    name: str | None = None
    description: str | None = None


@dataclass(frozen=True, slots=True)
class Status:
    state: str
    timestamp: str
    message: Msg | None = None


@dataclass(frozen=True, slots=True)
class PushConfig:
    """A push-notification configuration as a client set it (both wires' fields, neutral)."""

    id: str
    url: str
    token: str | None = None
    schemes: tuple[str, ...] = ()
    credentials: str | None = None


@dataclass(frozen=True, slots=True)
class TaskView:
    """What one answer shows of a task (a snapshot: the record may change after the lock is released)."""

    id: str
    context_id: str
    status: Status
    history: tuple[Msg, ...] = ()
    artifacts: tuple[Artifact, ...] = ()


@dataclass(slots=True)
class TaskRecord:
    """A stored task. Changed only by ``A2aAgentState`` under its lock; wires render it there."""

    id: str
    context_id: str
    status: Status
    history: list[Msg] = field(default_factory=list)
    artifacts: list[Artifact] = field(default_factory=list)
    push_configs: dict[str, PushConfig] = field(default_factory=dict)
    # When the status last changed (epoch seconds: ListTasks' statusTimestampAfter).
    updated: float = 0.0
    # The bytes of each ``history`` message (its request body's size, or a reply's text), and the estimate
    # of what each holds parsed (the memory budget's charge).
    history_bytes: list[int] = field(default_factory=list)
    history_resident: list[int] = field(default_factory=list)
    # The order of the last change (newest first in ListTasks) and the bytes the task holds: its history,
    # artifacts and push configurations (``A2aAgentState`` keeps it, docs/a2a.md "Limits").
    order: int = 0
    retained: int = 0
    # The estimate of what the task holds in memory: its messages parsed, its other bytes as counted.
    resident: int = 0

    @property
    def terminal(self) -> bool:
        return self.status.state in TERMINAL_STATES

    def view(
        self,
        *,
        history_length: int | None = None,
        artifacts: bool = True,
        status: Status | None = None,
        artifact_count: int | None = None,
    ) -> TaskView:
        """A snapshot: the last ``history_length`` messages (None: all), the artifacts (the first
        ``artifact_count`` of them when given) unless ``artifacts`` is false, and ``status`` instead of the
        current one (a stream's first event shows the task as it started)."""
        history = (
            self.history if history_length is None else self.history[len(self.history) - history_length :]
        )
        if history_length == 0:
            history = []
        shown = self.artifacts if artifact_count is None else self.artifacts[:artifact_count]
        return TaskView(
            self.id,
            self.context_id,
            status or self.status,
            tuple(history),
            tuple(shown) if artifacts else (),
        )
