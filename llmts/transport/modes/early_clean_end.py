"""``early_clean_end``: stop after the boundary frame; gunicorn ends the chunked body cleanly."""

from __future__ import annotations

from collections.abc import Generator

from llmts.transport.modes.base import Boundary, in_stream

__all__ = ["act"]


@in_stream("early_clean_end")
def act(at: Boundary) -> Generator[bytes, None, bool]:
    yield from ()  # sends nothing more
    at.evidence.transport_outcome = "early_end"
    return False
