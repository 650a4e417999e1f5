"""Write a provider ``Reply`` through the transport and complete its journal entry with the evidence."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from llmts.providers import Reply
from llmts.runtime import Session
from llmts.runtime.journal import JournalRecord
from llmts.schema.faults import CONNECTION_MODES, FrameKind, StreamDelivery
from llmts.server.http import StartResponse, status_line
from llmts.transport import DeliveryEvidence, client_socket
from llmts.transport.abort import close_silently, reset_connection
from llmts.transport.pages import proxy_error_page
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
            and (evidence.stream_delivery.mode not in _HARMLESS_MODES)
        )
        if entry.success and (evidence.transport_outcome != "completed" or damaged):
            entry.success = False
        self.session.journal_finish(entry)


# Plans that only change timing: the client still gets the whole, valid answer.
_HARMLESS_MODES = frozenset({"delay_then_continue", "slow_drip"})


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
    if plan is not None and plan.mode in CONNECTION_MODES:
        return _connection_fault(start_response, plan, environ, evidence, session, entry, finish)
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
    environ: Mapping[str, Any],
    evidence: DeliveryEvidence,
    session: Session | None,
    entry: JournalRecord | None,
    finish: Any,
) -> Iterable[bytes]:
    evidence.stream_delivery_applied = True
    if plan.mode == "http_error_page":
        assert plan.status is not None
        status, headers, body = proxy_error_page(plan.status)
        if session is not None and entry is not None:
            entry.status = plan.status
            entry.success = False
            session.journal.record_response(entry, body, None)  # what the client really got
        start_response(status, headers)
        return deliver_body(body, evidence, finish, protocol_complete=False)
    if entry is not None:
        entry.status = None
        entry.success = False
    evidence.transport_outcome = "aborted"
    finish(evidence)
    sock = client_socket(environ)
    raise reset_connection(sock) if plan.mode == "reset_before_headers" else close_silently(sock)
