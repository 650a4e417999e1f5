"""Writes a client is slow to read, charged to the process memory budget while they wait (docs/journal.md,
"Process memory budget"): shared by the connection loop (connection.py) and the ``gevent_pywsgi`` handler
(pywsgi_handler.py). Also the first, never-waiting try of a write on a TLS connection (``--tls``)."""

from __future__ import annotations

from ssl import SSLWantReadError, SSLWantWriteError
from typing import Any

from gevent.ssl import SSLSocket

from llmts.runtime.memory import MemoryBudget
from llmts.transport.abort import ConnectionAborted
from llmts.transport.deadline import Deadline

__all__ = ["SSLSocket", "memory_budget", "send_held", "try_send_tls"]

# At most this much is tried at once on a TLS connection. OpenSSL must be given at least what it began of a
# refused write again; the ``sendall`` that follows does (its first piece is at least 1 MiB, gevent).
_TLS_TRY_BYTES = 64 * 1024


def memory_budget(app: Any) -> MemoryBudget | None:
    """The process memory budget of llmts's app (None for another WSGI app)."""
    budget = getattr(getattr(app, "registry", None), "memory", None)
    return budget if isinstance(budget, MemoryBudget) else None


def send_held(
    sock: Any, rest: memoryview, deadline: Deadline, budget: MemoryBudget | None, held: int
) -> None:
    """Send what the socket buffer refused under the write deadline, the ``held`` bytes of this write
    charged to ``budget`` while it waits: a client that does not read keeps them alive until the write
    timeout. A write the budget cannot hold ends the connection at once, journaled as
    ``llm_test_server_memory_exhausted``."""
    if budget is not None and not budget.hold(held):
        deadline.expired = True
        deadline.ended_by = "memory_budget"
        raise ConnectionAborted("llmts dropped a client that stopped reading: the memory budget is full")
    deadline.arm()
    try:
        sock.sendall(rest)
    finally:
        deadline.disarm()
        if budget is not None:
            budget.release(held)


def try_send_tls(sock: Any, data: bytes | bytearray | memoryview) -> int:
    """What a TLS socket takes now without waiting (0 when its buffer is full). gevent's TLS ``send``
    ignores a timeout argument and waits with the socket's own, unbounded, where a plain socket's
    ``send(data, 0, 0.0)`` returns at once: so the socket gets a zero timeout for this one try, and what it
    refuses goes through ``send_held`` under the write deadline as on a plain connection."""
    timeout = sock.gettimeout()
    sock.settimeout(0.0)
    try:
        return int(sock.send(memoryview(data)[:_TLS_TRY_BYTES]))
    except (BlockingIOError, SSLWantReadError, SSLWantWriteError):
        return 0
    finally:
        sock.settimeout(timeout)
