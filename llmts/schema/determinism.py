"""The ``determinism`` configuration section: seeded wire ids and a fixed wire clock.

``{"seed": "run-42", "fixed_utc": "2026-01-01T00:00:00Z"}``. With a seed, every generated wire id
(completion, message, response, item and unset tool call ids) derives from the seed, the provider
namespace and the provider-local request ordinal; with ``fixed_utc``, every wire timestamp (``created``,
``created_at``) and the HTTP ``Date`` header use that instant. Journal timing stays real.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from pydantic import BaseModel, Field, field_validator, model_serializer

from llmts.schema.model_base import STRICT

__all__ = ["DETERMINISM_LIMITS", "Determinism"]

DETERMINISM_LIMITS: dict[str, int] = {
    "determinism_seed_chars": 256,
}


class Determinism(BaseModel):
    model_config = STRICT

    seed: str = Field(min_length=1, max_length=DETERMINISM_LIMITS["determinism_seed_chars"])
    # None: wire timestamps follow the real clock (ids are still seeded).
    fixed_utc: datetime | None = None

    @field_validator("seed")
    @classmethod
    def _nonblank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("seed must not be blank")
        return value

    @field_validator("fixed_utc")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("fixed_utc needs a time zone (e.g. 2026-01-01T00:00:00Z)")
        value = value.astimezone(timezone.utc)
        if not 0 <= value.timestamp() < 253402300800:  # 1970 .. 9999: what every wire format can carry
            raise ValueError("fixed_utc must be between 1970-01-01 and 9999-12-31")
        return value

    @model_serializer(mode="wrap")
    def _compact(self, handler: Any) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if self.fixed_utc is None:
            data.pop("fixed_utc", None)
        else:
            data["fixed_utc"] = self.fixed_utc.isoformat().replace("+00:00", "Z")
        return data

    @property
    def fixed_epoch(self) -> float | None:
        return self.fixed_utc.timestamp() if self.fixed_utc is not None else None
