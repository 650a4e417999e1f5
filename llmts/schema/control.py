"""Models of the control API's own bodies (``/admin-api/*``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

__all__ = ["ControlError", "ControlErrorBody", "ErrorDetail", "QueueStatus", "SessionInfo"]


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
