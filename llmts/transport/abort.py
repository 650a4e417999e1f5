"""Hard connection faults: a TCP reset, or a close with no response at all.

Measured on gunicorn 27 + gevent 26.9 (both ``gevent`` and ``gevent_pywsgi`` workers): SO_LINGER(1, 0)
then close makes the kernel send RST; raising an exception that subclasses ``ConnectionResetError``
afterwards makes gunicorn treat the connection as gone without logging a traceback.
"""

from __future__ import annotations

import contextlib
import errno
import socket
import struct
from typing import Any

__all__ = ["ConnectionAborted", "close_silently", "reset_connection"]


class ConnectionAborted(ConnectionResetError):
    """Raised after llmts deliberately dropped the connection; the WSGI server treats it as benign."""

    def __init__(self, reason: str) -> None:
        super().__init__(errno.ECONNRESET, reason)


def reset_connection(sock: Any) -> ConnectionAborted:
    """Send a TCP RST on ``sock`` and return the exception the caller must raise."""
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RD)
        with contextlib.suppress(OSError):
            sock.close()
    return ConnectionAborted("llmts reset the connection (stream_delivery plan)")


def close_silently(sock: Any) -> ConnectionAborted:
    """Close ``sock`` with a FIN before any response byte; return the exception the caller must raise."""
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            sock.close()
    return ConnectionAborted("llmts closed the connection without a response (stream_delivery plan)")
