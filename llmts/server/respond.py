"""Write a provider ``Reply`` through the transport and complete its journal entry with the evidence."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, MutableSet, Sequence
from typing import Any

from llmts.providers.base import Reply
from llmts.runtime import Session
from llmts.runtime.journal import JournalRecord
from llmts.schema.faults import HARMLESS_MODES, FrameKind, StreamDelivery
from llmts.server.api.metrics import ProcessMetrics
from llmts.server.http.wsgi import StartResponse, status_line
from llmts.transport import DeliveryEvidence, client_socket
from llmts.transport.deadline import SERVER_WRITE_DEADLINE, ActiveDelivery, guard_writes
from llmts.transport.modes import CONNECTION_UNITS, Drop, Replace
from llmts.transport.pacing import StreamPacing
from llmts.transport.writer import MALFORMED_SSE_FRAME, deliver_body, deliver_stream, whole_stream

__all__ = ["ENDED_BY_CODES", "respond"]


def _default_kinds(count: int) -> list[FrameKind]:
    """Frames a provider did not classify: only the last one is taken as the terminal marker."""
    return [FrameKind.OTHER] * (count - 1) + [FrameKind.TERMINAL] if count else []


class _Finisher:
    """Copies the transport's evidence into the journal entry once the response is over."""

    __slots__ = ("entry", "metrics", "session")

    def __init__(self, session: Session, entry: JournalRecord, metrics: ProcessMetrics | None) -> None:
        self.session = session
        self.entry = entry
        self.metrics = metrics

    def __call__(self, evidence: DeliveryEvidence) -> None:
        entry = self.entry
        ended_by = evidence.ended_by
        if ended_by is not None:
            if ended_by == "shutdown" and evidence.transport_outcome != "completed":
                evidence.transport_outcome = "early_end"  # the clean end the server chose, not a departure
            if entry.error_code is None and evidence.transport_outcome != "completed":
                entry.failed(ENDED_BY_CODES[ended_by])
        damaged = (
            evidence.stream_delivery_applied
            and evidence.stream_delivery is not None
            and (evidence.stream_delivery.mode not in HARMLESS_MODES)
        )
        self.entry.apply_evidence(evidence, damaged)
        self.session.journal.finish(self.entry)
        if self.metrics is not None:
            self.metrics.record(self.entry)


# The journal's ``error_code`` for a delivery llmts ended itself (docs/journal.md); also a realtime turn's
# (server/realtime/connection.py).
ENDED_BY_CODES = {
    "write_timeout": "llm_test_server_write_timeout",
    "shutdown": "llm_test_server_shutdown",
    "superseded": "llm_test_server_request_superseded",
    "memory_budget": "llm_test_server_memory_exhausted",
}


def _ignore(evidence: DeliveryEvidence) -> None:
    return None


def respond(
    start_response: StartResponse,
    reply: Reply,
    environ: Mapping[str, Any],
    session: Session | None,
    entry: JournalRecord | None,
    *,
    plan: StreamDelivery | None = None,
    pacing: StreamPacing | None = None,
    keep_frames: bool = False,
    write_timeout: float | None = None,
    active: MutableSet[ActiveDelivery] | None = None,
    metrics: ProcessMetrics | None = None,
) -> Iterable[bytes]:
    """Start the response and return its body iterator. ``plan`` is the answer's delivery fault plan,
    ``pacing`` spaces a stream's frames, ``keep_frames`` writes each frame on its own (a recorded stream
    keeps its chunk boundaries); ``write_timeout`` bounds each write to the client, ``active`` (the
    server's shutdown registry) lets a graceful stop end the delivery cleanly and ``metrics`` counts the
    request once it is over."""
    finish = _Finisher(session, entry, metrics) if session is not None and entry is not None else _ignore
    evidence = DeliveryEvidence(plan)
    if entry is not None:
        entry.answered(reply.status)
    if plan is not None and (fault := CONNECTION_UNITS.get(plan.mode)) is not None:
        return _connection_fault(start_response, plan, fault, environ, evidence, session, entry, finish)
    # A stream's bytes are joined once: for the journal's preview and, when nothing happens between the
    # frames, for the one write that carries them.
    joined = b"".join(reply.frames) if reply.frames is not None else reply.body
    if session is not None and entry is not None:
        session.journal.record_response(entry, joined, None)
    if reply.frames is not None:
        kinds: Sequence[FrameKind] = reply.frame_kinds or _default_kinds(len(reply.frames))
        start_response(status_line(reply.status), reply.headers)
        malformed = reply.malformed_frame or MALFORMED_SSE_FRAME
        sock = client_socket(environ)
        server_deadline = environ.get(SERVER_WRITE_DEADLINE)
        if server_deadline is not None and plan is None and pacing is None and not keep_frames:
            # Nothing happens between the frames: the server writes them and the end in one piece.
            return whole_stream(joined, reply.frames, kinds, evidence, finish, server_deadline, sock)
        stream = deliver_stream(
            reply.frames, kinds, plan, sock, evidence, finish, malformed, pacing, keep_frames
        )
        if write_timeout is None and active is None:
            return stream
        return guard_writes(stream, evidence, sock, write_timeout, active, server_deadline)
    headers = (
        reply.headers if reply.status == 204 else [*reply.headers, ("Content-Length", str(len(reply.body)))]
    )
    start_response(status_line(reply.status), headers)
    server_deadline = environ.get(SERVER_WRITE_DEADLINE)
    if server_deadline is not None:
        # The server bounds the one write itself, and a single write has nothing for a graceful stop to
        # end cleanly: no guard layer on the most common response.
        sock = client_socket(environ)
        return deliver_body(reply.body, evidence, finish, server_deadline=server_deadline, sock=sock)
    body = deliver_body(reply.body, evidence, finish)
    if write_timeout is None and active is None:
        return body
    return guard_writes(body, evidence, client_socket(environ), write_timeout, active)


def _connection_fault(
    start_response: StartResponse,
    plan: StreamDelivery,
    fault: Drop | Replace,
    environ: Mapping[str, Any],
    evidence: DeliveryEvidence,
    session: Session | None,
    entry: JournalRecord | None,
    finish: Any,
) -> Iterable[bytes]:
    evidence.stream_delivery_applied = True
    if isinstance(fault, Replace):
        status, line, headers, body = fault.page(plan)
        if session is not None and entry is not None:
            entry.fault_outcome(status)
            session.journal.record_response(entry, body, None)  # what the client really got
        start_response(line, headers)
        return deliver_body(body, evidence, finish, protocol_complete=False)
    if entry is not None:
        entry.fault_outcome(None)
    evidence.transport_outcome = "aborted"
    finish(evidence)
    raise fault.drop(client_socket(environ))
