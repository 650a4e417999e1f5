"""Pacing of a streamed answer (``pacing``, docs/realistic-answers.md "Pacing").

The server waits the time to the first frame (``ttft_ms``) before the answer is committed, like a
fixture's ``delay_ms``; this module spaces the frames after the first one. Frame ``i`` is due its share of
the answer's output tokens at ``tokens_per_second`` (the share is its share of the stream's bytes after the
first frame, so the whole stream takes ``tokens / tokens_per_second``), each wait varied by up to
``jitter`` from a seeded source. The wait happens in the request's own greenlet through
``transport.waiting.wait`` (no greenlet or timer per frame); frames due within ``_MIN_WAIT_SECONDS`` of
each other leave in one write, so a fast pace costs at most ``1 / _MIN_WAIT_SECONDS`` writes per second.
A reset, reconfigure or delete of the session ends the stream cleanly where it is (``ended_by =
"superseded"``); a client that leaves ends it as ``client_gone``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from llmts.schema.faults import FrameKind
from llmts.transport.evidence import DeliveryEvidence
from llmts.transport.waiting import WaitOutcome, wait

__all__ = ["StreamPacing", "deliver_paced", "jittered", "schedule"]

# Waits shorter than this are not slept: the frames in between go out together with the next write.
_MIN_WAIT_SECONDS = 0.01

Wait = Callable[[float, Any, Callable[[], bool]], WaitOutcome]


@dataclass(slots=True)
class StreamPacing:
    """What the server hands the writer for one paced stream (built once per request)."""

    # Seconds per output token (None: no spacing after the first frame).
    seconds_per_token: float | None
    jitter: float
    # The answer's output tokens (its usage), spread over the frames after the first.
    tokens: int
    # The jitter source (seeded under ``determinism``); None without jitter.
    rng: random.Random | None
    # True once the session was reset, reconfigured or deleted.
    cancelled: Callable[[], bool]
    # The time to the first frame the server already waited (planned, with its jitter), for the journal.
    ttft_seconds: float = 0.0


def jittered(seconds: float, jitter: float, rng: random.Random | None) -> float:
    """``seconds`` varied uniformly by up to ``jitter`` of itself."""
    if not jitter or rng is None or seconds <= 0:
        return seconds
    return seconds * (1.0 + jitter * (2.0 * rng.random() - 1.0))


def schedule(
    lengths: Sequence[int],
    tokens: int,
    seconds_per_token: float | None,
    jitter: float,
    rng: random.Random | None,
) -> list[float]:
    """The wait before each frame after the first (``len(lengths) - 1`` values)."""
    rest = lengths[1:]
    total = sum(rest)
    if seconds_per_token is None or not total or tokens <= 0:
        return [0.0] * len(rest)
    stream_seconds = tokens * seconds_per_token
    return [jittered(stream_seconds * length / total, jitter, rng) for length in rest]


def deliver_paced(
    frames: Sequence[bytes],
    kinds: Sequence[FrameKind],
    pacing: StreamPacing,
    sock: Any,
    evidence: DeliveryEvidence,
    *,
    wait: Wait = wait,
    clock: Callable[[], float] = time.monotonic,
    separate: bool = False,
) -> Iterator[bytes]:
    """Write ``frames`` on the schedule, recording each frame once its write returned; ``separate``
    writes every frame on its own (a recorded stream's chunk boundaries) instead of batching the ones due
    together."""
    waits = schedule(
        [len(frame) for frame in frames], pacing.tokens, pacing.seconds_per_token, pacing.jitter, pacing.rng
    )
    evidence.pacing_planned_ms = round((pacing.ttft_seconds + sum(waits)) * 1000, 3)
    start = clock()
    due = 0.0  # seconds after ``start`` the next frame is due
    batch = 0  # first frame not yet written
    for index in range(1, len(frames)):
        due += waits[index - 1]
        left = start + due - clock()
        if left < _MIN_WAIT_SECONDS and not separate:
            continue
        yield b"".join(frames[batch:index])
        _written(frames, kinds, batch, index, evidence, clock())
        batch = index
        left = start + due - clock()
        if left < (_MIN_WAIT_SECONDS if separate else 0):
            continue
        outcome = wait(left, sock, pacing.cancelled)
        if outcome is WaitOutcome.CANCELLED:
            evidence.ended_by = "superseded"
            evidence.transport_outcome = "early_end"
            return
        if outcome is WaitOutcome.CLIENT_GONE:
            evidence.transport_outcome = "client_gone"
            return
    if batch < len(frames):
        yield b"".join(frames[batch:])
        _written(frames, kinds, batch, len(frames), evidence, clock())
    evidence.transport_outcome = "completed"


def _written(
    frames: Sequence[bytes],
    kinds: Sequence[FrameKind],
    first: int,
    end: int,
    evidence: DeliveryEvidence,
    now: float,
) -> None:
    evidence.headers_committed = True
    if evidence.first_frame_at is None:
        evidence.first_frame_at = now
    evidence.last_frame_at = now
    evidence.emitted_frames += end - first
    for index in range(first, end):
        evidence.emitted_bytes += len(frames[index])
        kind = kinds[index]
        if kind is FrameKind.CONTENT:
            evidence.emitted_content_frames += 1
        elif kind is FrameKind.TERMINAL:
            evidence.terminal_marker_observed = True
