"""Waiting for the journal: a stream's entry completes after its delivery, which may end after the client
has read the last frame."""

from __future__ import annotations

import time
from typing import Any

from llmts import SessionClient

__all__ = ["completed_entry"]

# Generous: the entry usually completes within milliseconds, and a busy machine must not fail the wait.
_TIMEOUT = 30.0


def completed_entry(session: SessionClient, *, timeout: float = _TIMEOUT, **filters: Any) -> dict[str, Any]:
    """The newest journal entry matching ``filters`` (``session.requests`` keywords), once it completed."""
    deadline = time.monotonic() + timeout
    while True:
        entries = session.requests(**filters)
        if entries and entries[0]["completed"]:
            return dict(entries[0])
        assert time.monotonic() < deadline, f"no completed entry for {filters}: {entries}"
        time.sleep(0.01)
