"""An MCP server's client sessions (``Mcp-Session-Id``): what each client negotiated, its subscriptions,
the notifications waiting for its GET stream, the server's requests waiting for its answers, and its
calls in flight (so ``notifications/cancelled`` can end them).

Sans-IO: waiting happens in the server layer (``llmts/server/peers/mcp_http.py``) on the ``threading``
events these objects set; under the gevent worker ``threading`` is gevent's, so a wait never blocks the
worker. Every collection is bounded (``PEER_LIMITS``).
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict, deque
from typing import Any

from llmts.peers.jsonrpc import Message, RequestId
from llmts.schema.peer_limits import PEER_LIMITS

__all__ = ["ClientBook", "McpClient", "PendingAnswer"]


class PendingAnswer:
    """A request the server sent the client (``elicitation/create``, ``sampling/createMessage``,
    ``roots/list``), waiting for the client's POSTed response."""

    __slots__ = ("answer", "done", "id", "method")

    def __init__(self, request_id: str, method: str) -> None:
        self.id = request_id
        self.method = method
        self.done = threading.Event()
        self.answer: Message | None = None


class McpClient:
    """One client session. ``ended``: closed by DELETE, eviction, or the server leaving the
    configuration (404 from then on, like an id never issued); ``expired``: the ``session_expired`` fault
    (404 from then on, but the id stays known so the journal can say why)."""

    __slots__ = (
        "_in_flight",
        "_lock",
        "_next_request",
        "_outbox",
        "_pending",
        "_stream",
        "capabilities",
        "client_info",
        "ended",
        "expired",
        "id",
        "initialized",
        "legacy",
        "log_level",
        "subscriptions",
        "version",
        "wake",
    )

    def __init__(
        self,
        version: str,
        capabilities: dict[str, Any],
        client_info: dict[str, Any],
        *,
        legacy: bool = False,
        session_id: str | None = None,
    ) -> None:
        self.id = session_id or secrets.token_hex(16)
        self.version = version
        self.capabilities = capabilities
        self.client_info = client_info
        self.legacy = legacy
        self.initialized = False
        self.ended = False
        self.expired = False
        self.log_level: str | None = None
        self.subscriptions: set[str] = set()
        # Set when something is waiting for the GET stream, or the session ended.
        self.wake = threading.Event()
        self._lock = threading.Lock()
        self._outbox: deque[dict[str, Any]] = deque(maxlen=PEER_LIMITS["mcp_pending_notifications"])
        self._pending: dict[str, PendingAnswer] = {}
        self._in_flight: dict[RequestId, threading.Event] = {}
        self._next_request = 0
        self._stream: object | None = None

    @property
    def usable(self) -> bool:
        return not (self.ended or self.expired)

    def declares(self, capability: str) -> bool:
        return isinstance(self.capabilities.get(capability), dict)

    # --- the GET stream -------------------------------------------------------------------------------

    def push(self, message: dict[str, Any]) -> None:
        """A server message for the GET stream (the oldest is dropped when the outbox is full)."""
        with self._lock:
            self._outbox.append(message)
        self.wake.set()

    def drain(self) -> list[dict[str, Any]]:
        with self._lock:
            self.wake.clear()
            messages = list(self._outbox)
            self._outbox.clear()
        if self.ended or self.expired:
            self.wake.set()
        return messages

    def attach_stream(self) -> object:
        """A new GET stream takes over from an older one of this session (which then ends)."""
        token = object()
        with self._lock:
            self._stream = token
        self.wake.set()
        return token

    def owns_stream(self, token: object) -> bool:
        return self._stream is token

    def detach_stream(self, token: object) -> None:
        with self._lock:
            if self._stream is token:
                self._stream = None

    # --- the server's requests and the client's answers ----------------------------------------------

    def ask(self, method: str) -> PendingAnswer:
        with self._lock:
            self._next_request += 1
            pending = PendingAnswer(f"llmts-{self._next_request}", method)
            self._pending[pending.id] = pending
        if self.ended or self.expired:
            pending.done.set()
        return pending

    def answered(self, message: Message) -> PendingAnswer | None:
        """The client's response to one of the server's requests; None when no request has that id."""
        with self._lock:
            pending = self._pending.pop(str(message.id), None)
        if pending is not None:
            pending.answer = message
            pending.done.set()
        return pending

    def forget(self, pending: PendingAnswer) -> None:
        with self._lock:
            self._pending.pop(pending.id, None)

    # --- calls in flight ------------------------------------------------------------------------------

    def call_started(self, request_id: RequestId) -> threading.Event:
        cancelled = threading.Event()
        with self._lock:
            self._in_flight[request_id] = cancelled
        return cancelled

    def calls_in_flight(self) -> int:
        with self._lock:
            return len(self._in_flight)

    def call_ended(self, request_id: RequestId) -> None:
        with self._lock:
            self._in_flight.pop(request_id, None)

    def cancel(self, request_id: Any) -> bool:
        """``notifications/cancelled`` for a call in flight: its waits end and it answers nothing more."""
        with self._lock:
            cancelled = self._in_flight.get(request_id)
        if cancelled is None:
            return False
        cancelled.set()
        return True

    # --- the end --------------------------------------------------------------------------------------

    def end(self, *, expired: bool = False) -> None:
        """Close the session: its GET stream ends and every wait on it returns."""
        with self._lock:
            if expired:
                self.expired = True
            else:
                self.ended = True
            pending = list(self._pending.values())
            self._pending.clear()
            flights = list(self._in_flight.values())
        for waiting in pending:
            waiting.done.set()
        for flight in flights:
            flight.set()
        self.wake.set()


class ClientBook:
    """The client sessions of one MCP server, oldest first; bounded (``mcp_sessions_per_server``): a new
    session beyond the limit ends the oldest. It outlives resets and reconfigurations of its server."""

    __slots__ = ("_clients", "_limit", "_lock")

    def __init__(self, limit: int = PEER_LIMITS["mcp_sessions_per_server"]) -> None:
        self._lock = threading.Lock()
        self._clients: OrderedDict[str, McpClient] = OrderedDict()
        self._limit = limit

    def open(
        self, version: str, capabilities: dict[str, Any], client_info: dict[str, Any], *, legacy: bool = False
    ) -> McpClient:
        client = McpClient(version, capabilities, client_info, legacy=legacy)
        with self._lock:
            self._clients[client.id] = client
            evicted = []
            while len(self._clients) > self._limit:
                evicted.append(self._clients.popitem(last=False)[1])
        for old in evicted:
            old.end()
        return client

    def get(self, session_id: str) -> McpClient | None:
        with self._lock:
            return self._clients.get(session_id)

    def remove(self, session_id: str) -> McpClient | None:
        with self._lock:
            client = self._clients.pop(session_id, None)
        if client is not None:
            client.end()
        return client

    def live(self) -> list[McpClient]:
        with self._lock:
            return [client for client in self._clients.values() if client.usable]

    def __len__(self) -> int:
        with self._lock:
            return len(self._clients)

    def end_all(self) -> None:
        with self._lock:
            clients = list(self._clients.values())
            self._clients.clear()
        for client in clients:
            client.end()
