"""``slow_drip``: deliver the whole stream in pieces paced at ``bytes_per_second``.

Pieces are ``rate / 20`` bytes, so a drip costs at most 20 writes per second and no greenlet of its own;
the time a write itself took counts towards the pause before the next piece.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from llmts.schema.faults import FrameKind, StreamDelivery
from llmts.transport.evidence import DeliveryEvidence
from llmts.transport.modes.base import Wait, never, paced
from llmts.transport.waiting import WaitOutcome, wait

__all__ = ["deliver"]

# slow_drip writes this many times per second at most.
_DRIP_WRITES_PER_SECOND = 20


@paced("slow_drip")
def deliver(
    frames: Sequence[bytes],
    kinds: Sequence[FrameKind],
    plan: StreamDelivery,
    sock: Any,
    evidence: DeliveryEvidence,
    *,
    wait: Wait = wait,
    clock: Callable[[], float] = time.monotonic,
) -> Iterator[bytes]:
    rate = plan.bytes_per_second or 1
    piece_size = max(1, rate // _DRIP_WRITES_PER_SECOND)
    evidence.stream_delivery_applied = True
    owed = 0.0  # seconds the previous piece "costs" at the configured rate, slept before the next one
    for frame, kind in zip(frames, kinds, strict=True):
        for start in range(0, len(frame), piece_size):
            if owed > 0 and wait(owed, sock, never) is WaitOutcome.CLIENT_GONE:
                evidence.transport_outcome = "client_gone"
                return
            piece = frame[start : start + piece_size]
            started = clock()
            yield piece
            evidence.headers_committed = True
            evidence.emitted_bytes += len(piece)
            owed = len(piece) / rate - (clock() - started)
        evidence.emitted_frames += 1
        if kind is FrameKind.CONTENT:
            evidence.emitted_content_frames += 1
        elif kind is FrameKind.TERMINAL:
            evidence.terminal_marker_observed = True
    evidence.transport_outcome = "completed"
