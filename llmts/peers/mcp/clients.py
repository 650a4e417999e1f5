"""An MCP server's client sessions (``Mcp-Session-Id``): what each client negotiated, its subscriptions,
the messages waiting for its stream, the server's requests waiting for its answers, and its calls in
flight (so ``notifications/cancelled`` can end them).

Memory: a client session counts its estimated resident size (``resident``: ``CLIENT_RESIDENT_BYTES``,
its subscriptions, the messages waiting for its stream) and reports each change to the book that holds
it, which charges the server's memory share (the process budget, docs/journal.md "Process memory
budget"). The engine refuses a new session or subscription the budget has no room for; what a session
queues for its stream is bounded by count (``PEER_LIMITS``), so it is charged, never refused.

Sans-IO: waiting happens in the server layer (``llmts/server/peers/mcp_*.py``) on the ``threading``
events these objects set; under the gevent worker ``threading`` is gevent's, so a wait never blocks the
worker. Everything a client session keeps is bounded (``PEER_LIMITS``): of what the client sent at its
handshake only which server requests it can take and its name and version, cut to ``_INFO_CHARS``.
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from llmts.peers.jsonrpc import Message, RequestId
from llmts.schema.peer_limits import PEER_LIMITS

__all__ = [
    "CLIENT_RESIDENT_BYTES",
    "LOG_LEVELS",
    "SUBSCRIPTION_ID_KEY",
    "ClientBook",
    "Flight",
    "McpClient",
    "PendingAnswer",
    "Sent",
    "subscription_bytes",
]

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
# The client capabilities llmts acts on: the server requests a tool may send before its result.
_ASKABLE = ("elicitation", "sampling", "roots")
# ``clientInfo.name`` and ``.version`` are kept at most this long (nothing else of ``clientInfo``).
_INFO_CHARS = 256

# The ``_meta`` key naming the ``subscriptions/listen`` request a frame of its stream belongs to.
SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId"

# Told whether a queued answer left on the client's stream (True) or never will (False).
Sent = Callable[[bool], None]

# Estimated resident bytes (measured with tracemalloc, 2026-12-05: a client session 4.3 KB, a 60-character
# subscription 190 B, a queued ``resources/updated`` 500 B): a client session, a subscription beyond its
# URI, a queued notification, and a queued answer or server request (rendered from the configuration,
# whose texts it shares).
CLIENT_RESIDENT_BYTES = 5120
_SUBSCRIPTION_BYTES = 160
_NOTE_BYTES = 512
_REPLY_BYTES = 1024


def subscription_bytes(uri: str) -> int:
    """What a session's subscription to ``uri`` is charged."""
    return _SUBSCRIPTION_BYTES + len(uri)


class PendingAnswer:
    """A request the server sent the client (``elicitation/create``, ``sampling/createMessage``,
    ``roots/list``), waiting for the client's POSTed response."""

    __slots__ = ("answer", "done", "id", "method")

    def __init__(self, request_id: str, method: str) -> None:
        self.id = request_id
        self.method = method
        self.done = threading.Event()
        self.answer: Message | None = None

    def request(self, params: dict[str, Any] | None) -> dict[str, Any]:
        """The JSON-RPC request the client is sent."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.id, "method": self.method}
        if params is not None:
            message["params"] = params
        return message

    def record(self) -> dict[str, Any]:
        """The journal's ``client_answers`` item of the client's answer."""
        answer = self.answer
        assert answer is not None
        record: dict[str, Any] = {"method": self.method, "id": self.id}
        if answer.error is not None:
            record["error"] = answer.error
        else:
            record["result"] = answer.result
        return record


class Flight:
    """A call in flight: ``cancelled`` is set by ``notifications/cancelled`` (or the session ending);
    ``on_cancel``, when set, is run then too (the server layer cuts a delivery short with it)."""

    __slots__ = ("cancelled", "on_cancel")

    def __init__(self) -> None:
        self.cancelled = threading.Event()
        self.on_cancel: Callable[[], None] | None = None

    def cancel(self) -> None:
        self.cancelled.set()
        hook = self.on_cancel
        if hook is not None:
            hook()


def _text(value: Any) -> str | None:
    return value[:_INFO_CHARS] if isinstance(value, str) else None


class McpClient:
    """One client session. ``ended``: closed by DELETE, eviction, or the server leaving the
    configuration (404 from then on, like an id never issued); ``expired``: the ``session_expired`` fault
    (404 from then on, but the id stays known so the journal can say why).

    Its stream's queue holds notifications (at most ``mcp_pending_notifications``: the oldest is dropped
    beyond it) and, on the legacy transport, answers and the server's requests, which are never dropped:
    at most ``mcp_legacy_calls_in_flight`` wait, and ``offer`` refuses more until the stream took some
    (``room`` is set then)."""

    __slots__ = (
        "_in_flight",
        "_lock",
        "_next_request",
        "_notes",
        "_pending",
        "_queue",
        "_replies",
        "_report",
        "_stream",
        "client_info",
        "declared",
        "ended",
        "expired",
        "id",
        "initialized",
        "legacy",
        "listening",
        "log_level",
        "resident",
        "room",
        "subscription_id",
        "subscriptions",
        "version",
        "wake",
    )

    def __init__(
        self,
        version: str,
        capabilities: Mapping[str, Any],
        client_info: Mapping[str, Any],
        *,
        legacy: bool = False,
    ) -> None:
        self.id = secrets.token_hex(16)
        self.legacy = legacy
        self.resident = CLIENT_RESIDENT_BYTES
        # Told each change of ``resident`` while a book holds the session (``ClientBook``).
        self._report: Callable[[int], None] | None = None
        self.handshake(version, capabilities, client_info)
        self.initialized = False
        self.ended = False
        self.expired = False
        self.log_level: str | None = None
        self.subscriptions: set[str] = set()
        # A 2026-07-28 ``subscriptions/listen`` stream: the list kinds it watches (None: a client session,
        # told every change) and the listen's id, stamped on what it is told.
        self.listening: frozenset[str] | None = None
        self.subscription_id: RequestId | None = None
        # Set when something is waiting for the stream, or the session ended.
        self.wake = threading.Event()
        # Set when the stream took answers (``offer`` may succeed again), or the session ended.
        self.room = threading.Event()
        self._lock = threading.Lock()
        # (message, sent callback or None for a notification), in the order they are to be written.
        self._queue: deque[tuple[dict[str, Any], Sent | None]] = deque()
        self._notes = 0
        self._replies = 0
        self._pending: dict[str, PendingAnswer] = {}
        self._in_flight: dict[RequestId, Flight] = {}
        self._next_request = 0
        self._stream: object | None = None

    def handshake(
        self, version: str, capabilities: Mapping[str, Any], client_info: Mapping[str, Any]
    ) -> None:
        """What ``initialize`` negotiated; only a bounded copy of what the client sent is kept."""
        self.version = version
        self.declared = frozenset(name for name in _ASKABLE if isinstance(capabilities.get(name), dict))
        self.client_info = {
            "name": _text(client_info.get("name")),
            "version": _text(client_info.get("version")),
        }

    @property
    def usable(self) -> bool:
        return not (self.ended or self.expired)

    def declares(self, capability: str) -> bool:
        return capability in self.declared

    # --- memory -----------------------------------------------------------------------------------------

    def _grew(self, delta: int) -> None:
        self.resident += delta
        report = self._report
        if report is not None and delta:
            report(delta)

    def bind(self, report: Callable[[int], None] | None) -> None:
        """``report`` (None: nobody) is told each change of ``resident`` from now on; the one told before
        is given the whole size back, the new one charged it."""
        old = self._report
        if old is not None:
            old(-self.resident)
        self._report = report
        if report is not None:
            report(self.resident)

    def subscribe(self, uris: Iterable[str]) -> None:
        """Subscribe to ``uris`` (the caller checked the limit)."""
        for uri in uris:
            if uri not in self.subscriptions:
                self.subscriptions.add(uri)
                self._grew(subscription_bytes(uri))

    def unsubscribe(self, uri: str) -> None:
        if uri in self.subscriptions:
            self.subscriptions.discard(uri)
            self._grew(-subscription_bytes(uri))

    def wants_log(self, level: str) -> bool:
        """Whether a ``notifications/message`` at ``level`` goes to this client (``logging/setLevel``)."""
        wanted = self.log_level
        return wanted is None or LOG_LEVELS.index(level) >= LOG_LEVELS.index(wanted)

    # --- the stream -----------------------------------------------------------------------------------

    def push(self, notification: dict[str, Any]) -> None:
        """A server notification for the stream (the oldest notification is dropped when too many wait)."""
        with self._lock:
            self._queue.append((notification, None))
            self._notes += 1
            if self._notes > PEER_LIMITS["mcp_pending_notifications"]:
                self._drop_oldest_note()
            else:
                self._grew(_NOTE_BYTES)
        self.wake.set()

    def changed(self, method: str, params: dict[str, Any] | None = None, kind: str | None = None) -> None:
        """A change notification (``kind``: the list a ``list_changed`` is about) for the stream, unless a
        listen did not ask for that kind; a listen's carry its id in ``_meta``."""
        if self.listening is not None:
            if kind is not None and kind not in self.listening:
                return
            params = {**(params or {}), "_meta": {SUBSCRIPTION_ID_KEY: self.subscription_id}}
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.push(message)

    def _queued_bytes(self) -> int:
        return self._notes * _NOTE_BYTES + self._replies * _REPLY_BYTES

    def _drop_oldest_note(self) -> None:
        for index, (_, sent) in enumerate(self._queue):
            if sent is None:
                del self._queue[index]
                self._notes -= 1
                return

    def offer(self, message: dict[str, Any], sent: Sent) -> bool:
        """An answer or a server request for the stream, never dropped: False (nothing queued) when the
        session ended or ``mcp_legacy_calls_in_flight`` already wait; ``sent`` is told how it ended."""
        with self._lock:
            if not self.usable:
                return False
            if self._replies >= PEER_LIMITS["mcp_legacy_calls_in_flight"]:
                self.room.clear()
                return False
            self._queue.append((message, sent))
            self._replies += 1
            self._grew(_REPLY_BYTES)
        self.wake.set()
        return True

    def drain(self) -> list[tuple[dict[str, Any], Sent | None]]:
        """Everything waiting for the stream, oldest first (the stream tells each ``sent``)."""
        with self._lock:
            self.wake.clear()
            messages = list(self._queue)
            self._queue.clear()
            self._grew(-self._queued_bytes())
            self._notes = 0
            if self._replies:
                self._replies = 0
                self.room.set()
        if not self.usable:
            self.wake.set()
        return messages

    def attach_stream(self) -> object:
        """A new stream takes over from an older one of this session (which then ends)."""
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
        if not self.usable:
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

    def call_started(self, request_id: RequestId) -> Flight:
        flight = Flight()
        with self._lock:
            self._in_flight[request_id] = flight
        return flight

    def calls_in_flight(self) -> int:
        with self._lock:
            return len(self._in_flight)

    def call_ended(self, request_id: RequestId, flight: Flight) -> None:
        with self._lock:
            if self._in_flight.get(request_id) is flight:
                del self._in_flight[request_id]

    def cancel(self, request_id: object) -> bool:
        """``notifications/cancelled`` for a call in flight: its waits end and it answers nothing more.
        Only a JSON-RPC id (a string or an integer) names a call."""
        if not (
            isinstance(request_id, str) or (isinstance(request_id, int) and not isinstance(request_id, bool))
        ):
            return False
        with self._lock:
            flight = self._in_flight.get(request_id)
        if flight is None:
            return False
        flight.cancel()
        return True

    # --- the end --------------------------------------------------------------------------------------

    def end(self, *, expired: bool = False) -> None:
        """Close the session: its stream ends, every wait on it returns, and the answers still waiting
        for the stream are told they never left."""
        with self._lock:
            if expired:
                self.expired = True
            else:
                self.ended = True
            pending = list(self._pending.values())
            self._pending.clear()
            flights = list(self._in_flight.values())
            unsent = [sent for _, sent in self._queue if sent is not None]
            self._queue.clear()
            self._grew(-self._queued_bytes())
            self._notes = self._replies = 0
        for waiting in pending:
            waiting.done.set()
        for flight in flights:
            flight.cancelled.set()
        for sent in unsent:
            sent(False)
        self.room.set()
        self.wake.set()


class ClientBook:
    """The client sessions of one MCP server, oldest first; bounded (``mcp_sessions_per_server``): a new
    session beyond the limit ends the oldest. It outlives resets and reconfigurations of its server.
    ``report`` is told each change of what the sessions it holds keep in memory (their ``resident``)."""

    __slots__ = ("_clients", "_closed", "_limit", "_lock", "_report")

    def __init__(
        self, limit: int = PEER_LIMITS["mcp_sessions_per_server"], report: Callable[[int], None] | None = None
    ) -> None:
        self._closed = False
        self._lock = threading.Lock()
        self._clients: OrderedDict[str, McpClient] = OrderedDict()
        self._limit = limit
        self._report = report

    def open(
        self,
        version: str,
        capabilities: Mapping[str, Any],
        client_info: Mapping[str, Any],
        *,
        legacy: bool = False,
    ) -> McpClient:
        client = McpClient(version, capabilities, client_info, legacy=legacy)
        with self._lock:
            self._clients[client.id] = client
            client.bind(self._report)
            evicted = []
            while len(self._clients) > self._limit:
                evicted.append(self._clients.popitem(last=False)[1])
        for old in evicted:
            _let_go(old)
        return client

    def admit(self, client: McpClient) -> bool:
        """Add ``client`` unless the book is full (then False: nothing is ended to make room). A book whose
        server left meanwhile (``end_all``) ends it at once."""
        with self._lock:
            if len(self._clients) >= self._limit:
                return False
            if not self._closed:
                self._clients[client.id] = client
                client.bind(self._report)
                return True
        client.end()
        return True

    def get(self, session_id: str) -> McpClient | None:
        with self._lock:
            return self._clients.get(session_id)

    def remove(self, session_id: str) -> McpClient | None:
        with self._lock:
            client = self._clients.pop(session_id, None)
        if client is not None:
            _let_go(client)
        return client

    def live(self) -> list[McpClient]:
        with self._lock:
            return [client for client in self._clients.values() if client.usable]

    def __len__(self) -> int:
        with self._lock:
            return len(self._clients)

    @property
    def full(self) -> bool:
        """Whether a new session ends the oldest (``open``) or is refused (``admit``)."""
        return len(self) >= self._limit

    def end_all(self) -> None:
        with self._lock:
            self._closed = True
            clients = list(self._clients.values())
            self._clients.clear()
        for client in clients:
            _let_go(client)


def _let_go(client: McpClient) -> None:
    """A session leaves its book: its memory is given back, then it ends."""
    client.bind(None)
    client.end()
