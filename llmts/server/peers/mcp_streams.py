"""The MCP answers that wait on the client (docs/mcp.md): a ``tools/call`` whose SSE answer first sends
the server's own requests (elicitation, sampling, roots) and waits for the client's POSTed answers, the
stream of a client session (the GET stream; the legacy transport's one stream), and cutting a call's
delivery short when the client cancels it.

Waiting happens here, outside every lock. A call's wait for an answer looks in 50 ms slices: it ends when
the answer arrives (a ``threading`` event, gevent's under the worker), when the client leaves (its socket
reads EOF; a graceful stop shuts the read side, so it ends these waits too), when the server's state is
replaced (reset, configure, delete), when the client session ends, or at its deadline. An idle stream
does not poll: it sleeps on its session's wake event until the next keep-alive, and a watcher on its
socket wakes it when the client leaves (docs/architecture.md, "The agent's peers").
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import orjson

from llmts.peers.jsonrpc import RequestId, error_response
from llmts.peers.mcp import CallPlan, McpClient, PendingAnswer
from llmts.peers.mcp.clients import Flight
from llmts.providers.base import Reply
from llmts.runtime.journal import JournalRecord
from llmts.schema.faults import FrameKind
from llmts.server.peers.context import SSE_HEADERS, PeerRequest
from llmts.server.peers.mcp_common import Stop, stopped
from llmts.transport import DeliveryEvidence, client_socket, peer_gone
from llmts.transport.deadline import ActiveDelivery, deadlines_available, stop_reading

__all__ = [
    "OPENING_FRAME",
    "REQUEST_TIMEOUT",
    "SSE_HEADERS",
    "Cancellable",
    "await_answer",
    "event_frame",
    "get_stream",
    "listen_stream",
    "staged_call",
]

# The first frame of an SSE answer that carries a delivery plan, and of the GET stream: a comment every
# SSE parser skips. It sends the response head at once and is the plan's first content frame.
OPENING_FRAME = b": llmts\n\n"
_KEEPALIVE = b": keepalive\n\n"
# How often a call's wait looks at the client's socket and the session (also the bound on noticing a reset).
_SLICE_SECONDS = 0.05
# A comment on an idle stream this often, so proxies and idle timeouts keep it open.
_KEEPALIVE_SECONDS = 15.0
# JSON-RPC code of a server request the client did not answer in time (mcp 2.x uses it for timeouts).
REQUEST_TIMEOUT = -32001


def event_frame(message: dict[str, Any]) -> bytes:
    return b"event: message\ndata: " + orjson.dumps(message) + b"\n\n"


def await_answer(pending: PendingAnswer, seconds: float, sock: Any, stop: Stop) -> str:
    """Wait for the client's answer: ``answered``, ``timeout``, ``client_gone`` or ``stop()``'s reason."""
    deadline = time.monotonic() + seconds
    while True:
        remaining = deadline - time.monotonic()
        if pending.done.wait(max(0.0, min(_SLICE_SECONDS, remaining))) and pending.answer is not None:
            return "answered"
        reason = stop()
        if reason is not None:
            return reason
        if peer_gone(sock):
            return "client_gone"
        if time.monotonic() >= deadline:
            return "timeout"


def _finish_unanswered(
    request: PeerRequest, entry: JournalRecord, sent: list[bytes], outcome: str, error_code: str | None
) -> None:
    """The stream ended before its result (the client left, its session or call ended, the server is
    stopping)."""
    journal = request.session.journal
    journal.record_response(entry, b"".join(sent), None)
    evidence = DeliveryEvidence(None)
    evidence.headers_committed = True
    evidence.emitted_frames = len(sent)
    evidence.emitted_bytes = sum(len(frame) for frame in sent)
    evidence.transport_outcome = outcome
    entry.apply_evidence(evidence)
    if error_code is not None:
        entry.failed_after_status(error_code)
    journal.finish(entry)
    request.services.metrics.record(entry)


def _ignore_start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
    return None


class Cancellable:
    """A call's answer body while ``notifications/cancelled`` may still end it: its delivery plan may wait
    (``stall``, ``slow_drip``, ``delay_then_continue``), and only the client's socket ends those waits,
    so a cancel shuts its read side (the stream then ends at once, journaled ``mcp_call_cancelled``).
    ``close`` (every WSGI server calls it) closes the body, then forgets the call."""

    __slots__ = ("_body", "_done", "_iterator")

    def __init__(
        self,
        body: Iterable[bytes],
        flight: Flight,
        entry: JournalRecord,
        sock: Any,
        done: Callable[[], None],
    ) -> None:
        self._body = body
        self._iterator = iter(body)
        self._done: Callable[[], None] | None = done

        def cut() -> None:
            if not entry.completed:
                entry.failed("mcp_call_cancelled")
            stop_reading(sock)

        flight.on_cancel = cut
        if flight.cancelled.is_set():  # cancelled before the hook was set
            cut()

    def __iter__(self) -> Iterator[bytes]:
        return self

    def __next__(self) -> bytes:
        return next(self._iterator)

    def close(self) -> None:
        try:
            close = getattr(self._body, "close", None)
            if close is not None:
                close()
        finally:
            done, self._done = self._done, None
            if done is not None:
                done()


def staged_call(
    request: PeerRequest,
    client: McpClient,
    request_id: RequestId,
    plan: CallPlan,
    entry: JournalRecord,
    stop: Stop,
    timeout: float,
    flight: Flight,
) -> Iterator[bytes]:
    """The SSE answer of a call that asks the client first: each request, then its answer awaited (and
    journaled in ``client_answers``), then the rest through the transport with the result's delivery plan
    (whose content frames count from here: the opening frame, the notifications, then the result)."""
    request.start_response("200 OK", list(SSE_HEADERS))
    entry.answered(200)
    sock = client_socket(request.environ)
    journal = request.session.journal
    sent: list[bytes] = []
    handed_over = False
    # Visible to a graceful stop while it waits (which shuts the read side: the wait sees the client gone,
    # and ``ended_by`` says it was the stop).
    waiting = ActiveDelivery(DeliveryEvidence(None), sock)
    active = request.services.deliveries
    if active is not None:
        active.add(waiting)
    try:
        final: list[dict[str, Any]] = []
        error_code: str | None = None
        for ask in plan.asks:
            pending = client.ask(ask.method)
            frame = event_frame(pending.request(ask.params))
            sent.append(frame)
            yield frame
            reason = await_answer(pending, timeout, sock, stop)
            if reason == "answered":
                record = pending.record()
                entry.client_answered(record, orjson.dumps(record), journal.preview_bytes)
                continue
            client.forget(pending)
            if reason == "client_gone" and waiting.evidence.ended_by == "shutdown":
                # The stop ends the stream cleanly with the call's error, as a provider stream's early end.
                answer = stopped(request_id, "shutdown")
                frame = event_frame(answer.message)
                sent.append(frame)
                handed_over = True
                yield frame
                _finish_unanswered(request, entry, sent, "early_end", answer.error_code)
                return
            if reason in ("client_gone", "ended", "cancelled"):
                handed_over = True
                if reason == "client_gone":
                    _finish_unanswered(request, entry, sent, "client_gone", None)
                else:
                    _finish_unanswered(request, entry, sent, "early_end", f"mcp_call_{reason}")
                return
            if reason == "timeout":
                # As the specification asks of a sender that stops waiting: cancel, then fail the call.
                cancel = {"requestId": pending.id, "reason": f"no answer within {timeout:g} s"}
                final.append({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel})
                text = f"llmts: the client did not answer {ask.method} within {timeout:g} s"
                final.append(error_response(request_id, REQUEST_TIMEOUT, text))
                error_code = "mcp_client_answer_timeout"
            else:
                answer = stopped(request_id, reason)
                final.append(answer.message)
                error_code = answer.error_code
            break
        if active is not None:
            active.discard(waiting)
        if final:
            frames = [event_frame(message) for message in final]
            kinds = [FrameKind.CONTENT] * (len(frames) - 1) + [FrameKind.TERMINAL]
            delivery = None
        else:
            frames = [OPENING_FRAME, *map(event_frame, plan.notifications), event_frame(plan.response)]
            kinds = [FrameKind.CONTENT] * (len(frames) - 1) + [FrameKind.TERMINAL]
            delivery = plan.delivery
            error_code = plan.error_code
        body = request.reply(
            Reply(200, list(SSE_HEADERS), frames=frames, frame_kinds=kinds),
            plan=delivery,
            entry=entry,
            start_response=_ignore_start,
        )
        journal.record_response(entry, b"".join(sent) + b"".join(frames), None)
        if error_code is not None:
            entry.failed_after_status(error_code)
        handed_over = True
        if delivery is None:
            yield from body
        else:
            yield from Cancellable(body, flight, entry, sock, lambda: None)
    finally:
        flight.on_cancel = None
        client.call_ended(request_id, flight)
        if active is not None:
            active.discard(waiting)
        if not handed_over:  # the client left while a request was being written
            _finish_unanswered(request, entry, sent, "client_gone", None)


class _Departure:
    """Wakes an idle stream when its client's socket turns readable (the client left, or a graceful stop
    shut the read side) without looking at the socket on a timer: a gevent read watcher that sets the
    session's wake event once. Where there is no gevent hub (or no socket), ``watching`` is False and the
    stream looks at the socket in slices instead."""

    __slots__ = ("_event", "_watcher", "fired")

    def __init__(self, sock: Any, event: Any) -> None:
        self.fired = False
        self._event = event
        self._watcher: Any = None
        if sock is None or not deadlines_available():
            return
        try:
            from gevent import get_hub

            self._watcher = get_hub().loop.io(sock.fileno(), 1)  # 1: readable
        except (AttributeError, OSError, ValueError):
            return
        self._watcher.start(self._readable)

    def _readable(self) -> None:
        self._watcher.stop()  # level-triggered: once is enough
        self.fired = True
        self._event.set()

    @property
    def watching(self) -> bool:
        return self._watcher is not None and not self.fired

    def close(self) -> None:
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher.close()
            self._watcher = None


def get_stream(
    request: PeerRequest,
    client: McpClient,
    token: object,
    opening: bytes = OPENING_FRAME,
    on_end: Callable[[], None] | None = None,
    closing: Callable[[str], bytes | None] | None = None,
) -> Iterator[bytes]:
    """The stream of a client session: ``opening``, then its queued messages as they come (each queued
    answer is told once it left, or that it never will), a keep-alive comment when idle; it ends when the
    session ends, a newer stream takes over, the client leaves or the server stops (then ``on_end``
    runs). ``closing`` is told why (``ended``, ``replaced``, ``shutdown`` or ``client_gone``) and may give
    a last frame (never sent to a client that left)."""
    sock = client_socket(request.environ)
    evidence = DeliveryEvidence(None)
    delivery = ActiveDelivery(evidence, sock)
    active = request.services.deliveries
    if active is not None:
        active.add(delivery)
    departure = _Departure(sock, client.wake)
    try:
        yield opening
        quiet_since = time.monotonic()
        while client.usable and client.owns_stream(token) and evidence.ended_by is None:
            if not departure.watching and peer_gone(sock):
                if closing is not None:
                    closing("client_gone")
                return
            messages = client.drain()
            if messages:
                sent = [done for _, done in messages if done is not None]
                try:
                    yield b"".join(event_frame(message) for message, _ in messages)
                except BaseException:
                    for done in sent:
                        done(False)
                    raise
                for done in sent:
                    done(True)
                quiet_since = time.monotonic()
                continue
            idle = quiet_since + _KEEPALIVE_SECONDS - time.monotonic()
            if idle <= 0:
                yield _KEEPALIVE
                quiet_since = time.monotonic()
            elif departure.watching:
                client.wake.wait(idle)
            else:
                client.wake.wait(min(_SLICE_SECONDS, idle))
        if closing is not None:
            if evidence.ended_by is not None:
                why = "shutdown"
            else:
                why = "ended" if not client.usable else "replaced"
            last = closing(why)
            if last is not None:
                yield last
    finally:
        departure.close()
        client.detach_stream(token)
        if active is not None:
            active.discard(delivery)
        if on_end is not None:
            on_end()


def listen_stream(
    request: PeerRequest,
    listener: McpClient,
    ack: dict[str, Any],
    complete: dict[str, Any],
    entry: JournalRecord,
    on_end: Callable[[], object],
) -> Iterator[bytes]:
    """A ``subscriptions/listen`` answer: the session stream of its pseudo client session (``ack`` first),
    ending with ``complete`` unless the client left. Its one journal entry completes when the stream ends:
    ``completed`` when the result left, else ``client_gone``; the start of the stream as its response."""
    token = listener.attach_stream()
    request.start_response("200 OK", list(SSE_HEADERS))
    entry.parsed(entry.operation or "subscriptions/listen", streaming=True)
    entry.answered(200)
    journal = request.session.journal
    keep = journal.preview_bytes
    kept = bytearray()
    evidence = DeliveryEvidence(None)
    evidence.headers_committed = True
    ending: list[str] = []

    def closing(why: str) -> bytes | None:
        ending.append(why)
        return None if why == "client_gone" else event_frame(complete)

    try:
        for frame in get_stream(request, listener, token, event_frame(ack), closing=closing):
            if len(kept) < keep:
                kept += frame[: keep - len(kept)]
            evidence.emitted_frames += 1
            evidence.emitted_bytes += len(frame)
            if evidence.first_frame_at is None:
                evidence.first_frame_at = time.monotonic()
            yield frame
            evidence.last_frame_at = time.monotonic()
        evidence.terminal_marker_observed = bool(ending) and ending[0] != "client_gone"
    finally:
        listener.end()
        on_end()
        evidence.transport_outcome = "completed" if evidence.terminal_marker_observed else "client_gone"
        evidence.emitted_content_frames = evidence.emitted_frames
        entry.capture_response(bytes(kept), None, keep, evidence.emitted_bytes)
        entry.apply_evidence(evidence)
        journal.finish(entry)
        request.services.metrics.record(entry)
