"""``POST /admin-api/verify``: what a test expects of a session's journal, and the verdict.

Expectations are evaluated against one journal snapshot (and the conversation status), never against live
state, and change nothing. A failed expectation is a result (200, ``passed: false``); a malformed request
is a 400 ``invalid_verification`` naming the field.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from llmts.schema.journal import JOURNAL_LIMITS, JournalQuery
from llmts.schema.json_path import parse_json_path
from llmts.schema.model_base import STRICT
from llmts.schema.resilience import ResilienceExpectation
from llmts.schema.verify_report import detail_lines

__all__ = [
    "VERIFY_LIMITS",
    "ConversationExpectation",
    "JsonFieldExpectation",
    "RequestExpectation",
    "RetryExpectation",
    "ToolExpectation",
    "ToolKind",
    "VerificationFailure",
    "VerificationRequest",
    "VerificationResult",
]

# Documented in docs/configuration.md (Limits) and docs/journal.md.
VERIFY_LIMITS: dict[str, int] = {
    "verify_expectations": 256,
    "verify_tools_per_request": 64,
    "verify_fields_per_tool": 64,
    "verify_steps_per_conversation": 256,
    "verify_status_sequence": 64,
}
_NAME_CHARS = 128

ToolKind = Literal["response_call", "request_call", "result"]


def _check_counts(minimum: int, maximum: int | None, what: str) -> None:
    if maximum is not None and maximum < minimum:
        raise ValueError(f"maximum_{what} ({maximum}) is below minimum_{what} ({minimum})")


class JsonFieldExpectation(BaseModel):
    """One field of a tool's JSON (arguments of a call, content of a result) equals ``expected_json``
    structurally. ``path``: ``$``, ``$.a.b[0]`` or a JSON Pointer (``/a/b/0``)."""

    model_config = STRICT

    path: str
    expected_json: Any

    @field_validator("path")
    @classmethod
    def _path(cls, value: str) -> str:
        parse_json_path(value)  # ValueError -> 400 naming the field
        return value

    @model_validator(mode="before")
    @classmethod
    def _expected_given(cls, data: Any) -> Any:
        if isinstance(data, dict) and "expected_json" not in data:
            raise ValueError("expected_json is required (use null to expect a JSON null)")
        return data


class ToolExpectation(BaseModel):
    """Tool items of each matched request: ``response_call`` (calls the response made), ``request_call``
    (calls in the request's assistant history) or ``result`` (tool results the request sends back).
    Each matched request must hold ``minimum_count``..``maximum_count`` items passing every predicate."""

    model_config = STRICT

    kind: ToolKind
    name: str | None = Field(default=None, min_length=1, max_length=_NAME_CHARS)
    call_id: str | None = Field(default=None, min_length=1, max_length=_NAME_CHARS)
    # Structural JSON equality with the call's arguments / the result's content (set: compared, even null).
    arguments: Any = None
    result: Any = None
    fields: list[JsonFieldExpectation] = Field(
        default_factory=list, max_length=VERIFY_LIMITS["verify_fields_per_tool"]
    )
    minimum_count: int = Field(default=1, ge=0)
    maximum_count: int | None = Field(default=1, ge=0)

    @model_validator(mode="after")
    def _consistent(self) -> ToolExpectation:
        _check_counts(self.minimum_count, self.maximum_count, "count")
        if "arguments" in self.model_fields_set and self.kind == "result":
            raise ValueError("arguments applies to response_call and request_call; use result for results")
        if "result" in self.model_fields_set and self.kind != "result":
            raise ValueError("result applies only to kind result")
        return self

    @property
    def compares_arguments(self) -> bool:
        return "arguments" in self.model_fields_set

    @property
    def compares_result(self) -> bool:
        return "result" in self.model_fields_set


class RequestExpectation(BaseModel):
    """The requests matching ``query`` (within the scope) number ``minimum_count``..``maximum_count``
    (``maximum_count: null``: no upper bound). With ``nth``, the ``nth`` matching request (1-based, in
    journal order) must exist instead, and the tool and terminal-marker checks look at it alone."""

    model_config = STRICT

    name: str = Field(min_length=1, max_length=_NAME_CHARS)
    query: JournalQuery = Field(default_factory=JournalQuery)
    minimum_count: int = Field(default=1, ge=0)
    maximum_count: int | None = Field(default=1, ge=0)
    tools: list[ToolExpectation] = Field(
        default_factory=list, max_length=VERIFY_LIMITS["verify_tools_per_request"]
    )
    # Every matched request streamed and its protocol terminal marker was handed to the socket.
    require_streaming_terminal_marker: bool = False
    # Only the n-th match counts (no journal retains more entries than journal_max_entries).
    nth: int | None = Field(default=None, ge=1, le=JOURNAL_LIMITS["journal_max_entries"])

    @model_validator(mode="after")
    def _counts(self) -> RequestExpectation:
        # Counts left at their defaults are accepted with nth (a whole dump of the model carries them).
        if self.nth is not None and (self.minimum_count, self.maximum_count) != (1, 1):
            raise ValueError(
                "nth selects one request (it must exist): minimum_count and maximum_count do not apply "
                "with it, leave them out"
            )
        _check_counts(self.minimum_count, self.maximum_count, "count")
        return self


class ConversationExpectation(BaseModel):
    """A conversation graph's state: ``scenario`` (graph id) plus optional provider and conversation id;
    every step in ``visited_steps`` was executed, and ``terminal`` (when set) matches its terminal state."""

    model_config = STRICT

    name: str | None = Field(default=None, min_length=1, max_length=_NAME_CHARS)
    scenario: str = Field(min_length=1, max_length=_NAME_CHARS)
    provider: str | None = Field(default=None, min_length=1, max_length=_NAME_CHARS)
    conversation: str | None = Field(default=None, min_length=1, max_length=_NAME_CHARS)
    visited_steps: list[str] = Field(
        default_factory=list, max_length=VERIFY_LIMITS["verify_steps_per_conversation"]
    )
    terminal: bool | None = None

    @model_validator(mode="after")
    def _something(self) -> ConversationExpectation:
        if not self.visited_steps and self.terminal is None:
            raise ValueError("a conversation expectation needs visited_steps and/or terminal")
        return self


class RetryExpectation(BaseModel):
    """One logical retry flow: the attempts tagged ``X-Llm-Test-Server-Retry-Group: <group>``."""

    model_config = STRICT

    name: str | None = Field(default=None, min_length=1, max_length=_NAME_CHARS)
    group: str = Field(min_length=1, max_length=_NAME_CHARS)
    query: JournalQuery = Field(default_factory=JournalQuery)
    minimum_attempts: int = Field(default=1, ge=1)
    maximum_attempts: int | None = Field(default=3, ge=1)
    # The exact HTTP statuses of the attempts, in order (``null`` for an attempt without a status line).
    status_sequence: list[int | None] | None = Field(
        default=None, min_length=1, max_length=VERIFY_LIMITS["verify_status_sequence"]
    )
    # Every 429/503 attempt advertised Retry-After of at least this many seconds.
    minimum_retry_after_seconds: float | None = Field(default=None, ge=0)
    # After each 429/503 attempt, the next attempt started no sooner than its Retry-After (monotonic time).
    respect_retry_after: bool = False

    @field_validator("group")
    @classmethod
    def _nonblank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("group must not be blank")
        return value

    @field_validator("status_sequence")
    @classmethod
    def _statuses(cls, value: list[int | None] | None) -> list[int | None] | None:
        for status in value or ():
            if status is not None and not 100 <= status <= 599:
                raise ValueError("statuses are 100..599 (or null)")
        return value

    @model_validator(mode="after")
    def _counts(self) -> RetryExpectation:
        _check_counts(self.minimum_attempts, self.maximum_attempts, "attempts")
        return self


class VerificationRequest(BaseModel):
    """The body of ``POST /admin-api/verify``."""

    model_config = STRICT

    # Applied first (after the conversation header, when sent); expectations see only these requests.
    scope: JournalQuery = Field(default_factory=JournalQuery)
    requests: list[RequestExpectation] = Field(default_factory=list)
    # Each request expectation's matches all come after the previous expectation's.
    in_order: bool = False
    # Every request in scope is accounted for by a request, retry or resilience expectation.
    no_unexpected_calls: bool = False
    conversations: list[ConversationExpectation] = Field(default_factory=list)
    retries: list[RetryExpectation] = Field(default_factory=list)
    # Verdicts on how the client retried (docs/journal.md, "Resilience").
    resilience: list[ResilienceExpectation] = Field(default_factory=list)
    # The requests in scope cost at most this many US dollars together (their journal ``cost_usd``).
    max_cost_usd: float | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _bounded(self) -> VerificationRequest:
        total = len(self.requests) + len(self.conversations) + len(self.retries) + len(self.resilience)
        if total > VERIFY_LIMITS["verify_expectations"]:
            raise ValueError(
                f"at most {VERIFY_LIMITS['verify_expectations']} request, conversation, retry and "
                f"resilience expectations together (got {total})"
            )
        if total == 0 and not self.no_unexpected_calls and self.max_cost_usd is None:
            raise ValueError(
                "nothing to verify: give at least one expectation, no_unexpected_calls or max_cost_usd"
            )
        names = [expectation.name for expectation in self.requests]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(f"request expectation names must be unique: {', '.join(duplicates)}")
        return self


class VerificationFailure(BaseModel):
    """One reason the verification did not pass.

    ``kind``: ``evidence_evicted``, ``evidence_truncated``, ``evidence_pending``, ``evidence_paginated``,
    ``evidence_timing`` (incomplete evidence), ``count``, ``nth_missing``, ``tool_count``,
    ``terminal_marker``, ``terminal_marker_unavailable``, ``order``,
    ``unexpected_call``, ``conversation_missing``, ``conversation_steps``, ``conversation_terminal``,
    ``retry_attempts``, ``retry_status_sequence``,
    ``retry_after_missing``, ``retry_after_too_short``, ``retry_spacing``, ``resilience_missing``,
    ``resilience_attempts``, ``resilience_verdict``, ``resilience_unobserved``, ``cost`` (over
    ``max_cost_usd``), ``cost_unpriced`` (a request in scope has usage but no price).

    ``actual`` of a ``count`` or ``nth_missing`` failure is ``{"found": n}``, plus ``"nearest"`` (the requests
    in scope that came closest, with the filters each failed) when nothing matched; of a ``tool_count``
    failure ``{"found": n, "sent_count": m, "sent": [...]}``: the request's tool items of that kind, closest
    first, texts shortened (docs/journal.md, "What came closest").
    """

    kind: str
    message: str
    # Which expectation: ``requests[0] (completed chat)``, ``retries[1] (ask-1)``...; None for evidence.
    expectation: str | None = None
    request_ids: list[str] = Field(default_factory=list)
    expected: Any = None
    actual: Any = None


class VerificationResult(BaseModel):
    passed: bool
    evidence_complete: bool
    failures: list[VerificationFailure] = Field(default_factory=list)
    # Requests matched by the request, retry and resilience expectations, in journal order.
    matched_request_ids: list[str] = Field(default_factory=list)
    # The journal counters the verdict was reached on.
    evidence: dict[str, Any] = Field(default_factory=dict)

    def assert_passed(self) -> None:
        """Raise ``AssertionError`` with the report unless the verification passed."""
        if not self.passed:
            raise AssertionError(self.report())

    def report(self) -> str:
        """A readable account, one failure per line (what a failing test prints)."""
        if self.passed:
            return f"verification passed ({len(self.matched_request_ids)} matched request(s))"
        lines = [
            f"verification failed: {len(self.failures)} problem(s)"
            + ("" if self.evidence_complete else " (journal evidence incomplete)")
        ]
        for failure in self.failures:
            where = f"{failure.expectation}: " if failure.expectation else ""
            lines.append(f"- [{failure.kind}] {where}{failure.message}")
            if failure.request_ids:
                lines.append(f"    requests: {', '.join(failure.request_ids)}")
            lines.extend(detail_lines(failure.actual))
        return "\n".join(lines)
