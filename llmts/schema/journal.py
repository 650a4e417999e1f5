"""Request journal entries (docs/journal.md): one per provider attempt, per session."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from llmts.schema.faults import StreamDelivery, TransportOutcome
from llmts.schema.model_base import STRICT

__all__ = [
    "DEFAULT_JOURNAL_BYTES",
    "DEFAULT_JOURNAL_ENTRIES",
    "DEFAULT_PREVIEW_BYTES",
    "JOURNAL_LIMITS",
    "QUERY_TEXT_CHARS",
    "JournalEntry",
    "JournalQuery",
    "JournalSettings",
    "RecordedToolCall",
    "RecordedToolResult",
]

DEFAULT_JOURNAL_ENTRIES = 500
DEFAULT_JOURNAL_BYTES = 16 * 1024 * 1024
DEFAULT_PREVIEW_BYTES = 64 * 1024

# Upper bounds of the ``journal`` section (documented in docs/configuration.md with the other LIMITS).
JOURNAL_LIMITS: dict[str, int] = {
    "journal_max_entries": 10_000,
    "journal_max_bytes": 256 * 1024 * 1024,
    "journal_preview_bytes": 1024 * 1024,
    # Structured tool calls (and, separately, tool results) kept per entry and list.
    "journal_tool_items": 128,
}
# Smallest ``max_bytes``: one entry without previews must fit.
_MIN_JOURNAL_BYTES = 1024
# Longest ``tool_result_contains`` (docs/journal.md, "Querying"): a substring test, not a document.
QUERY_TEXT_CHARS = 1024


class JournalSettings(BaseModel):
    """The ``journal`` configuration section: retention of this session's request journal."""

    model_config = STRICT

    max_entries: int = Field(default=DEFAULT_JOURNAL_ENTRIES, ge=1, le=JOURNAL_LIMITS["journal_max_entries"])
    max_bytes: int = Field(
        default=DEFAULT_JOURNAL_BYTES, ge=_MIN_JOURNAL_BYTES, le=JOURNAL_LIMITS["journal_max_bytes"]
    )
    preview_bytes: int = Field(
        default=DEFAULT_PREVIEW_BYTES, ge=1, le=JOURNAL_LIMITS["journal_preview_bytes"]
    )


class RecordedToolCall(BaseModel):
    """A tool call as the journal keeps it: ``arguments`` is the call's argument text (maybe cut short)."""

    id: str
    name: str
    arguments: str
    truncated: bool = False


class RecordedToolResult(BaseModel):
    """A tool result in a request's history; ``name`` is resolved from the call with that id, if present."""

    call_id: str
    name: str | None = None
    content: str
    truncated: bool = False


class JournalEntry(BaseModel):
    """Recorded at request entry (in progress) and completed later; keeps its sequence on update."""

    model_config = ConfigDict(defer_build=True, validate_assignment=False)

    request_id: str
    sequence: int
    provider: str
    model: str | None = None
    operation: str | None = None
    operation_family: str | None = None
    method: str = "POST"
    path: str = ""
    status: int | None = None
    scenario: str | None = None
    response_index: int | None = None
    conversation: str | None = None
    step: str | None = None
    turn: int | None = None
    streaming: bool = False
    completed: bool = False
    success: bool | None = None
    error_code: str | None = None
    started_at: str
    completed_at: str | None = None
    started_monotonic_seconds: float
    completed_monotonic_seconds: float | None = None
    retry_group: str | None = None
    retry_after_seconds: float | None = None
    # The client SDK's own attempt number (1-based) and call id, when it sends them (docs/journal.md,
    # "Resilience").
    client_attempt: int | None = None
    client_call_id: str | None = None
    stream_delivery: StreamDelivery | None = None
    stream_delivery_applied: bool = False
    emitted_content_frames: int = 0
    terminal_marker_observed: bool = False
    transport_outcome: TransportOutcome | None = None
    # A streamed answer's first and last write on the server's monotonic clock (compare with
    # ``started_monotonic_seconds``), and a paced stream's planned duration in milliseconds.
    first_frame_monotonic_seconds: float | None = None
    last_frame_monotonic_seconds: float | None = None
    pacing_planned_ms: float | None = None
    wire_clock_mode: str = "live"
    wire_created_at: int | None = None
    wire_sequence: int | None = None
    usage: dict[str, int] | None = None
    # What ``usage`` costs in USD at the session's prices (docs/prices.md); null: the model has no price,
    # or the entry has no usage.
    cost_usd: float | None = None
    # The request's reasoning settings as sent, scalar fields only (OpenAI ``reasoning`` or Chat
    # ``reasoning_effort`` as ``effort``, Anthropic ``thinking``, Gemini ``thinkingConfig``).
    reasoning_settings: dict[str, Any] | None = None
    # True when a conversation graph replayed its retained answer (nothing advanced).
    replayed: bool = False
    # True when the session's upstream answered (record and replay): nothing of the session owned it.
    forwarded: bool = False
    # Payload previews: the first ``preview_bytes`` of the request body and of the response (the body, or
    # the stream's frames concatenated), decoded as UTF-8; ``*_bytes`` are the full sizes.
    request_preview: str | None = None
    request_bytes: int = 0
    request_truncated: bool = False
    response_preview: str | None = None
    response_bytes: int = 0
    response_truncated: bool = False
    # Tool calls the response made, tool calls in the request's assistant history, and the tool results
    # the request sends back (linked to their calls by ``call_id``).
    response_tool_calls: list[RecordedToolCall] = Field(default_factory=list)
    request_tool_calls: list[RecordedToolCall] = Field(default_factory=list)
    tool_results: list[RecordedToolResult] = Field(default_factory=list)
    # Something of this entry (a preview, a tool list or text) was cut to the retention limits.
    truncated: bool = False
    # MCP and A2A requests (provider ``mcp`` / ``a2a``; docs/journal.md): the server or agent addressed,
    # a tool call's name and arguments, and the client's answers to the server's own requests.
    mcp_server: str | None = None
    a2a_agent: str | None = None
    tool_name: str | None = None
    arguments: dict[str, Any] | None = None
    client_answers: list[dict[str, Any]] = Field(default_factory=list)
    # Realtime turns (operation ``realtime``; docs/realtime.md): the WebSocket connection, the client events
    # that led to the turn (summaries: item texts, function outputs, audio byte counts), the events written
    # and the close frame the server sent, if one ended the turn.
    realtime_connection: str | None = None
    client_events: list[dict[str, Any]] = Field(default_factory=list)
    emitted_events: int = 0
    close_code: int | None = None
    close_reason: str | None = None
    # Snippets (docs/journal.md, "Snippets"): the latest user text of the request and the text of the
    # answer llmts chose, each at most 240 characters; a stream cut short delivered less (see its frames).
    prompt_text: str | None = None
    answer_text: str | None = None

    def public(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class JournalQuery(BaseModel):
    """Filters of ``GET /admin-api/requests`` (exact matches, but ``tool_result_contains``: a substring of
    some tool result's content; ``from``/``to`` are inclusive UTC)."""

    model_config = STRICT

    provider: str | None = None
    model: str | None = None
    request_id: str | None = None
    status: int | None = Field(default=None, ge=100, le=599)
    operation: str | None = None
    scenario: str | None = None
    conversation: str | None = None
    step: str | None = None
    streaming: bool | None = None
    completed: bool | None = None
    success: bool | None = None
    error_code: str | None = None
    retry_group: str | None = None
    forwarded: bool | None = None
    mcp_server: str | None = None
    realtime_connection: str | None = Field(default=None, min_length=1, max_length=64)
    a2a_agent: str | None = None
    tool_name: str | None = None
    # Content filters on the tool results the request sends back (evaluated only when set).
    has_tool_results: bool | None = None
    tool_result_contains: str | None = Field(default=None, min_length=1, max_length=QUERY_TEXT_CHARS)
    # A cursor: only entries whose sequence is greater (the dashboard polls with it for what is new).
    after: int | None = Field(default=None, ge=0)
    from_: datetime | None = Field(default=None, alias="from")
    to: datetime | None = None
    order: Literal["asc", "desc"] = "desc"
    offset: int = Field(default=0, ge=0)
    limit: int = Field(default=500, ge=1, le=500)

    @model_validator(mode="after")
    def _range(self) -> JournalQuery:
        # The zones first: a naive and an aware bound cannot be compared (a TypeError, not a 400).
        for bound in (self.from_, self.to):
            if bound is not None and bound.tzinfo is None:
                raise ValueError("from/to need a time zone (e.g. 2026-01-01T00:00:00Z)")
        if self.from_ is not None and self.to is not None and self.from_ > self.to:
            raise ValueError("from must not follow to")
        return self

    def echo(self) -> dict[str, Any]:
        """The query as given back in exports (only the set filters, plus order/offset/limit)."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)
