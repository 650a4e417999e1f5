"""One realtime WebSocket connection: the reader loop, the turns it answers, and what it journals
(docs/realtime.md; docs/architecture.md, "Realtime over WebSocket").

Two greenlets share a connection. The connection's own greenlet reads: each complete client message
goes to the provider's sans-IO protocol (llmts/providers/realtime.py), whose reaction is applied at once
(acknowledgements written, a turn queued, the turn being answered cancelled, a close). A second greenlet
answers the queued turns one at a time, like a provider request: rate limits, admission from the session's
``"operation": "realtime"`` scenarios, the fixture's delay, completion, rendering, and delivery through
``transport/websocket_delivery.py``, where the ``stream_delivery`` plan acts; each answered turn is one
journal entry with the client events that led to it and the delivery evidence. Reading never waits on a
turn, so pings are answered and a ``response.cancel`` or barge-in interrupts the answer between two events.

Every call into the protocol holds the connection's lock; waiting (a delay, a stall, a slow client) never
does. Nothing here is shared between connections; the session's own parts guard themselves.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, MutableSet
from typing import Any

import orjson

from llmts.errors import (
    LlmtsError,
    MemoryBudgetExceeded,
    RequestSuperseded,
    ScriptedError,
    WebSocketHandshakeInvalid,
)
from llmts.providers.base import ProviderAdapter, ProviderRequest
from llmts.providers.realtime import (
    Reaction,
    RealtimeOpening,
    RealtimeProtocol,
    RealtimeRoute,
    ServerEvent,
    Turn,
)
from llmts.runtime import Session
from llmts.runtime.accounting import account_completion, check_allowances
from llmts.runtime.conversations import CONVERSATION_ENVIRON, Caller, conversation_id_from
from llmts.runtime.journal import JournalRecord
from llmts.runtime.session_memory import MemoryShare
from llmts.schema.operations import REALTIME
from llmts.server.api.metrics import ProcessMetrics
from llmts.server.http.log_text import log_text
from llmts.server.http.upgrade import UpgradeRequest
from llmts.server.realtime.settings import RealtimeSettings
from llmts.server.respond import ENDED_BY_CODES
from llmts.transport import WaitOutcome, wait
from llmts.transport.deadline import ActiveDelivery
from llmts.transport.evidence import DeliveryEvidence
from llmts.transport.websocket import HandshakeRefused, HeldBytes, WebSocket, WebSocketLimits, accept
from llmts.transport.websocket_delivery import deliver_events

__all__ = ["RealtimeConnection"]

_log = logging.getLogger("llmts")
# Turns queued behind the one being answered (a client that asks faster than answers go out).
_MAX_QUEUED_TURNS = 16
# What an open connection costs the worker beyond its conversation (measured: 38 KiB idle, its greenlets,
# HTTP and WebSocket state; benchmarks/README.md, "Realtime connections"), charged to the memory budget.
_CONNECTION_BYTES = 40 * 1024
# The close of a connection whose state the process memory budget has no room for (1013: try again later).
_MEMORY_CLOSE = (
    1013,
    "llmts: the server's memory budget (--max-memory) is full; close connections or delete sessions",
)
# The close of a connection whose session was deleted (as the session's MCP streams end).
_DELETED_CLOSE = (1001, "llmts: the session was deleted")
# How long the reader waits for a cancelled turn to end before it reads on (the turn notices between two
# events or within 50 ms of a wait; a write blocked on a client that does not read may take longer).
_SETTLE_SECONDS = 2.0


class _Ids:
    """A connection's wire ids: seeded by the session's ``determinism.seed`` and the connection's place
    among the session's realtime connections, so a seeded test sees the same ids every run."""

    def __init__(self, seed: str | None, provider: str, ordinal: int) -> None:
        import random

        self._random = (
            random.Random(f"{seed}\x00{provider}\x00realtime\x00{ordinal}") if seed else random.Random()
        )

    def new_id(self, prefix: str) -> str:
        return f"{prefix}_{self._random.getrandbits(96):024x}"


class RealtimeConnection:
    """One accepted WebSocket and its protocol (built by ``open``, run by ``run``)."""

    def __init__(
        self,
        ws: WebSocket,
        adapter: ProviderAdapter,
        protocol: RealtimeProtocol,
        session: Session,
        request: ProviderRequest,
        caller: Caller,
        metrics: ProcessMetrics,
        *,
        named_conversation: bool,
        connection_id: str,
        refused: LlmtsError | None,
        unauthorized: Callable[[LlmtsError], Reaction] | None,
    ) -> None:
        self._ws = ws
        self._adapter = adapter
        self._protocol = protocol
        self._session = session
        self._request = request
        self._caller = caller
        # The client named a conversation by header (journaled as on HTTP routes).
        self._conversation = caller.conversation_id if named_conversation else None
        self._metrics = metrics
        self.connection_id = connection_id
        self._refused = refused
        self._unauthorized = unauthorized
        self._lock = threading.Lock()
        self._turns: deque[Turn] = deque()
        self._wake = threading.Event()
        # Set while no turn is being answered (the reader waits on it after cancelling one).
        self._turn_over = threading.Event()
        self._turn_over.set()
        # The turn being answered and why it was cancelled (None: it was not).
        self._active: Turn | None = None
        self._cancelled: str | None = None
        self._closing = False
        # The server's graceful stop ended the connection (a turn cut by it is journaled so, as on HTTP).
        self._stopping = False
        self._worker: Any = None
        # The connection's share of the process memory budget (``_run`` takes it from the session).
        self._memory = MemoryShare(None, "realtime")

    @classmethod
    def open(
        cls,
        upgrade: UpgradeRequest,
        adapter: ProviderAdapter,
        route: RealtimeRoute,
        request: ProviderRequest,
        session: Session,
        *,
        credential: str | None,
        settings: RealtimeSettings,
        write_timeout: float | None,
        budget: HeldBytes | None,
        metrics: ProcessMetrics,
        refused: LlmtsError | None,
    ) -> RealtimeConnection:
        """Build the protocol (its refusal is an HTTP answer), then answer the handshake. Writes wait
        under ``write_timeout`` with their bytes charged to ``budget`` (the process memory budget)."""
        environ = upgrade.environ
        plan = session.plan.current
        determinism = plan.determinism if plan is not None else None
        ordinal = (session.store.get("realtime", "connections") or 0) + 1
        session.store.put("realtime", "connections", ordinal, 64)
        ids = _Ids(determinism.seed if determinism is not None else None, adapter.namespace, ordinal)
        config = plan.config if plan is not None else None
        script = config.realtime if config is not None else None
        transcripts = iter(script.input_transcripts if script is not None else ())
        protocol = route.open(RealtimeOpening(request, adapter.namespace, ids.new_id, config, transcripts))
        try:
            limits = WebSocketLimits(
                max_message_bytes=settings.max_message_bytes,
                idle_timeout=settings.idle_timeout,
                write_timeout=write_timeout,
                max_messages_per_second=settings.max_messages_per_second,
            )
            ws = accept(
                environ,
                upgrade.sock,
                upgrade.leftover,
                subprotocol=route.subprotocol,
                limits=limits,
                budget=budget,
            )
        except HandshakeRefused as refusal:
            raise WebSocketHandshakeInvalid(refusal.message, http_status=refusal.status) from None
        raw_conversation = environ.get(CONVERSATION_ENVIRON)
        conversation = conversation_id_from(raw_conversation)
        return cls(
            ws,
            adapter,
            protocol,
            session,
            request,
            Caller(conversation, credential),
            metrics,
            named_conversation=raw_conversation is not None,
            connection_id=ids.new_id("rtc"),
            refused=refused,
            unauthorized=route.unauthorized_after_upgrade,
        )

    # --- the reader ------------------------------------------------------------------------------

    def run(self, deliveries: MutableSet[ActiveDelivery] | None = None) -> None:
        """Serve the connection until it closes; while it is open a graceful stop can end it
        (``deliveries``: the worker's registry of what its stop must end)."""
        delivery = ActiveDelivery(DeliveryEvidence(), None, self._go_away)
        if deliveries is not None:
            deliveries.add(delivery)
        try:
            self._run()
        finally:
            if deliveries is not None:
                deliveries.discard(delivery)

    def session_deleted(self) -> None:
        """The session was deleted (its lock held: must not block): close with 1001, as a session's MCP
        streams end; the reader sees the close and the connection ends, giving its memory back."""
        if self._closing or not self._ws.open:
            return
        self._closing = True
        import gevent

        gevent.spawn(self._ws.end, *_DELETED_CLOSE)

    def _go_away(self) -> None:
        """The server is stopping: tell the client as the service does (Gemini's ``goAway``), then close
        with 1001; the reader sees the close and the connection ends."""
        if self._closing or not self._ws.open:
            return
        self._closing = self._stopping = True
        import gevent

        def goodbye() -> None:
            go_away = getattr(self._protocol, "go_away", None)
            if callable(go_away):
                with self._lock:
                    notice = go_away(0.0)
                self._ws.send(notice)
            self._ws.close(1001, "server shutting down")

        gevent.spawn(goodbye)

    def _run(self) -> None:
        import gevent

        ws = self._ws
        if self._refused is not None and self._unauthorized is not None:
            self._apply(self._unauthorized(self._refused))
            ws.close(1008, "unauthorized") if ws.open else None
            return
        self._memory = self._session.peers.open_connection(self)
        if self._closing:  # the session was deleted before the connection opened
            ws.close(*_DELETED_CLOSE)
            return
        if not self._memory.fits(_CONNECTION_BYTES):
            ws.close(*_MEMORY_CLOSE)
            return
        self._memory.charge(_CONNECTION_BYTES)
        self._send_opening()
        self._worker = gevent.spawn(self._answer_turns)
        try:
            while not self._closing and self._read_one():
                pass
        except Exception:  # a bug: close the connection as the service would, never a traceback on the wire
            _log.exception("unhandled error on realtime connection %s", log_text(self._request.path))
            ws.close(1011, "Internal error encountered.")
        finally:
            self._closing = True
            self._cancelled = self._cancelled or "connection_closed"
            self._wake.set()
            worker = self._worker
            if worker is not None:
                worker.join(timeout=5)
                worker.kill(block=False)
            if ws.open:
                ws.close(1000, "")
            self._memory.detach()

    # The next two are methods so that their locals die with them: in ``run``'s frame the opening events
    # and the last message (up to a MiB of audio) would stay referenced while the connection waits.
    def _send_opening(self) -> None:
        with self._lock:
            opening = self._protocol.opening()
        for data in opening:
            self._ws.send(data)

    def _read_one(self) -> bool:
        """Read one client message and apply the protocol's reaction; False once the client has gone."""
        message = self._ws.receive()
        if message is None:
            return False
        with self._lock:
            reaction = self._protocol.receive(message)
            # A close the protocol decided stands; otherwise the message's growth must fit the budget.
            growth = _CONNECTION_BYTES + self._protocol.retained_bytes() - self._memory.charged
            fits = reaction.close is not None or growth <= 0 or self._memory.fits(growth)
            if fits:
                self._memory.charge(self._memory.charged + growth)
        if fits:
            self._apply(reaction)
        else:
            self._out_of_memory(reaction)
        return True

    def _out_of_memory(self, reaction: Reaction) -> None:
        """The client message's growth does not fit the process memory budget: its own events go out, a
        turn it started fails as the protocol reports failures (journaled with the budget's code), and
        the connection closes with 1013; a turn being answered is journaled with that code too."""
        for data in reaction.events:
            self._ws.send(data)
        turn = reaction.turn
        if turn is not None:
            entry = self._open_entry(turn)
            try:
                self._failed(turn, entry, MemoryBudgetExceeded(_MEMORY_CLOSE[1]))
            finally:
                self._finish_entry(entry)
        self._closing = True
        if self._ws.open:
            self._ws.ended_by = self._ws.ended_by or "memory_budget"
            self._ws.close(*_MEMORY_CLOSE)

    def _apply(self, reaction: Reaction) -> None:
        ws = self._ws
        for data in reaction.events:
            ws.send(data)
        if reaction.cancel is not None:
            self._cancel_queued(reaction.cancel)
            if self._active is not None and self._cancelled is None:
                self._cancelled = reaction.cancel
                self._wake.set()
                # The protocol hears how the turn ended before the client's next message (a burst may
                # end the barge-in's speech, which makes the next turn only once this one is over).
                self._turn_over.wait(_SETTLE_SECONDS)
        if reaction.turn is not None:
            if len(self._turns) >= _MAX_QUEUED_TURNS:
                ws.close(1008, "too many pending responses")
                self._closing = True
            else:
                self._turns.append(reaction.turn)
                self._wake.set()
        if reaction.close is not None:
            code, reason = reaction.close
            self._closing = True
            ws.close(code, reason)

    # --- the turns -------------------------------------------------------------------------------

    def _answer_turns(self) -> None:
        while not self._closing:
            if not self._turns:
                # No timeout: whatever ends the connection sets the event (``run``'s ``finally``), and an
                # idle connection costs no wake-ups (1.7 % of a core per 1,000 idle connections at 1 s).
                self._wake.wait()
                self._wake.clear()
                continue
            self._answer_next()

    def _answer_next(self) -> None:
        """The next queued turn (a method: the turn, and the conversation its request holds, are not kept
        while the connection waits for another)."""
        turn = self._turns.popleft()
        self._active, self._cancelled = turn, None
        self._turn_over.clear()
        try:
            self._answer(turn)
        except Exception:
            _log.exception("unhandled error answering a realtime turn on %s", log_text(self._request.path))
            self._ws.close(1011, "Internal error encountered.")
            self._closing = True
        finally:
            self._active = None
            with self._lock:
                # What the answer added to the conversation, charged once the turn is over and journaled:
                # never refused (it is scripted), and evicting nothing by itself (the next growth does).
                self._memory.charge(_CONNECTION_BYTES + self._protocol.retained_bytes())
            self._turn_over.set()

    def _open_entry(self, turn: Turn) -> JournalRecord:
        """The turn's journal entry, with the client events that led to it."""
        journal, neutral = self._session.journal, turn.neutral
        entry = journal.start(
            self._adapter.request_id_prefix + self.connection_id[4:16] + turn.response_id[-8:],
            self._adapter.namespace,
            "GET",
            self._request.path,
        )
        entry.identify(None, self._conversation)
        entry.parsed(REALTIME, neutral.model, True, None, REALTIME)
        events_json = [orjson.dumps(event) for event in turn.client_events]
        entry.realtime_turn(self.connection_id, turn.client_events, events_json, journal.preview_bytes)
        entry.capture_history(neutral.messages, journal.preview_bytes)
        return entry

    def _finish_entry(self, entry: JournalRecord) -> None:
        self._session.journal.finish(entry)
        self._metrics.record(entry)

    def _answer(self, turn: Turn) -> None:
        entry = self._open_entry(turn)
        try:
            self._deliver(turn, entry)
        except LlmtsError as error:
            self._failed(turn, entry, error)
        finally:
            if self._stopping and entry.transport_outcome != "completed" and entry.error_code is None:
                entry.failed_after_status(ENDED_BY_CODES["shutdown"])
            self._finish_entry(entry)

    def _cancel_queued(self, reason: str) -> None:
        """Turns still queued when the client cancels (a ``response.cancel`` or a barge-in in the same burst
        as the request): each ends at once, cancelled before its first event, and is journaled so. Like one
        cancelled during its delay, it consumes its scripted answer: every turn asked for takes one, however
        the cancel races the answer (docs/realtime.md, "Interruption")."""
        while self._turns:
            turn = self._turns.popleft()
            entry = self._open_entry(turn)
            try:
                try:
                    admission = self._session.admit(turn.neutral, self._caller, entry, in_stream=True)
                    entry.admitted(admission.scenario_id)
                except LlmtsError as error:
                    entry.failed(error.code)
                with self._lock:
                    closing = self._protocol.interrupted(turn, [], reason)
                for data in closing:
                    self._ws.send(data)
                entry.answered(200)
                entry.failed_after_status(f"cancelled_{reason}")
            finally:
                self._finish_entry(entry)

    def _deliver(self, turn: Turn, entry: JournalRecord) -> None:
        session, neutral = self._session, turn.neutral
        check_allowances(session, neutral)
        admission = session.admit(neutral, self._caller, entry, in_stream=True)
        entry.admitted(admission.scenario_id)
        generation = admission.generation
        if admission.delay_ms:
            outcome = self._hold(admission.delay_ms / 1000, generation)
            if outcome is not WaitOutcome.ELAPSED:
                session.release(admission)
                if outcome is WaitOutcome.CANCELLED and not self._closing and self._cancelled is not None:
                    self._interrupted(turn, [], entry)
                    return
                if outcome is WaitOutcome.CANCELLED and not self._closing:
                    raise RequestSuperseded(
                        "the session was reset, reconfigured or deleted while this turn was pending"
                    )
                entry.client_gone()
                self._ended_by_server(entry)
                return
        wire = session.plan.wire_identity(entry)
        completion = session.complete(admission, neutral, wire)
        account_completion(session, entry, admission, completion)
        with self._lock:
            events = self._protocol.answer(turn, completion)
        entry.answered(200)
        evidence = DeliveryEvidence(stream_delivery=completion.stream_delivery)
        written = deliver_events(
            self._ws,
            [(event.data, event.kind) for event in events],
            completion.stream_delivery,
            evidence,
            hold=lambda seconds: self._hold(seconds, generation),
            interrupted=lambda: self._cancelled is not None,
        )
        delivered = events[:written]
        if self._cancelled is not None and written < len(events) and self._ws.open:
            self._interrupted(turn, delivered, entry)
            evidence.transport_outcome = evidence.transport_outcome or "early_end"
        elif evidence.ended_by == "superseded" and written < len(events) and self._ws.open:
            # The session was reset or reconfigured during a fault's pause: the turn fails as such, in the
            # protocol's own way (OpenAI: an error event and a failed response.done; Gemini: a close).
            superseded = RequestSuperseded(
                "the session was reset, reconfigured or deleted while this turn was being answered"
            )
            entry.failed(superseded.code)
            with self._lock:
                reaction = self._protocol.failed(turn, superseded)
            self._apply(reaction)
        else:
            with self._lock:
                self._protocol.finished(turn)
        if evidence.transport_outcome is None:
            evidence.transport_outcome = "completed" if written == len(events) else "early_end"
        if not self._ws.open and evidence.transport_outcome == "completed" and written < len(events):
            evidence.transport_outcome = "client_gone"
        entry.apply_evidence(evidence)
        if evidence.transport_outcome == "client_gone":
            self._ended_by_server(entry)
        entry.closed_with(evidence.close_code, evidence.close_reason, written)
        entry.capture_response(b"", [event.data for event in delivered], session.journal.preview_bytes)

    def _ended_by_server(self, entry: JournalRecord) -> None:
        """A connection llmts dropped because the client stopped reading (the write timeout, or the memory
        budget its unread bytes did not fit): the turn's ``error_code`` says so, as on HTTP."""
        code = ENDED_BY_CODES.get(self._ws.ended_by or "")
        if code is not None and entry.error_code is None:
            entry.failed(code)

    def _interrupted(self, turn: Turn, delivered: list[ServerEvent], entry: JournalRecord) -> None:
        reason = self._cancelled or "client_cancelled"
        with self._lock:
            closing = self._protocol.interrupted(turn, delivered, reason)
        for data in closing:
            self._ws.send(data)
        entry.answered(200)
        entry.failed_after_status(f"cancelled_{reason}")

    def _failed(self, turn: Turn, entry: JournalRecord, error: LlmtsError) -> None:
        entry.failed(error.code, error.retry_after if isinstance(error, ScriptedError) else None)
        entry.answered(error.http_status)
        with self._lock:
            reaction = self._protocol.failed(turn, error)
        self._apply(reaction)
        if reaction.close is not None:
            entry.closed_with(reaction.close[0], reaction.close[1], len(reaction.events))

    def _hold(self, seconds: float, generation: int) -> WaitOutcome:
        """A delay or stall: ends early when the turn is cancelled (CANCELLED), the session moves on
        (CANCELLED) or the connection closes (CLIENT_GONE)."""
        session = self._session
        started = time.monotonic()
        while True:
            if not self._ws.open or self._closing:
                return WaitOutcome.CLIENT_GONE
            if self._cancelled is not None or not session.is_current(generation):
                return WaitOutcome.CANCELLED
            left = seconds - (time.monotonic() - started)
            if left <= 0:
                return WaitOutcome.ELAPSED
            wait(min(left, 0.05), None, lambda: False)
