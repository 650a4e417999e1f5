"""Write a rendered response body and record what really reached the socket.

Under gunicorn (both gevent workers) each yielded chunk is one ``sendall``; the code after ``yield``
runs only once it returned, so that is where a frame counts as handed to the socket. An exception at a
``yield`` (the client left) closes the generator: the ``finally`` records ``client_gone``.

Without an in-stream plan, frames are coalesced into one write (same bytes for the client, a fraction of
the syscalls). With a plan, frames go out one by one so the plan can act between them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from llmts.schema.faults import FrameKind, StreamDelivery
from llmts.transport.abort import reset_connection
from llmts.transport.evidence import DeliveryEvidence
from llmts.transport.waiting import WaitOutcome, wait

__all__ = ["MALFORMED_SSE_FRAME", "deliver_body", "deliver_stream"]

# A frame no SSE-JSON parser accepts: the JSON object is cut off.
MALFORMED_SSE_FRAME = b'data: {"llmts_malformed_frame": \n\n'
# slow_drip writes this many times per second at most.
_DRIP_WRITES_PER_SECOND = 20


def _never() -> bool:
    return False


def deliver_body(
    body: bytes,
    evidence: DeliveryEvidence,
    on_finish: Callable[[DeliveryEvidence], None],
    *,
    protocol_complete: bool = True,
) -> Iterator[bytes]:
    """A whole (non-stream) body: one write; its completion is the protocol's end unless the body is not
    the provider's own answer (a proxy error page: ``protocol_complete=False``)."""
    try:
        if body:
            yield body
        evidence.headers_committed = True
        evidence.emitted_bytes = len(body)
        evidence.terminal_marker_observed = protocol_complete
        evidence.transport_outcome = "completed"
    finally:
        if evidence.transport_outcome is None:
            evidence.transport_outcome = "client_gone"
        on_finish(evidence)


def deliver_stream(
    frames: Sequence[bytes],
    kinds: Sequence[FrameKind],
    plan: StreamDelivery | None,
    sock: Any,
    evidence: DeliveryEvidence,
    on_finish: Callable[[DeliveryEvidence], None],
    malformed_frame: bytes = MALFORMED_SSE_FRAME,
) -> Iterator[bytes]:
    try:
        if plan is None or not (plan.in_stream or plan.mode == "slow_drip"):
            yield b"".join(frames)
            _record_all(frames, kinds, evidence)
            evidence.transport_outcome = "completed"
        elif plan.mode == "slow_drip":
            yield from _drip(frames, kinds, plan, sock, evidence)
        else:
            yield from _planned(frames, kinds, plan, sock, evidence, malformed_frame)
    finally:
        if evidence.transport_outcome is None:
            evidence.transport_outcome = "client_gone"
        on_finish(evidence)


def _record_all(frames: Sequence[bytes], kinds: Sequence[FrameKind], evidence: DeliveryEvidence) -> None:
    evidence.headers_committed = True
    evidence.emitted_frames += len(frames)
    evidence.emitted_bytes += sum(len(frame) for frame in frames)
    evidence.emitted_content_frames += sum(1 for kind in kinds if kind is FrameKind.CONTENT)
    if FrameKind.TERMINAL in kinds:
        evidence.terminal_marker_observed = True


def _record(frame: bytes, kind: FrameKind, evidence: DeliveryEvidence) -> None:
    evidence.headers_committed = True
    evidence.emitted_frames += 1
    evidence.emitted_bytes += len(frame)
    if kind is FrameKind.CONTENT:
        evidence.emitted_content_frames += 1
    elif kind is FrameKind.TERMINAL:
        evidence.terminal_marker_observed = True


def _planned(
    frames: Sequence[bytes],
    kinds: Sequence[FrameKind],
    plan: StreamDelivery,
    sock: Any,
    evidence: DeliveryEvidence,
    malformed_frame: bytes,
) -> Iterator[bytes]:
    mode = plan.mode
    index = 0
    while index < len(frames):
        frame, kind = frames[index], kinds[index]
        index += 1
        yield frame
        _record(frame, kind, evidence)
        if kind is not FrameKind.CONTENT or evidence.emitted_content_frames != plan.after_content_frames:
            continue
        evidence.stream_delivery_applied = True
        if mode == "early_clean_end":
            evidence.transport_outcome = "early_end"
            return
        if mode == "abort_connection":
            evidence.transport_outcome = "aborted"
            raise reset_connection(sock)
        if mode == "truncate_bytes":
            if index < len(frames):
                piece = frames[index][: plan.cut_bytes]
                yield piece
                evidence.emitted_bytes += len(piece)
            evidence.transport_outcome = "early_end"
            return
        if mode == "malformed_frame":
            yield malformed_frame
            evidence.emitted_frames += 1
            evidence.emitted_bytes += len(malformed_frame)
            continue
        # delay_then_continue and stall: hold the connection, noticing a client that leaves.
        outcome = wait(plan.delay_ms / 1000, sock, _never)
        if outcome is WaitOutcome.CLIENT_GONE:
            evidence.transport_outcome = "client_gone"
            return
        if mode == "stall":
            evidence.transport_outcome = "early_end"
            return
    evidence.transport_outcome = "completed"


def _drip(
    frames: Sequence[bytes],
    kinds: Sequence[FrameKind],
    plan: StreamDelivery,
    sock: Any,
    evidence: DeliveryEvidence,
) -> Iterator[bytes]:
    rate = plan.bytes_per_second or 1
    piece_size = max(1, rate // _DRIP_WRITES_PER_SECOND)
    evidence.stream_delivery_applied = True
    owed = 0.0  # seconds the previous piece "costs" at the configured rate, slept before the next one
    for frame, kind in zip(frames, kinds, strict=True):
        for start in range(0, len(frame), piece_size):
            if owed > 0 and wait(owed, sock, _never) is WaitOutcome.CLIENT_GONE:
                evidence.transport_outcome = "client_gone"
                return
            piece = frame[start : start + piece_size]
            started = time.monotonic()
            yield piece
            evidence.headers_committed = True
            evidence.emitted_bytes += len(piece)
            owed = len(piece) / rate - (time.monotonic() - started)
        evidence.emitted_frames += 1
        if kind is FrameKind.CONTENT:
            evidence.emitted_content_frames += 1
        elif kind is FrameKind.TERMINAL:
            evidence.terminal_marker_observed = True
    evidence.transport_outcome = "completed"
