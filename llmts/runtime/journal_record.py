"""One journal record: the live, mutable record of a provider attempt, filled in by the request's stages
and turned into a ``JournalEntry`` only when the journal is read (docs/architecture.md, "The request
journal"). The journal that holds records is ``llmts.runtime.journal``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import datetime, timezone
from typing import Any, Protocol

from llmts.runtime.journal_capture import (
    ToolCallItem,
    ToolResultItem,
    frames_preview,
    history_tools,
    latest_user_snippet,
    output_calls,
    snippet,
)
from llmts.runtime.pricing import shown_usd
from llmts.runtime.resident_size import json_size
from llmts.schema.faults import StreamDelivery
from llmts.schema.journal import JOURNAL_LIMITS, JournalEntry
from llmts.schema.neutral import Completion, NeutralMessage, NeutralToolCall

__all__ = ["DeliveryOutcome", "JournalRecord", "utc_iso"]

# Accounted size of an entry without its request id, path and previews: measured with tracemalloc (the
# slotted record, its floats, ints, usage tuple, model string and the journal's and budget's references;
# benchmarks/journal_memory.py checks the total against RSS). A bytes object's header, and the cost of
# one structured tool item beyond its texts.
_ENTRY_BYTES = 768
_BYTES_OBJECT = 40
_TOOL_ITEM_BYTES = 96
# A small dict of reasoning settings: the dict and its entries, before the keys and values themselves.
_SETTINGS_BYTES = 232
_USAGE_KEYS = ("input_tokens", "output_tokens", "cached_tokens", "cache_write_tokens")
_MAX_TOOL_ITEMS = JOURNAL_LIMITS["journal_tool_items"]


def utc_iso(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    return (
        datetime.fromtimestamp(epoch, timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")
    )


def _text(data: bytes | None) -> str | None:
    return data.decode("utf-8", "replace") if data is not None else None


class DeliveryOutcome(Protocol):
    """What the transport observed while writing a response (llmts.transport.DeliveryEvidence)."""

    stream_delivery: StreamDelivery | None
    stream_delivery_applied: bool
    emitted_content_frames: int
    emitted_bytes: int
    terminal_marker_observed: bool
    transport_outcome: str | None
    first_frame_at: float | None
    last_frame_at: float | None
    pacing_planned_ms: float | None


@dataclass(slots=True)
class JournalRecord:
    """The live, mutable record of one provider attempt (cheap to update on the request path).

    It changes through its own methods, one per stage of the request (``identify``, ``parsed``,
    ``admitted``/``owned_by``, ``apply_completion``, ``answered``/``failed``, ``apply_evidence`` or
    ``client_gone``/``fault_outcome``, ``finish``); the ``capture_*`` methods keep bounded payload
    previews. Queries turn records into ``JournalEntry`` models; times stay epoch floats, previews bytes
    and usage a tuple until then (docs/architecture.md, "The request journal").
    """

    request_id: str
    sequence: int
    provider: str
    started_epoch: float
    started_monotonic_seconds: float
    method: str = "POST"
    path: str = ""
    model: str | None = None
    operation: str | None = None
    # The operation the request asks an answer of (``chat`` for every chat route); None for a route that
    # asks none (model lists, stored objects, token counts) and for MCP and A2A.
    operation_family: str | None = None
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
    completed_epoch: float | None = None
    completed_monotonic_seconds: float | None = None
    retry_group: str | None = None
    retry_after_seconds: float | None = None
    # What the client's SDK says of its logical call (docs/journal.md, "Resilience"): its 1-based attempt
    # number (Stainless ``x-stainless-retry-count`` + 1, AWS ``amz-sdk-request``) and its own id for the call
    # (AWS ``amz-sdk-invocation-id``, an ``Idempotency-Key``).
    client_attempt: int | None = None
    client_call_id: str | None = None
    stream_delivery: StreamDelivery | None = None
    stream_delivery_applied: bool = False
    emitted_content_frames: int = 0
    terminal_marker_observed: bool = False
    transport_outcome: str | None = None
    # A stream's first and last write (monotonic seconds, the clock of ``started_monotonic_seconds``) and a
    # paced stream's planned duration.
    first_frame_monotonic_seconds: float | None = None
    last_frame_monotonic_seconds: float | None = None
    pacing_planned_ms: float | None = None
    wire_clock_mode: str = "live"
    wire_created_at: int | None = None
    wire_sequence: int | None = None
    # (input, output, cached, cache write) tokens; a dict only in the public entry.
    usage: tuple[int, int, int, int] | None = None
    # What ``usage`` costs in USD at the session's prices (docs/prices.md); None: unpriced or no usage.
    cost_usd: float | None = None
    # The request's reasoning settings (scalars only, bounded by ``reasoning_settings`` in neutral.py).
    reasoning_settings: dict[str, Any] | None = None
    # A conversation replay: the retained answer was returned and nothing advanced.
    replayed: bool = False
    # Answered by the session's upstream (docs/recording.md): nothing of the session owned the request.
    forwarded: bool = False
    request_preview: bytes | None = None
    request_bytes: int = 0
    response_preview: bytes | None = None
    response_bytes: int = 0
    response_tool_calls: tuple[ToolCallItem, ...] = ()
    request_tool_calls: tuple[ToolCallItem, ...] = ()
    tool_results: tuple[ToolResultItem, ...] = ()
    truncated: bool = False
    # The agent's other peers (docs/journal.md, "Journal entries"): the MCP server or A2A agent the
    # request went to, a tool call's name and arguments, and what the client answered to the server's own
    # requests (elicitation, sampling, roots), each kept only within the preview limit.
    mcp_server: str | None = None
    a2a_agent: str | None = None
    tool_name: str | None = None
    arguments: dict[str, Any] | None = None
    client_answers: tuple[dict[str, Any], ...] = ()
    # The kept arguments', answers' and client events' JSON: its length (held to the preview limit) and
    # the estimated resident size of its parsed form (``json_size``, what the memory budget charges).
    peer_bytes: int = 0
    peer_resident_bytes: int = 0
    # A realtime turn (docs/realtime.md, "Journal"): the WebSocket connection it belongs to, the client
    # events since the previous turn (bounded summaries, no audio), the events written for it and the
    # close frame the server sent (code, reason), if one ended it.
    realtime_connection: str | None = None
    client_events: tuple[dict[str, Any], ...] = ()
    emitted_events: int = 0
    close_code: int | None = None
    close_reason: str | None = None
    # Snippets for lists and failure reports (docs/journal.md, "Snippets"): the request's latest user text
    # and the answer's text, each at most ``SNIPPET_CHARS`` characters (a longer one ends with "…").
    prompt_text: str | None = None
    answer_text: str | None = None
    # The answer's stream chunks, held from the completion until the delivery's evidence says how many
    # were written (a stream a fault cut short is journaled with the text it delivered), then dropped.
    answer_chunks: tuple[str, ...] = ()
    # Bytes the journal accounts for this record while it holds it; 0 once evicted (or never held).
    accounted: int = 0

    # --- the request's stages ---------------------------------------------------------------------------

    def identify(
        self,
        retry_group: str | None,
        conversation: str | None,
        client_attempt: int | None = None,
        client_call_id: str | None = None,
    ) -> None:
        """The caller's retry group and conversation headers and what its SDK says of the logical call
        (journaled even when a scenario answers)."""
        self.retry_group = retry_group
        if conversation is not None:
            self.conversation = conversation
        self.client_attempt = client_attempt
        self.client_call_id = client_call_id

    def parsed(
        self,
        operation: str,
        model: str | None = None,
        streaming: bool = False,
        reasoning_settings: dict[str, Any] | None = None,
        family: str | None = None,
    ) -> None:
        self.operation = operation
        self.operation_family = family
        self.model = model
        self.streaming = streaming
        self.reasoning_settings = reasoning_settings

    def admitted(self, scenario: str | None) -> None:
        """The scenario or conversation graph that owns the request."""
        self.scenario = scenario

    def forwarded_upstream(self) -> None:
        """Nothing of the session owns the request: its upstream answers it."""
        self.scenario = None
        self.forwarded = True

    def owned_by(self, graph: str, conversation: str, turn: int, step: str | None) -> None:
        """A conversation graph claimed the request (tagged before its admission checks run)."""
        self.scenario = graph
        self.conversation = conversation
        self.turn = turn
        self.step = step

    def apply_completion(self, completion: Completion, replayed: bool = False) -> None:
        """The runtime's committed answer: its response index, wire time and token usage."""
        usage = completion.usage
        self.answer_text = snippet(completion.output.text)
        self.answer_chunks = completion.output.chunks
        self.replayed = replayed
        self.response_index = completion.response_index
        self.wire_created_at = completion.created_at
        self.usage = (usage.input_tokens, usage.output_tokens, usage.cached_tokens, usage.cache_write_tokens)

    def priced(self, cost_usd: float | None) -> None:
        """The answered usage's cost (``SessionSpend.spend``), None when the model has no price."""
        self.cost_usd = cost_usd

    def answered(self, status: int) -> None:
        """The status the client is about to get; below 400 counts as a success until evidence says no."""
        self.status = status
        self.success = status < 400

    def failed(self, code: str, retry_after: float | None = None) -> None:
        """The request ended in an llmts error (or a scripted one, which may carry ``retry_after``)."""
        self.error_code = code
        if retry_after is not None:
            self.retry_after_seconds = retry_after

    def apply_evidence(self, evidence: DeliveryOutcome, damaged: bool = False) -> None:
        """What the transport really delivered; an answer cut short or ``damaged`` by a fault fails."""
        self.stream_delivery = evidence.stream_delivery
        self.stream_delivery_applied = evidence.stream_delivery_applied
        self.emitted_content_frames = evidence.emitted_content_frames
        self.terminal_marker_observed = evidence.terminal_marker_observed
        self.transport_outcome = evidence.transport_outcome
        if self.streaming:
            self.first_frame_monotonic_seconds = evidence.first_frame_at
            self.last_frame_monotonic_seconds = evidence.last_frame_at
            self.pacing_planned_ms = evidence.pacing_planned_ms
        if self.success and (evidence.transport_outcome != "completed" or damaged):
            self.success = False
        if evidence.stream_delivery_applied and evidence.emitted_bytes < self.response_bytes:
            # A fault plan cut the stream: the preview keeps what was written, not what was rendered, and
            # the answer's snippet the text of the content frames that went out.
            self.response_bytes = evidence.emitted_bytes
            if self.response_preview is not None and len(self.response_preview) > evidence.emitted_bytes:
                self.response_preview = self.response_preview[: evidence.emitted_bytes]
            if self.answer_chunks:
                self.answer_text = snippet("".join(self.answer_chunks[: evidence.emitted_content_frames]))
        self.answer_chunks = ()

    def failed_after_status(self, code: str) -> None:
        """The attempt failed though its status went out as a success: a JSON-RPC error over 2xx (MCP,
        A2A), a realtime turn cancelled or ended by a graceful stop. Its error code, and no success."""
        self.error_code = code
        self.success = False

    def fault_outcome(self, status: int | None) -> None:
        """A connection-level fault answered instead: a proxy page's status, or None (no HTTP answer)."""
        self.status = status
        self.success = False

    def client_gone(self) -> None:
        """The client left before anything was written (during a fixture delay)."""
        self.status = 499
        self.success = False
        self.transport_outcome = "client_gone"

    def finish(self, epoch: float, monotonic: float) -> None:
        self.completed_epoch = epoch
        self.completed_monotonic_seconds = monotonic
        self.completed = True

    # --- payload capture (bounded to ``limit`` bytes / characters) ----------------------------------------

    def capture_request(self, body: bytes, limit: int) -> None:
        self.request_bytes = len(body)
        self.request_preview = _compact(body, limit)
        if len(body) > limit:
            self.truncated = True

    def capture_history(self, messages: Sequence[NeutralMessage], limit: int) -> None:
        self.prompt_text = latest_user_snippet(messages)
        calls, results, cut = history_tools(messages, _MAX_TOOL_ITEMS, limit)
        if not (calls or results or cut):
            return
        self.request_tool_calls, self.tool_results = calls, results
        if cut:
            self.truncated = True

    def capture_output_calls(self, calls: Sequence[NeutralToolCall], limit: int) -> None:
        if not calls:
            return
        self.response_tool_calls, cut = output_calls(calls, _MAX_TOOL_ITEMS, limit)
        if cut:
            self.truncated = True

    def capture_response(
        self, body: bytes, frames: Sequence[bytes] | None, limit: int, size: int | None = None
    ) -> None:
        """``size``: the whole answer's size when ``body`` is only its beginning (a relayed stream)."""
        if frames is not None:
            self.response_preview, self.response_bytes = frames_preview(frames, limit)
        else:
            self.response_bytes = len(body) if size is None else size
            self.response_preview = _compact(body, limit)
        if self.response_bytes > limit:
            self.truncated = True

    def peer_call(
        self,
        *,
        mcp_server: str | None = None,
        a2a_agent: str | None = None,
        tool_name: str | None = None,
        arguments: dict[str, Any] | None = None,
        arguments_json: bytes = b"",
        limit: int,
    ) -> None:
        """An MCP or A2A request: whom it addressed and, for a tool call, its name and arguments (kept
        when their JSON, ``arguments_json``, fits in ``limit`` bytes, else dropped and the entry marked
        truncated)."""
        self.mcp_server = mcp_server
        self.a2a_agent = a2a_agent
        self.tool_name = tool_name
        if arguments is not None:
            if len(arguments_json) <= limit:
                self.arguments = arguments
                self._keep_peer_json(arguments_json)
            else:
                self.truncated = True

    def peer_answered(self, response_index: int | None, error_code: str | None) -> None:
        """An MCP or A2A answer: the scripted response that gave it, and the code of a JSON-RPC error sent
        with HTTP 200 (the attempt failed though its status is a success; call after ``answered``)."""
        self.response_index = response_index
        if error_code is not None:
            self.failed_after_status(error_code)

    def client_answered(self, answer: dict[str, Any], answer_json: bytes, limit: int) -> None:
        """The client's answer to a server-to-client request, ``answer_json`` its JSON (at most
        ``_MAX_TOOL_ITEMS`` per entry, all within ``limit`` bytes together)."""
        if len(self.client_answers) >= _MAX_TOOL_ITEMS or self.peer_bytes + len(answer_json) > limit:
            self.truncated = True
            return
        self.client_answers = (*self.client_answers, answer)
        self._keep_peer_json(answer_json)

    def realtime_turn(
        self, connection: str, events: Sequence[dict[str, Any]], events_json: Sequence[bytes], limit: int
    ) -> None:
        """A realtime turn's connection and the client events that led to it (``events_json``: each one's
        JSON): kept while their JSON fits in ``limit`` bytes, the rest dropped and the entry marked
        truncated."""
        self.realtime_connection = connection
        kept = len(events)
        size = sum(map(len, events_json))
        while kept and size > limit:
            kept -= 1
            size -= len(events_json[kept])
            self.truncated = True
        self.client_events = tuple(events[:kept])
        for raw in events_json[:kept]:
            self._keep_peer_json(raw)

    def _keep_peer_json(self, raw: bytes) -> None:
        self.peer_bytes += len(raw)
        self.peer_resident_bytes += json_size(raw)

    def closed_with(self, code: int | None, reason: str | None, emitted_events: int) -> None:
        """The turn's WebSocket evidence beyond the stream's: events written, and the close frame sent."""
        self.emitted_events = emitted_events
        self.close_code = code
        self.close_reason = reason

    def initial_bytes(self) -> int:
        """``retained_bytes`` of a record just begun: nothing captured yet, so only the fixed cost and the
        two strings it was created with (the request path accounts every attempt at its start)."""
        return _ENTRY_BYTES + len(self.request_id) + len(self.path)

    def retained_bytes(self) -> int:
        """Accounted size: the measured fixed cost plus the variable-length strings and previews."""
        size = _ENTRY_BYTES + len(self.request_id) + len(self.path)
        if self.request_preview is not None:
            size += _BYTES_OBJECT + len(self.request_preview)
        if self.response_preview is not None:
            size += _BYTES_OBJECT + len(self.response_preview)
        for items in (self.response_tool_calls, self.request_tool_calls, self.tool_results):
            for item in items:
                size += _TOOL_ITEM_BYTES + len(item[0]) + len(item[1] or "") + len(item[2])
        size += self.peer_resident_bytes
        for name in (
            self.mcp_server,
            self.a2a_agent,
            self.tool_name,
            self.prompt_text,
            self.answer_text,
            self.client_call_id,
        ):
            if name is not None:
                size += _BYTES_OBJECT + len(name)
        if self.reasoning_settings is not None:  # at most 16 scalars of 128 characters
            size += _SETTINGS_BYTES + sum(len(k) + len(str(v)) for k, v in self.reasoning_settings.items())
        return size

    def to_entry(self) -> JournalEntry:
        values: dict[str, Any] = {name: getattr(self, name) for name in _PLAIN_FIELDS}
        values["started_at"] = utc_iso(self.started_epoch)
        values["completed_at"] = utc_iso(self.completed_epoch)
        # An attempt still in progress has no outcome yet.
        if not self.completed:
            values["success"] = None
        values["request_preview"] = _text(self.request_preview)
        values["request_truncated"] = (
            self.request_preview is not None and len(self.request_preview) < self.request_bytes
        )
        values["response_preview"] = _text(self.response_preview)
        values["response_truncated"] = (
            self.response_preview is not None and len(self.response_preview) < self.response_bytes
        )
        usage = self.usage
        if usage is not None:
            values["usage"] = dict(zip(_USAGE_KEYS, usage, strict=True))
        if self.cost_usd is not None:  # priced unrounded on the request path
            values["cost_usd"] = shown_usd(self.cost_usd)
        values["response_tool_calls"] = [_call(item) for item in self.response_tool_calls]
        values["request_tool_calls"] = [_call(item) for item in self.request_tool_calls]
        values["tool_results"] = [
            {"call_id": call_id, "name": name, "content": content, "truncated": cut}
            for call_id, name, content, cut in self.tool_results
        ]
        values["client_answers"] = list(self.client_answers)
        values["client_events"] = list(self.client_events)
        return JournalEntry.model_validate(values)


def _compact(data: bytes, limit: int) -> bytes:
    """An exact-size copy of the first ``limit`` bytes: a producer's buffer may be over-allocated
    (orjson's output is: ~4 KiB for a 700-byte answer), and a preview must not keep that slack alive."""
    return memoryview(data)[:limit].tobytes()


def _call(item: ToolCallItem) -> dict[str, Any]:
    return {"id": item[0], "name": item[1], "arguments": item[2], "truncated": item[3]}


_DERIVED = frozenset(
    {
        "started_epoch",
        "completed_epoch",
        "request_preview",
        "response_preview",
        "response_tool_calls",
        "request_tool_calls",
        "tool_results",
        "usage",
        "accounted",
        "peer_bytes",
        "peer_resident_bytes",
        "client_answers",
        "client_events",
        "answer_chunks",
    }
)
_PLAIN_FIELDS = tuple(f.name for f in fields(JournalRecord) if f.name not in _DERIVED)
