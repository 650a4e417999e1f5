"""Models of the control API's own bodies (``/admin-api/*``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from llmts.schema.model_base import STRICT

__all__ = [
    "SESSION_LABEL_CHARS",
    "ControlError",
    "ControlErrorBody",
    "ErrorDetail",
    "QueueStatus",
    "SessionAnnotations",
    "SessionInfo",
    "SessionListQuery",
    "TestOutcome",
]

# The longest session label (a pytest node id, usually; docs/server.md, "Labels and test outcomes").
SESSION_LABEL_CHARS = 200

TestOutcome = Literal["passed", "failed", "skipped", "error"]


class SessionAnnotations(BaseModel):
    """What a client says about a session beside its configuration (the ``label`` and ``test_outcome``
    fields of ``POST``/``PUT /admin-api/sessions[/{id}]``): kept until the session is deleted, untouched
    by reset and configure."""

    model_config = STRICT

    label: str | None = Field(default=None, max_length=SESSION_LABEL_CHARS)
    test_outcome: TestOutcome | None = None


class SessionListQuery(BaseModel):
    """Filters of ``GET /admin-api/sessions``: ``label`` exact, ``label_contains`` a case-insensitive
    substring, ``test_outcome`` exact."""

    model_config = STRICT

    label: str | None = Field(default=None, max_length=SESSION_LABEL_CHARS)
    label_contains: str | None = Field(default=None, min_length=1, max_length=SESSION_LABEL_CHARS)
    test_outcome: TestOutcome | None = None


class SessionInfo(BaseModel):
    model_config = ConfigDict(defer_build=True, frozen=True)

    id: str
    provider_base: str
    configured: bool = False
    # Listing details (docs/server.md, "Control API"): when the session was created, what it
    # declares, and its journal's counters.
    created_at: str | None = None
    scenario_count: int = 0
    conversation_count: int = 0
    request_count: int = 0
    journal_entries: int = 0
    journal_bytes: int = 0
    evicted_count: int = 0
    # What the client said about it (``SessionAnnotations``): a label (the pytest plugin's: the test's
    # node id) and the test's outcome.
    label: str | None = None
    test_outcome: TestOutcome | None = None


class QueueStatus(BaseModel):
    """How far one scenario's response queue has advanced (``GET /admin-api/queues``)."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    index: int
    scenario: str
    terminal_policy: str
    length: int
    consumed: int
    next_response_index: int | None
    exhausted: bool


class ErrorDetail(BaseModel):
    path: str
    message: str


class ControlError(BaseModel):
    code: str
    message: str
    details: list[dict[str, Any]] = []


class ControlErrorBody(BaseModel):
    error: ControlError
