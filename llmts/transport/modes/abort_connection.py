"""``abort_connection``: reset the TCP connection (RST) right after the boundary frame."""

from __future__ import annotations

from collections.abc import Generator

from llmts.transport.abort import reset_connection
from llmts.transport.modes.base import Boundary, in_stream

__all__ = ["act"]


@in_stream("abort_connection")
def act(at: Boundary) -> Generator[bytes, None, bool]:
    yield from ()  # sends nothing more
    at.evidence.transport_outcome = "aborted"
    raise reset_connection(at.sock)
