"""Socket-level delivery: stream bodies, interruptible waits, disconnect detection. Never imports runtime."""

from __future__ import annotations

from llmts.transport.delivery import stream_body
from llmts.transport.peer import client_socket, peer_gone
from llmts.transport.waiting import WaitOutcome, wait

__all__ = ["WaitOutcome", "client_socket", "peer_gone", "stream_body", "wait"]
