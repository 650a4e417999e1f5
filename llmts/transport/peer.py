"""Notice a client that left, without consuming its bytes (docs/architecture.md, "The path of one
request")."""

from __future__ import annotations

import select
import socket
from collections.abc import Mapping
from typing import Any

__all__ = ["client_socket", "peer_gone"]

# gunicorn's ``gevent`` worker, its ``gevent_pywsgi`` worker, and werkzeug's dev server.
_SOCKET_KEYS = ("gunicorn.socket", "gunicorn.sock", "werkzeug.socket")


def client_socket(environ: Mapping[str, Any]) -> Any:
    """The client's socket from a WSGI environ, or None where the server does not expose it."""
    for key in _SOCKET_KEYS:
        sock = environ.get(key)
        if sock is not None:
            return sock
    return None


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
