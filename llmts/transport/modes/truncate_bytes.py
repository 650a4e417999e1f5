"""``truncate_bytes``: send the first ``cut_bytes`` bytes of the next frame, then end the body cleanly."""

from __future__ import annotations

from collections.abc import Generator

from llmts.transport.modes.base import Boundary, in_stream

__all__ = ["act"]


@in_stream("truncate_bytes")
def act(at: Boundary) -> Generator[bytes, None, bool]:
    if at.next_frame is not None:
        piece = at.next_frame[: at.plan.cut_bytes]
        yield piece
        at.evidence.emitted_bytes += len(piece)  # bytes only: a cut frame is not an emitted frame
    at.evidence.transport_outcome = "early_end"
    return False
