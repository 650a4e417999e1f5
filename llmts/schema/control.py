"""Models of the control API's own bodies (``/admin-api/*``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

__all__ = ["ControlError", "ControlErrorBody", "ErrorDetail", "SessionInfo"]


class SessionInfo(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    provider_base: str
    configured: bool = False


class ErrorDetail(BaseModel):
    path: str
    message: str


class ControlError(BaseModel):
    code: str
    message: str
    details: list[dict[str, Any]] = []


class ControlErrorBody(BaseModel):
    error: ControlError
