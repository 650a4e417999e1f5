"""``malformed_frame``: insert one frame no parser of the protocol accepts, then continue normally."""

from __future__ import annotations

from collections.abc import Generator

from llmts.transport.modes.base import Boundary, in_stream

__all__ = ["MALFORMED_SSE_FRAME", "act"]

# The default broken frame (SSE JSON streams): the JSON object is cut off. A provider whose parsers skip
# it may supply its own (``Reply.malformed_frame``).
MALFORMED_SSE_FRAME = b'data: {"llmts_malformed_frame": \n\n'


@in_stream("malformed_frame")
def act(at: Boundary) -> Generator[bytes, None, bool]:
    frame = at.malformed_frame
    yield frame
    at.evidence.emitted_frames += 1
    at.evidence.emitted_bytes += len(frame)
    return True
