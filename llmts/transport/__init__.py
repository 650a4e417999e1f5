"""Socket-level delivery: stream bodies, interruptible waits, disconnect detection. Never imports runtime."""

from __future__ import annotations

from llmts.transport.evidence import DeliveryEvidence
from llmts.transport.peer import client_socket, peer_gone
from llmts.transport.waiting import WaitOutcome, wait

__all__ = ["DeliveryEvidence", "WaitOutcome", "client_socket", "peer_gone", "wait"]
