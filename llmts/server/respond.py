"""Write a provider ``Reply`` through the transport and complete its journal entry with the evidence."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from llmts.providers import Reply
from llmts.runtime import Session
from llmts.runtime.journal import JournalRecord
from llmts.schema.faults import HARMLESS_MODES, FrameKind, StreamDelivery
from llmts.server.http import StartResponse, status_line
from llmts.transport import DeliveryEvidence, client_socket
from llmts.transport.modes import CONNECTION_UNITS, Drop, Replace
from llmts.transport.writer import MALFORMED_SSE_FRAME, deliver_body, deliver_stream

__all__ = ["respond"]


def _default_kinds(count: int) -> list[FrameKind]:
    """Frames a provider did not classify: only the last one is taken as the terminal marker."""
    return [FrameKind.OTHER] * (count - 1) + [FrameKind.TERMINAL] if count else []


class _Finisher:
    """Copies the transport's evidence into the journal entry once the response is over."""

    __slots__ = ("entry", "session")

    def __init__(self, session: Session, entry: JournalRecord) -> None:
        self.session = session
        self.entry = entry

    def __call__(self, evidence: DeliveryEvidence) -> None:
        entry = self.entry
        entry.stream_delivery = evidence.stream_delivery
        entry.stream_delivery_applied = evidence.stream_delivery_applied
        entry.emitted_content_frames = evidence.emitted_content_frames
        entry.terminal_marker_observed = evidence.terminal_marker_observed
        entry.transport_outcome = evidence.transport_outcome
        damaged = (
            evidence.stream_delivery_applied
            and evidence.stream_delivery is not None
            and (evidence.stream_delivery.mode not in HARMLESS_MODES)
        )
        if entry.success and (evidence.transport_outcome != "completed" or damaged):
            entry.success = False
        self.session.journal_finish(entry)


def _ignore(evidence: DeliveryEvidence) -> None:
    return None


def respond(
    start_response: StartResponse,
    reply: Reply,
    environ: Mapping[str, Any],
    session: Session | None,
    entry: JournalRecord | None,
) -> Iterable[bytes]:
    plan = reply.delivery
    finish = _Finisher(session, entry) if session is not None and entry is not None else _ignore
    evidence = DeliveryEvidence(plan)
    if entry is not None:
        entry.status = reply.status
        entry.success = reply.status < 400
    if plan is not None and (fault := CONNECTION_UNITS.get(plan.mode)) is not None:
        return _connection_fault(start_response, plan, fault, environ, evidence, session, entry, finish)
    if session is not None and entry is not None:
        session.journal.record_response(entry, reply.body, reply.frames)
    if reply.frames is not None:
        kinds: Sequence[FrameKind] = reply.frame_kinds or _default_kinds(len(reply.frames))
        start_response(status_line(reply.status), reply.headers)
        malformed = reply.malformed_frame or MALFORMED_SSE_FRAME
        return deliver_stream(reply.frames, kinds, plan, client_socket(environ), evidence, finish, malformed)
    headers = (
        reply.headers if reply.status == 204 else [*reply.headers, ("Content-Length", str(len(reply.body)))]
    )
    start_response(status_line(reply.status), headers)
    return deliver_body(reply.body, evidence, finish)


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
            entry.status = status
            entry.success = False
            session.journal.record_response(entry, body, None)  # what the client really got
        start_response(line, headers)
        return deliver_body(body, evidence, finish, protocol_complete=False)
    if entry is not None:
        entry.status = None
        entry.success = False
    evidence.transport_outcome = "aborted"
    finish(evidence)
    raise fault.drop(client_socket(environ))
