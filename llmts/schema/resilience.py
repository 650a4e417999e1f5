"""``GET /admin-api/resilience``: a verdict on how the client retried, per logical call (docs/journal.md,
"Resilience"), and the expectation ``POST /admin-api/verify`` checks against it."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from llmts.schema.model_base import STRICT

__all__ = [
    "Backoff",
    "CallIdentity",
    "CutStream",
    "ResilienceExpectation",
    "ResilienceReport",
    "ResilienceVerdict",
]

Backoff = Literal["none", "constant", "exponential"]
CutStream = Literal["retried", "trusted"]
# How a group's attempts were tied together, strongest first: the caller's retry-group header, the SDK's
# own call id (AWS invocation id), the SDK's attempt counter (Stainless), the same request sent again.
CallIdentity = Literal["retry_group_header", "client_call_id", "client_attempt", "same_request"]

_NAME_CHARS = 128


class ResilienceVerdict(BaseModel):
    """One retry group: the attempts of one logical call and what the client did between them."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    group: str
    identified_by: CallIdentity
    provider: str
    request_ids: list[str]
    statuses: list[int | None]
    attempts: int
    # The last attempt failed and nothing followed it (null while it is still in progress).
    gave_up: bool | None
    # Every wait after an attempt that advertised one was at least that long (null: none was followed).
    honoured_retry_after: bool | None
    # The shape of the waits the client chose itself (those not dictated by an honoured retry-after);
    # null when there are too few to tell.
    backoff: Backoff | None
    jitter: bool | None
    # A 400/401/403/404/409 or an ``insufficient_quota`` answer was followed by another attempt.
    retried_non_retryable: bool
    # A 2xx stream cut short (``early_end``/``aborted``): retried, or trusted (nothing followed it).
    cut_stream: CutStream | None
    # Seconds from each attempt's completion to the next one's start, and what each attempt advertised.
    waits_seconds: list[float | None]
    advertised_seconds: list[float | None]


class ResilienceReport(BaseModel):
    """The body of ``GET /admin-api/resilience``; ``complete`` is false when evidence may be missing
    (evicted entries, attempts in progress)."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    groups: list[ResilienceVerdict]
    complete: bool
    evicted: int
    in_progress: int


class ResilienceExpectation(BaseModel):
    """What a test expects of the retry groups in scope (all of them, or the one named ``group``).

    A field left unset is not checked. A group whose verdict is null for a checked field (no retry-after
    was followed, too few waits for a shape) is skipped for that field; the expectation fails when no
    group had a value for it, so it never passes on no evidence.
    """

    model_config = STRICT

    name: str | None = Field(default=None, min_length=1, max_length=_NAME_CHARS)
    group: str | None = Field(default=None, min_length=1, max_length=_NAME_CHARS)
    provider: str | None = Field(default=None, min_length=1, max_length=_NAME_CHARS)
    honoured_retry_after: bool | None = None
    backoff: Backoff | None = None
    jitter: bool | None = None
    retried_non_retryable: bool | None = None
    gave_up: bool | None = None
    cut_stream: CutStream | None = None
    minimum_attempts: int | None = Field(default=None, ge=1)
    maximum_attempts: int | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def _something(self) -> ResilienceExpectation:
        low, high = self.minimum_attempts, self.maximum_attempts
        if low is not None and high is not None and high < low:
            raise ValueError(f"maximum_attempts ({high}) is below minimum_attempts ({low})")
        if not self.checked():
            raise ValueError(
                "a resilience expectation needs a field to check (honoured_retry_after, backoff, jitter, "
                "retried_non_retryable, gave_up, cut_stream, minimum_attempts, maximum_attempts)"
            )
        return self

    def checked(self) -> list[str]:
        """The verdict fields this expectation checks (those given a value), attempts bounds aside."""
        return [name for name in _CHECKED if getattr(self, name) is not None]


_CHECKED = (
    "honoured_retry_after",
    "backoff",
    "jitter",
    "retried_non_retryable",
    "gave_up",
    "cut_stream",
    "minimum_attempts",
    "maximum_attempts",
)
