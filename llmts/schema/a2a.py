"""The ``a2a_agents`` configuration section (docs/a2a.md): a session's scripted A2A agents.

An agent answers at ``/a2a/{name}`` (JSON-RPC) with its card at
``/a2a/{name}/.well-known/agent-card.json``; its ``responses`` are consumed in order by the messages sent
to it (``terminal_policy`` as scenarios): a message (``text``), a task that moves through ``states`` with
``artifacts``, or a JSON-RPC ``error``; each may be delayed and streamed with a ``stream_delivery`` plan.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, model_serializer, model_validator

from llmts.schema.faults import IN_STREAM_MODES, StreamDelivery
from llmts.schema.fixtures import LIMITS, TerminalPolicy
from llmts.schema.mcp import McpError, check_unique_names
from llmts.schema.model_base import STRICT
from llmts.schema.peer_limits import PEER_LIMITS

__all__ = ["A2aAgent", "A2aArtifact", "A2aResponse", "A2aSkill", "A2aTask", "TaskState"]

_TEXT_CHARS = PEER_LIMITS["a2a_text_chars"]

# The task states of the A2A specification, in its lower-case JSON spelling.
TaskState = Literal[
    "submitted",
    "working",
    "input-required",
    "completed",
    "canceled",
    "failed",
    "rejected",
    "auth-required",
]


def _drop_unset(data: dict[str, Any]) -> dict[str, Any]:
    """The configuration as the user wrote it: no nulls, no zero delay (configure echoes it back)."""
    return {key: value for key, value in data.items() if value is not None and (key != "delay_ms" or value)}


class A2aSkill(BaseModel):
    model_config = STRICT

    id: str = Field(min_length=1, max_length=LIMITS["identifier_chars"])
    name: str = Field(min_length=1, max_length=LIMITS["identifier_chars"])
    description: str = Field(default="", max_length=_TEXT_CHARS)
    tags: list[str] = Field(default_factory=list, max_length=64)
    examples: list[str] = Field(default_factory=list, max_length=64)


class A2aArtifact(BaseModel):
    """A task artifact: exactly one of ``text`` and ``data`` (a JSON object)."""

    model_config = STRICT

    name: str | None = Field(default=None, max_length=LIMITS["identifier_chars"])
    description: str | None = Field(default=None, max_length=_TEXT_CHARS)
    text: str | None = Field(default=None, max_length=_TEXT_CHARS)
    data: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _one_part(self) -> A2aArtifact:
        if (self.text is None) == (self.data is None):
            raise ValueError("an artifact needs exactly one of text, data")
        return self

    @model_serializer(mode="wrap")
    def _compact(self, handler: Any) -> dict[str, Any]:
        return _drop_unset(handler(self))


def _default_states() -> list[TaskState]:
    return ["submitted", "working", "completed"]


class A2aTask(BaseModel):
    """A task that moves through ``states`` (the last is where it stays), with ``artifacts`` produced
    before the last state and an optional status ``message`` on it."""

    model_config = STRICT

    states: list[TaskState] = Field(
        default_factory=_default_states,
        min_length=1,
        max_length=PEER_LIMITS["a2a_states_per_task"],
    )
    artifacts: list[A2aArtifact] = Field(
        default_factory=list, max_length=PEER_LIMITS["a2a_artifacts_per_task"]
    )
    message: str | None = Field(default=None, max_length=_TEXT_CHARS)

    @model_serializer(mode="wrap")
    def _compact(self, handler: Any) -> dict[str, Any]:
        return _drop_unset(handler(self))


class A2aResponse(BaseModel):
    """One scripted answer to a message: exactly one of ``text``, ``task``, ``error``."""

    model_config = STRICT

    text: str | None = Field(default=None, max_length=_TEXT_CHARS)
    task: A2aTask | None = None
    error: McpError | None = None
    delay_ms: int = Field(default=0, ge=0, le=LIMITS["delay_ms"])
    stream_delivery: StreamDelivery | None = None

    @model_validator(mode="after")
    def _one_answer(self) -> A2aResponse:
        given = [name for name in ("text", "task", "error") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError("an A2A response needs exactly one of text, task, error")
        plan = self.stream_delivery
        if plan is None or plan.mode not in IN_STREAM_MODES:
            return self
        # An in-stream fault acts after a content frame: only a task streamed through two or more states
        # has one (a message, an error and a one-state task are one event, the stream's terminal frame).
        if self.task is None or len(self.task.states) < 2:
            raise ValueError(
                f"stream_delivery {plan.mode} acts between the events of a stream: it needs a task with at "
                "least two states (a message, an error or a one-state task is a single event)"
            )
        # Every event but the last status update is a content frame: the task as it starts, a status
        # update per state between the first and the last, an artifact update per artifact.
        states, artifacts = len(self.task.states), len(self.task.artifacts)
        frames = states - 1 + artifacts
        if plan.after_content_frames > frames:
            raise ValueError(
                f"stream_delivery.after_content_frames {plan.after_content_frames} is unreachable: the "
                f"stream has {frames} content frame(s) (the task as it starts, {states - 2} status "
                f"update(s) between its first and last state, {artifacts} artifact update(s))"
            )
        return self

    @model_serializer(mode="wrap")
    def _compact(self, handler: Any) -> dict[str, Any]:
        data = _drop_unset(handler(self))
        error = data.get("error")
        if isinstance(error, dict) and error.get("data") is None:
            error.pop("data", None)
        return data


class A2aAgent(BaseModel):
    """One scripted A2A agent, answering at ``/a2a/{name}``."""

    model_config = STRICT

    name: str = Field(min_length=1, max_length=LIMITS["identifier_chars"], pattern=r"^[A-Za-z0-9_.\-]+$")
    description: str = Field(default="A scripted llmts agent", max_length=_TEXT_CHARS)
    version: str = Field(default="1.0.0", min_length=1, max_length=64)
    skills: list[A2aSkill] = Field(default_factory=list, max_length=PEER_LIMITS["a2a_skills_per_agent"])
    responses: list[A2aResponse] = Field(
        default_factory=list, max_length=PEER_LIMITS["a2a_responses_per_agent"]
    )
    terminal_policy: TerminalPolicy = "reject"
    # The card's ``capabilities``: streaming methods answer only when ``streaming``; the push-notification
    # config methods store configurations only with ``push_notifications`` (llmts never calls the webhook).
    streaming: bool = True
    push_notifications: bool = False

    @model_validator(mode="after")
    def _unique(self) -> A2aAgent:
        check_unique_names(self.skills, "skills", "id")
        return self
