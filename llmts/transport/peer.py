"""Notice a client that left, without consuming its bytes (docs/architecture.md, "The path of one
request")."""

from __future__ import annotations

import select
import socket
import ssl
from collections.abc import Mapping
from typing import Any

__all__ = ["client_socket", "peer_gone", "shutdown_under_tls"]

# A TLS record whose type is an alert (close_notify or a fatal one) means the client is closing. TLS 1.2
# shows the type; TLS 1.3 sends an alert as application data, told apart by its size: 2 bytes of alert, 1 of
# inner type and a 16-byte AEAD tag (an HTTP request or a WebSocket frame is never that short).
_TLS_ALERT = 0x15
_TLS_APPLICATION_DATA = 0x17
_TLS13_ALERT_RECORD = 2 + 1 + 16

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
        if isinstance(sock, ssl.SSLSocket):
            return _tls_peer_closing(sock)
        return bool(sock.recv(1, socket.MSG_PEEK) == b"")
    except BlockingIOError:
        return False
    except (OSError, ValueError):
        return True


def _tls_peer_closing(sock: Any) -> bool:
    """A TLS socket refuses MSG_PEEK: peek at the record under it instead (``llmts serve --tls``)."""
    head = super(ssl.SSLSocket, sock).recv(5, socket.MSG_PEEK)
    if head == b"" or head[0] == _TLS_ALERT:
        return True
    if len(head) < 5 or head[0] != _TLS_APPLICATION_DATA:
        return False
    return int.from_bytes(head[3:5], "big") == _TLS13_ALERT_RECORD and sock.version() == "TLSv1.3"


def shutdown_under_tls(sock: Any, how: int) -> None:
    """``sock.shutdown(how)``, leaving a TLS socket's encryption in place: ``SSLSocket.shutdown`` drops it,
    so what is written afterwards (a stream's clean end) would leave in clear text. Under the gunicorn
    workers ``ssl`` is gevent's (patched), so ``ssl.SSLSocket`` is the class their sockets have."""
    if isinstance(sock, ssl.SSLSocket):
        super(ssl.SSLSocket, sock).shutdown(how)
    else:
        sock.shutdown(how)
