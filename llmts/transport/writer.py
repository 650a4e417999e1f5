"""Write a rendered response body and record what really reached the socket.

Under gunicorn (both gevent workers) each yielded chunk is one ``sendall``; the code after ``yield``
runs only once it returned, so that is where a frame counts as handed to the socket. An exception at a
``yield`` (the client left) closes the generator: the ``finally`` records ``client_gone``.

Without an in-stream or pacing plan, frames are coalesced into one write (same bytes for the client, a
fraction of the syscalls). With an in-stream plan, frames go out one by one and the mode's unit
(``llmts/transport/modes/``) acts once, after the boundary frame; a pacing unit writes the stream itself.
A stream with ``pacing`` (and no plan) goes out on its schedule (``llmts/transport/pacing.py``). A
recorded stream (``separate``) keeps its frames as separate writes, so the client sees the recorded chunk
boundaries (docs/recording.md).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Iterator, Sequence
from typing import Any

from llmts.schema.faults import FrameKind, StreamDelivery
from llmts.transport.deadline import Deadline, note_write_timeout
from llmts.transport.evidence import DeliveryEvidence
from llmts.transport.modes import STREAM_UNITS, Boundary, InStream
from llmts.transport.modes.malformed_frame import MALFORMED_SSE_FRAME
from llmts.transport.pacing import StreamPacing, deliver_paced
from llmts.transport.whole_stream import WholeStream

__all__ = [
    "MALFORMED_SSE_FRAME",
    "deliver_body",
    "deliver_stream",
    "record_frame",
    "whole_stream",
]


def _unfinished(evidence: DeliveryEvidence) -> bool:
    """No outcome recorded yet. A call of its own for the ``finally`` blocks below: read there directly,
    the attribute would be taken for the value the ``try`` set last (mypy narrows it, and the compiled
    build checks that at run time: docs/design/compiled.md)."""
    return evidence.transport_outcome is None


def deliver_body(
    body: bytes,
    evidence: DeliveryEvidence,
    on_finish: Callable[[DeliveryEvidence], None],
    *,
    protocol_complete: bool = True,
    server_deadline: Deadline | None = None,
    sock: Any = None,
) -> Iterator[bytes]:
    """A whole (non-stream) body: one write; its completion is the protocol's end unless the body is not
    the provider's own answer (a proxy error page: ``protocol_complete=False``). ``server_deadline``: the
    server's write deadline for this connection, read when the write is over."""
    try:
        if body:
            yield body
        evidence.headers_committed = True
        evidence.emitted_bytes = len(body)
        evidence.terminal_marker_observed = protocol_complete
        evidence.transport_outcome = "completed"
    finally:
        if _unfinished(evidence):
            evidence.transport_outcome = "client_gone"
            note_write_timeout(server_deadline, evidence, sock)
        on_finish(evidence)


def deliver_stream(
    frames: Sequence[bytes],
    kinds: Sequence[FrameKind],
    plan: StreamDelivery | None,
    sock: Any,
    evidence: DeliveryEvidence,
    on_finish: Callable[[DeliveryEvidence], None],
    malformed_frame: bytes = MALFORMED_SSE_FRAME,
    pacing: StreamPacing | None = None,
    separate: bool = False,
) -> Iterator[bytes]:
    try:
        if plan is None and pacing is not None:
            yield from deliver_paced(frames, kinds, pacing, sock, evidence, separate=separate)
        elif plan is None and separate:
            for frame, kind in zip(frames, kinds, strict=True):
                yield frame
                record_frame(len(frame), kind, evidence)
            evidence.transport_outcome = "completed"
        elif plan is None or (unit := STREAM_UNITS.get(plan.mode)) is None:
            body = b"".join(frames)
            yield body
            _record_all(frames, kinds, len(body), evidence)
            evidence.transport_outcome = "completed"
        elif isinstance(unit, InStream):
            yield from _planned(frames, kinds, plan, unit.act, sock, evidence, malformed_frame)
        else:
            yield from unit.deliver(frames, kinds, plan, sock, evidence)
    finally:
        if _unfinished(evidence):
            evidence.transport_outcome = "client_gone"
        on_finish(evidence)


def whole_stream(
    body: bytes,
    frames: Sequence[bytes],
    kinds: Sequence[FrameKind],
    evidence: DeliveryEvidence,
    on_finish: Callable[[DeliveryEvidence], None],
    server_deadline: Deadline,
    sock: Any,
) -> WholeStream:
    """The coalesced stream (``body``: the frames joined) as a ``WholeStream``, only for a server that sets
    ``SERVER_WRITE_DEADLINE``. The evidence is counted now, so the frames are not kept alive beside their
    joined copy while a slow client reads (docs/design/memory.md, "Memory beyond the accounted bytes")."""
    count, content = len(frames), kinds.count(FrameKind.CONTENT)
    terminal = FrameKind.TERMINAL in kinds

    def done(written: bool) -> None:
        if written:
            _record_counts(count, content, terminal, len(body), evidence)
            evidence.transport_outcome = "completed"
        else:
            evidence.transport_outcome = "client_gone"
            note_write_timeout(server_deadline, evidence, sock)
        on_finish(evidence)

    return WholeStream(body, done)


def _record_all(
    frames: Sequence[bytes], kinds: Sequence[FrameKind], size: int, evidence: DeliveryEvidence
) -> None:
    _record_counts(len(frames), kinds.count(FrameKind.CONTENT), FrameKind.TERMINAL in kinds, size, evidence)


def _record_counts(frames: int, content: int, terminal: bool, size: int, evidence: DeliveryEvidence) -> None:
    evidence.headers_committed = True
    evidence.first_frame_at = evidence.last_frame_at = time.monotonic()
    evidence.emitted_frames += frames
    evidence.emitted_bytes += size
    evidence.emitted_content_frames += content
    if terminal:
        evidence.terminal_marker_observed = True


def record_frame(size: int, kind: FrameKind, evidence: DeliveryEvidence) -> None:
    """Count one frame (an SSE event, a WebSocket message) whose write returned."""
    evidence.headers_committed = True
    evidence.last_frame_at = now = time.monotonic()
    if evidence.first_frame_at is None:
        evidence.first_frame_at = now
    evidence.emitted_frames += 1
    evidence.emitted_bytes += size
    if kind is FrameKind.CONTENT:
        evidence.emitted_content_frames += 1
    elif kind is FrameKind.TERMINAL:
        evidence.terminal_marker_observed = True


def _planned(
    frames: Sequence[bytes],
    kinds: Sequence[FrameKind],
    plan: StreamDelivery,
    act: Callable[[Boundary], Generator[bytes, None, bool]],
    sock: Any,
    evidence: DeliveryEvidence,
    malformed_frame: bytes,
) -> Iterator[bytes]:
    index = 0
    while index < len(frames):
        frame, kind = frames[index], kinds[index]
        index += 1
        yield frame
        record_frame(len(frame), kind, evidence)
        if kind is not FrameKind.CONTENT or evidence.emitted_content_frames != plan.after_content_frames:
            continue
        evidence.stream_delivery_applied = True
        following = frames[index] if index < len(frames) else None
        if not (yield from act(Boundary(plan, sock, evidence, following, malformed_frame))):
            return  # the unit set the outcome
    evidence.transport_outcome = "completed"
