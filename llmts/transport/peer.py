"""Notice a client that left, without consuming its bytes (ARCHITECTURE.md, transport facts)."""

from __future__ import annotations

import select
import socket
from typing import Any

__all__ = ["peer_gone"]


def peer_gone(sock: Any, timeout: float = 0.0) -> bool:
    """True when the peer closed its side; waits up to ``timeout`` for it to become readable.

    A readable socket with bytes (a pipelined next request) is not a departure. Under gevent, ``select`` is
    cooperative, so waiting here never blocks other greenlets.
    """
    if sock is None:
        return False
    try:
        readable, _, _ = select.select([sock], [], [], timeout)
        if not readable:
            return False
        return bool(sock.recv(1, socket.MSG_PEEK) == b"")
    except (OSError, ValueError):
        return True
