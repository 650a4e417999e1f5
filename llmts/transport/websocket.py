"""A server-side WebSocket channel on a client socket the HTTP/1.1 loop handed over (docs/architecture.md,
"Hostile input, limits and timeouts" and "Hand-written code and why").

``accept`` checks the upgrade request llhttp already parsed into the environ (server/http/upgrade.py),
writes the ``101`` and returns a :class:`WebSocket`. The framing is wsproto's sans-IO ``Connection``,
driven directly (its own handshake would re-serialise the parsed head through h11 and let hostile header
values escape as ``UnicodeError``/``ValueError``). What wsproto leaves to its user is done here:

* **Bounds.** wsproto yields a message in pieces as bytes arrive and has no size limit, and its
  permessage-deflate inflates without ``max_length``: messages are assembled here and closed with 1009
  past ``max_message_bytes``, and ``BoundedDeflate`` (transport/websocket_handshake.py) never inflates
  more than that per message, so a few KiB of compressed zeros cannot allocate megabytes. Both
  no-context-takeover flags are always negotiated: no compressor or inflater outlives a message (about
  2 KiB per idle connection instead of 140). Events are taken from wsproto one at a time, so one read
  never assembles more than one message.
* **Time.** Every read waits under the idle deadline, every write under the write deadline
  (transport/deadline.py's ``Deadline``; a write that times out resets the connection), the closing
  handshake under ``close_timeout``; messages and pings are rate-limited by a token bucket.
* **Concurrency (gevent).** One greenlet reads (``receive``, which also answers pings); any greenlet
  sends. Every ``Connection.send`` and the socket write of its bytes happen under one write lock, so
  frames never interleave and the compressor is never shared. A read lock makes sure only one greenlet
  reads the socket: ``close`` from another greenlet lets a running ``receive`` see the peer's close.
* **Closing.** Protocol errors arrive from wsproto as ``CloseConnection`` with the state still OPEN: the
  close is sent here. After our close frame the channel waits for the peer's (bounded), then closes the
  socket; after a frame wsproto could not parse it ends its writing side and drains until EOF instead.
  ``abort`` resets the TCP connection (transport/abort.py). Nothing assumes a plain socket: gevent's
  ``SSLSocket`` works the same.

Deadlines act only in a gevent-patched process (both llmts gunicorn workers); see transport/deadline.py.
"""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from gevent.event import Event as _Event
from gevent.lock import Semaphore
from gevent.socket import socket as _gevent_socket
from wsproto.connection import Connection, ConnectionState, ConnectionType
from wsproto.events import BytesMessage, CloseConnection, Event, Ping, TextMessage
from wsproto.frame_protocol import CloseReason

from llmts.transport.abort import reset_connection
from llmts.transport.deadline import Deadline, write_timed_out
from llmts.transport.websocket_handshake import (
    HandshakeRefused,
    check_request,
    negotiate_deflate,
    response_head,
)

__all__ = ["HandshakeRefused", "HeldBytes", "WebSocket", "WebSocketLimits", "accept"]

# One read; also the most compressed bytes one inflate step is given.
_READ_BYTES = 64 * 1024
_OPEN = ConnectionState.OPEN
_CLOSED = ConnectionState.CLOSED
_MAY_CLOSE = (_OPEN, ConnectionState.REMOTE_CLOSING)  # states in which wsproto sends a close frame


@dataclass(frozen=True, slots=True)
class WebSocketLimits:
    """Per-connection bounds (docs/server.md, "WebSocket limits")."""

    # A whole message, after inflation; over it: close 1009.
    max_message_bytes: int = 1_048_576
    # No frame at all from the client for this long: close 1001 "idle timeout". None: no limit.
    idle_timeout: float | None = 300.0
    # A write the client does not read within this: reset (the client stopped reading). None: no limit.
    write_timeout: float | None = 30.0
    # Messages and pings from the client per second (token bucket, burst = the rate); over it: close 1008
    # "rate limit". 0: no limit.
    max_messages_per_second: int = 200
    # How long to wait for the peer's close frame after ours.
    close_timeout: float = 2.0

    def __post_init__(self) -> None:
        if self.max_message_bytes < 1:
            raise ValueError("max_message_bytes must be at least 1")
        if self.max_messages_per_second < 0:
            raise ValueError("max_messages_per_second must be 0 (no limit) or more")
        for name in ("idle_timeout", "write_timeout", "close_timeout"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"{name} must be positive")


class HeldBytes(Protocol):
    """Where bytes waiting for a slow reader are charged (the server's process memory budget)."""

    def hold(self, size: int) -> bool: ...

    def release(self, size: int) -> None: ...


class _IdleTimeout(Exception):
    pass


class _CloseTimeout(Exception):
    pass


def accept(
    environ: dict[str, Any],
    sock: Any,
    leftover: bytes,
    *,
    subprotocol: str | None,
    limits: WebSocketLimits,
    budget: HeldBytes | None = None,
) -> WebSocket:
    """Validate the upgrade request already parsed into ``environ``, write the 101 and return the channel.

    Checks: GET over HTTP/1.1, ``Connection`` has ``upgrade``, ``Upgrade`` has ``websocket``, ``Host``, a
    key that is the base64 of 16 bytes (else ``HandshakeRefused(400)``), ``Sec-WebSocket-Version: 13``
    (else 426). Non-ASCII protocol or extension headers and malformed permessage-deflate parameters are
    400, before anything is written. ``subprotocol`` is echoed only when the client offered it;
    permessage-deflate is accepted with both no-context-takeover flags when offered. ``leftover`` (bytes
    the client sent after the head) is the first input. ``budget`` is charged with a write's bytes while
    the write waits for the client (refused: the connection is reset, ``ended_by="memory_budget"``).
    If the 101 cannot be written the channel comes back already over (``receive`` returns None).
    """
    offered, extensions, key = check_request(environ)
    deflate, accepted = negotiate_deflate(extensions, limits.max_message_bytes)
    chosen = subprotocol if subprotocol is not None and subprotocol in offered else None
    conn = Connection(
        ConnectionType.SERVER, extensions=[deflate] if deflate is not None else None, trailing_data=leftover
    )
    # Events leave one by one, often several in a row: Nagle's algorithm would hold the later ones back
    # until the client acknowledged the first (Node's ``ws`` turns it off too).
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    channel = WebSocket(sock, conn, limits, offered, chosen, deflate is not None, budget)
    with channel._write_lock:
        channel._write(response_head(key, chosen, accepted))
    return channel


class WebSocket:
    """One accepted WebSocket connection (see the module docstring for who may call what)."""

    __slots__ = (
        "_budget",
        "_close_sent",
        "_conn",
        "_events",
        "_idle",
        "_limits",
        "_parser_alive",
        "_parts",
        "_peer_done",
        "_plain",
        "_read_lock",
        "_refilled",
        "_size",
        "_sock",
        "_sock_closed",
        "_tokens",
        "_write_deadline",
        "_write_lock",
        "bytes_sent",
        "close_code_received",
        "close_code_sent",
        "close_reason_received",
        "close_reason_sent",
        "compressed",
        "ended_by",
        "last_binary",
        "messages_received",
        "messages_sent",
        "offered_subprotocols",
        "subprotocol",
    )

    def __init__(
        self,
        sock: Any,
        conn: Connection,
        limits: WebSocketLimits,
        offered: tuple[str, ...],
        subprotocol: str | None,
        compressed: bool,
        budget: HeldBytes | None,
    ) -> None:
        self._sock = sock
        self._conn = conn
        self._limits = limits
        self._budget = budget
        # gevent's plain socket takes a per-call timeout (0.0: never wait); its SSLSocket ignores it.
        self._plain = type(sock) is _gevent_socket
        self._write_lock = Semaphore()
        self._read_lock = Semaphore()
        self._peer_done = _Event()  # the peer's close arrived, or the socket is closed
        self._write_deadline = (
            Deadline(limits.write_timeout, write_timed_out) if limits.write_timeout is not None else None
        )
        self._idle = Deadline(limits.idle_timeout, _IdleTimeout) if limits.idle_timeout is not None else None
        self._events: Iterator[Event] | None = conn.events()  # ``leftover`` is parsed on the first read
        self._parser_alive = True
        self._parts: list[bytes] = []
        self._size = 0
        self._tokens = float(limits.max_messages_per_second)
        self._refilled = time.monotonic()
        self._close_sent = False
        self._sock_closed = False
        self.offered_subprotocols = offered
        self.subprotocol = subprotocol  # what the 101 echoed
        self.compressed = compressed  # permessage-deflate negotiated
        self.last_binary = False  # whether the last message ``receive`` returned was binary
        self.messages_sent = 0
        self.bytes_sent = 0  # message payload bytes (before compression)
        self.messages_received = 0
        self.close_code_sent: int | None = None
        self.close_reason_sent: str | None = None
        self.close_code_received: int | None = None
        self.close_reason_received: str | None = None
        # client_closed | server_closed | aborted | idle_timeout | write_timeout | memory_budget |
        # message_too_big | rate_limited | protocol_error | eof; None while open.
        self.ended_by: str | None = None

    @property
    def open(self) -> bool:
        """Messages can still be sent: no close frame either way, socket not closed."""
        return self._conn.state is _OPEN and not self._sock_closed

    # --- sending (any greenlet) ---------------------------------------------------------------------

    def send(self, data: bytes, *, binary: bool = False) -> bool:
        """Send one message (a text frame unless ``binary``; text must be UTF-8, else ``ValueError``).
        False if the connection is closing or closed, or the write failed or timed out (then the
        connection was reset, ``ended_by="write_timeout"``)."""
        return self._send_message(data if binary else data.decode("utf-8"), len(data))

    def send_raw(self, data: bytes) -> bool:
        """Send ``data`` as a text frame even when it is not what the protocol expects (the
        ``malformed_event`` fault); bytes that are not UTF-8 are replaced, so the framing stays valid."""
        return self._send_message(data.decode("utf-8", "replace"), len(data))

    def _send_message(self, payload: str | bytes, size: int) -> bool:
        if not self.open:
            return False
        with self._write_lock:
            if not self.open:
                return False
            event = BytesMessage(data=payload) if isinstance(payload, bytes) else TextMessage(data=payload)
            if not self._write(self._conn.send(event)):
                return False
        self.messages_sent += 1
        self.bytes_sent += size
        return True

    def end(self, code: int, reason: str) -> None:
        """End the connection now: ``close`` when no write is under way, else a reset (a write blocked on a
        client that does not read would hold the close frame back until the write deadline)."""
        if self._write_lock.locked():
            self.abort()
        else:
            self.close(code, reason)

    def close(self, code: int = 1000, reason: str = "") -> None:
        """Send our close frame (once; nothing if a close was already sent or the socket is closed), wait
        up to ``close_timeout`` for the peer's, then close the socket. A greenlet running ``receive``
        meanwhile sees the peer's close; otherwise this greenlet reads for it."""
        if not self._send_close(code, reason, "server_closed"):
            return
        if self._conn.state is _CLOSED:  # the peer's close had arrived: ours completed the handshake
            self._close_socket()
            return
        if self._read_lock.acquire(blocking=False):
            try:
                self._await_peer_close()
            finally:
                self._read_lock.release()
        else:
            self._peer_done.wait(self._limits.close_timeout)
        self._close_socket()

    def abort(self) -> None:
        """Drop the TCP connection with a reset, without a close frame."""
        if self._sock_closed:
            return
        if self.ended_by is None:
            self.ended_by = "aborted"
        self._sock_closed = True
        reset_connection(self._sock)
        self._after_close()

    def wait_closed(self, seconds: float | None) -> bool:
        """Wait (without reading: the ``receive`` greenlet does) until the peer's close arrived or the
        socket is closed, at most ``seconds``; whether it did. For stalls that end with the connection."""
        return bool(self._peer_done.wait(seconds))

    def _send_close(self, code: int, reason: str, ended_by: str) -> bool:
        """Encode and write our close frame under the write lock; whether it left."""
        with self._write_lock:
            if self._close_sent or self._sock_closed or self._conn.state not in _MAY_CLOSE:
                return False
            frame = self._conn.send(CloseConnection(code=code, reason=reason))
            self._close_sent = True
            self.close_code_sent = code
            self.close_reason_sent = reason
            if self.ended_by is None:
                self.ended_by = ended_by
            return self._write(frame)

    def _write(self, data: bytes | bytearray) -> bool:
        """Write ``data`` (the caller holds the write lock): tried without waiting on a plain socket, the
        rest under the write deadline; a timeout resets the connection. Whether all of it left."""
        if self._sock_closed:
            return False
        sock = self._sock
        deadline = self._write_deadline
        try:
            view: bytes | bytearray | memoryview = data
            if self._plain:
                try:
                    sent = sock.send(data, 0, 0.0)
                except BlockingIOError:
                    sent = 0
                if sent == len(data):
                    return True
                view = memoryview(data)[sent:]
            budget = self._budget
            if budget is not None and not budget.hold(len(data)):
                if self.ended_by is None:
                    self.ended_by = "memory_budget"
                self.abort()
                return False
            try:
                if deadline is not None:
                    deadline.arm()
                sock.sendall(view)
            finally:
                if deadline is not None:
                    deadline.disarm()
                if budget is not None:
                    budget.release(len(data))
            return True
        except OSError:
            if deadline is not None and deadline.expired:
                if self.ended_by is None:
                    self.ended_by = "write_timeout"
                self.abort()
            else:
                if self.ended_by is None:
                    self.ended_by = "eof"
                self._close_socket()
            return False

    # --- receiving (one greenlet) -------------------------------------------------------------------

    def receive(self) -> bytes | None:
        """The next complete message from the client (text as its UTF-8 bytes, binary as is;
        ``last_binary`` says which), or None once the connection is over for reading: the peer closed
        (its close answered), a protocol error, a limit or the idle timeout (our close sent), EOF or a
        socket error. Answers pings meanwhile. Never raises."""
        with self._read_lock:
            try:
                return self._receive()
            except (OSError, _IdleTimeout):
                # A write that failed, or the socket closed by another greenlet (``close``, ``abort``).
                if self.ended_by is None:
                    self.ended_by = "eof"
                self._close_socket()
                return None

    def _receive(self) -> bytes | None:
        conn = self._conn
        while True:
            if self._sock_closed:
                return None
            events = self._events
            if events is not None:
                for event in events:
                    if isinstance(event, (TextMessage, BytesMessage)):
                        message = self._on_data(event)
                        if message is not None:
                            return message
                    elif isinstance(event, Ping):
                        if not self._take_token():
                            self._fail(CloseReason.POLICY_VIOLATION, "rate limit", "rate_limited")
                            return None
                        with self._write_lock:
                            if conn.state is _OPEN and not self._sock_closed:
                                self._write(conn.send(event.response()))
                    elif isinstance(event, CloseConnection):
                        self._on_close(event)
                        return None
                    if self._sock_closed:
                        return None
                self._events = None
            data = self._recv_idle()
            if data is None:
                self._fail(CloseReason.GOING_AWAY, "idle timeout", "idle_timeout")
                return None
            if not data:
                if self.ended_by is None:
                    self.ended_by = "eof"
                self._close_socket()
                return None
            conn.receive_data(data)
            self._events = conn.events()

    def _recv_idle(self) -> bytes | None:
        """One read under the idle deadline; None when it expired."""
        idle = self._idle
        if idle is None:
            data: bytes = self._sock.recv(_READ_BYTES)
            return data
        idle.arm()
        try:
            data = self._sock.recv(_READ_BYTES)
            return data
        except _IdleTimeout:
            return None
        finally:
            idle.disarm()

    def _on_data(self, event: TextMessage | BytesMessage) -> bytes | None:
        """Add a piece of a message; the message once it is complete."""
        if self._close_sent:
            return None  # after our close frame, data is discarded (RFC 6455 1.4)
        data = event.data
        chunk = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        self._size += len(chunk)
        if self._size > self._limits.max_message_bytes:
            self._fail(CloseReason.MESSAGE_TOO_BIG, "message too big", "message_too_big")
            return None
        self._parts.append(chunk)
        if not event.message_finished:
            return None
        parts = self._parts
        message = parts[0] if len(parts) == 1 else b"".join(parts)
        parts.clear()
        self._size = 0
        if not self._take_token():
            self._fail(CloseReason.POLICY_VIOLATION, "rate limit", "rate_limited")
            return None
        self.messages_received += 1
        self.last_binary = isinstance(event, BytesMessage)
        return message

    def _take_token(self) -> bool:
        rate = self._limits.max_messages_per_second
        if not rate:
            return True
        now = time.monotonic()
        self._tokens = min(float(rate), self._tokens + (now - self._refilled) * rate)
        self._refilled = now
        if self._tokens < 1.0:
            return False
        self._tokens -= 1.0
        return True

    def _on_close(self, event: CloseConnection) -> None:
        conn = self._conn
        state = conn.state
        if state is ConnectionState.REMOTE_CLOSING or state is _CLOSED:
            # The peer's close: the first of the handshake (we answer it), or the answer to ours.
            self.close_code_received = int(event.code)
            self.close_reason_received = event.reason or ""
            if state is ConnectionState.REMOTE_CLOSING:
                self._send_close(int(event.code), event.reason or "", "client_closed")
            self._close_socket()
            return
        # A frame wsproto could not parse (the state is unchanged): its parser is done.
        self._parser_alive = False
        if event.code == CloseReason.MESSAGE_TOO_BIG:
            self._fail(CloseReason.MESSAGE_TOO_BIG, "message too big", "message_too_big")
        else:
            self._fail(int(event.code), event.reason or "", "protocol_error")

    def _fail(self, code: int, reason: str, ended_by: str) -> None:
        """Close from the reading greenlet: our close frame, the peer's (bounded), the socket."""
        self._parts.clear()
        self._size = 0
        if self._send_close(code, reason, ended_by):
            self._await_peer_close()
        self._close_socket()

    def _await_peer_close(self) -> None:
        """Read (the read lock is held) until the peer's close frame, EOF or ``close_timeout``. After a
        frame wsproto could not parse, end our writing side (the client sees our close, then EOF) and
        drain until the client closes."""
        if self._sock_closed:
            return
        sock = self._sock
        if not self._parser_alive:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_WR)
        deadline = Deadline(self._limits.close_timeout, _CloseTimeout)
        deadline.arm()
        try:
            while True:
                if self._parser_alive and self._events is not None:
                    for event in self._events:
                        if isinstance(event, CloseConnection):
                            if self._conn.state is _CLOSED:
                                self.close_code_received = int(event.code)
                                self.close_reason_received = event.reason or ""
                                return
                            self._parser_alive = False
                            break
                    self._events = None
                data = sock.recv(_READ_BYTES)
                if not data:
                    return
                if self._parser_alive:
                    self._conn.receive_data(data)
                    self._events = self._conn.events()
        except (_CloseTimeout, OSError):
            return
        finally:
            deadline.close()

    def _close_socket(self) -> None:
        if not self._sock_closed:
            self._sock_closed = True
            with contextlib.suppress(OSError):
                self._sock.close()
        self._after_close()

    def _after_close(self) -> None:
        self._peer_done.set()
        self._parts.clear()
        for deadline in (self._idle, self._write_deadline):
            if deadline is not None:
                deadline.close()
