"""Deadlines on blocking socket work, and the guard every response body passes through.

Under gevent a blocked ``recv``/``sendall`` only returns when the peer acts, so a client that stops
reading (its receive window fills) or stops sending holds a greenlet and a socket forever. A
``Deadline`` is a hub timer that throws an exception into the greenlet that armed it; armed around the
server's ``sendall`` of one chunk (the code after a ``yield`` runs once ``sendall`` returned, see
docs/architecture.md, "The path of one request"), it bounds that one write. Without gevent (werkzeug's
dev server, in-memory tests) deadlines are no-ops: the workers llmts supports are gevent's.

``guard_writes`` wraps a body iterator: it arms the write deadline around each chunk's write, and it
ends a stream cleanly (stop yielding: the server writes the chunked terminator) once the server's
shutdown marked the delivery ``ended_by = "shutdown"``.

llmts's own pywsgi handler bounds writes itself, cheaper: it tries each write without waiting and arms
the connection's one ``Deadline`` only for what the socket buffer refused, so a response that fits the
buffer (almost all of them) never touches a timer. It puts that deadline into the environ under
``SERVER_WRITE_DEADLINE``; the app then arms nothing per chunk and only reads ``expired`` when the
response is over (``note_write_timeout``). It also hands the app a per-connection dict under
``SERVER_CONNECTION_DEADLINES`` where the app keeps deadlines of its own (the request body's), made at
the connection's first request, re-armed per request, and closed by the handler with the connection:
a timer made and closed per request costs more than the body read it bounds.
"""

from __future__ import annotations

import contextlib
import socket
import struct
from collections.abc import Callable, Iterator, MutableSet
from typing import Any

from greenlet import getcurrent as _getcurrent

from llmts.transport.abort import ConnectionAborted
from llmts.transport.evidence import DeliveryEvidence
from llmts.transport.peer import shutdown_under_tls

__all__ = [
    "SERVER_CONNECTION_DEADLINES",
    "SERVER_WRITE_DEADLINE",
    "ActiveDelivery",
    "Deadline",
    "deadlines_available",
    "end_delivery",
    "guard_writes",
    "note_write_timeout",
    "stop_reading",
    "write_timed_out",
]

# Environ key of the server's per-connection write deadline (a ``Deadline``), where the server has one.
SERVER_WRITE_DEADLINE = "llmts.write_deadline"
# Environ key of the per-connection ``dict[str, Deadline]`` the app keeps its own deadlines in.
SERVER_CONNECTION_DEADLINES = "llmts.connection_deadlines"


def _patched() -> bool:
    try:
        from gevent import monkey
    except ImportError:  # pragma: no cover - gevent is a dependency
        return False
    return bool(monkey.is_module_patched("socket"))


def _hub() -> Any:
    # Asked once per response on the hot path: the imports and the patch check are looked up once per
    # process (patching happens before the app is loaded and is never undone).
    global _GET_HUB
    if _GET_HUB is None:
        if _patched():
            from gevent import get_hub

            _GET_HUB = get_hub
        else:
            _GET_HUB = _no_hub
    return _GET_HUB()


def _no_hub() -> Any:
    return None


_GET_HUB: Any = None


def deadlines_available() -> bool:
    """True where deadlines act: in a gevent-patched process (both llmts gunicorn workers)."""
    return _hub() is not None


class Deadline:
    """A re-armable timer that throws ``error()`` into the greenlet that armed it when it expires.

    ``error`` makes the exception only when the deadline fires: building one per request (most never
    fire) is a cost on the hot path."""

    __slots__ = ("_error", "_greenlet", "_timer", "ended_by", "expired")

    def __init__(self, seconds: float, error: Callable[[], BaseException]) -> None:
        hub = _hub()
        # ``repeat`` is what ``again`` restarts from: a libev timer restarted with ``start`` after a
        # ``stop`` resumes the time it had left, so a re-armed deadline would shrink with every use.
        self._timer = hub.loop.timer(seconds, seconds) if hub is not None else None
        self._error = error
        self._greenlet: Any = None
        self.expired = False
        # What ``note_write_timeout`` records: a server that ends a write for another reason than the
        # clock (the memory budget, server/http/pywsgi_handler.py) sets ``expired`` and says why here.
        self.ended_by = "write_timeout"

    def arm(self) -> None:
        """Start the full interval again (each arming bounds one piece of work on its own)."""
        if self._timer is not None:
            self._greenlet = _getcurrent()
            self._timer.again(self._expire)

    def disarm(self) -> None:
        if self._timer is not None:
            self._timer.stop()

    def close(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer.close()
            self._timer = None

    def _expire(self) -> None:
        if self._timer is not None:
            self._timer.stop()  # it repeats (see __init__): fire once per arming
        self.expired = True
        if self._greenlet is not None:
            self._greenlet.throw(self._error())

    def __enter__(self) -> Deadline:
        self.arm()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ActiveDelivery:
    """A response being written: what the server's shutdown needs to end it cleanly. ``end``: how a
    long-lived connection (a realtime WebSocket) says goodbye itself, at the start of the graceful stop."""

    __slots__ = ("end", "evidence", "sock")

    def __init__(self, evidence: DeliveryEvidence, sock: Any, end: Callable[[], None] | None = None) -> None:
        self.evidence = evidence
        self.sock = sock
        self.end = end


def end_delivery(delivery: ActiveDelivery) -> None:
    """Ask a running delivery to end cleanly now (server shutdown deadline).

    The guard stops before its next chunk; a writer waiting between frames (delay, stall, drip) sees
    its socket readable at EOF and returns at once, so the stream ends with a clean chunked end.
    """
    delivery.evidence.ended_by = "shutdown"
    if delivery.end is not None:
        delivery.end()
        return
    stop_reading(delivery.sock)


def stop_reading(sock: Any) -> None:
    """Shut the read side: later reads see EOF at once (nothing waits for bytes the client never sends)."""
    if sock is not None:
        with contextlib.suppress(OSError):
            shutdown_under_tls(sock, socket.SHUT_RD)


def _drop_unsent(sock: Any) -> None:
    """Make the server's coming close a reset: a stalled reader's unsent bytes are discarded at once."""
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def write_timed_out() -> BaseException:
    """The exception a write deadline throws into the writing greenlet."""
    return ConnectionAborted("llmts dropped a client that stopped reading")


def note_write_timeout(deadline: Deadline | None, evidence: DeliveryEvidence, sock: Any) -> None:
    """After a response: if its write deadline fired, say so in the evidence and make the close a reset."""
    if deadline is not None and deadline.expired:
        evidence.ended_by = deadline.ended_by
        _drop_unsent(sock)


def guard_writes(
    chunks: Iterator[bytes],
    evidence: DeliveryEvidence,
    sock: Any,
    write_timeout: float | None,
    active: MutableSet[ActiveDelivery] | None,
    server_deadline: Deadline | None = None,
) -> Iterator[bytes]:
    """Yield ``chunks`` with each write bounded by ``write_timeout`` and the delivery visible to shutdown.

    A write that outlives its deadline raises ``ConnectionAborted`` inside the server's ``sendall``
    (benign to both gunicorn gevent workers: the connection is dropped without a traceback); the inner
    writer then records ``client_gone`` and ``evidence.ended_by`` says ``write_timeout``. With a
    ``server_deadline`` (the server bounds its own writes) nothing is armed here.
    """
    deadline = (
        Deadline(write_timeout, write_timed_out)
        if write_timeout is not None and server_deadline is None
        else None
    )
    delivery = ActiveDelivery(evidence, sock)
    if active is not None:
        active.add(delivery)
    try:
        for chunk in chunks:
            if evidence.ended_by is not None:
                if evidence.transport_outcome is None:
                    evidence.transport_outcome = "early_end"
                return
            if deadline is None:
                yield chunk
                continue
            deadline.arm()
            yield chunk
            deadline.disarm()
    finally:
        if deadline is not None:
            deadline.close()
        note_write_timeout(deadline or server_deadline, evidence, sock)
        if active is not None:
            active.discard(delivery)
        close = getattr(chunks, "close", None)
        if close is not None:
            close()  # the inner writer's ``finally`` records the outcome and completes the journal entry
