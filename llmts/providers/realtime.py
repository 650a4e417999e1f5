"""The seam between a realtime protocol and the server's WebSocket driver (docs/realtime.md).

A realtime protocol (OpenAI Realtime in ``providers/openai/realtime/``, Gemini Live in
``providers/gemini/live/``) is sans-IO, like h11: one ``RealtimeProtocol`` object per WebSocket
connection holds the conversation the client built (items, the input audio buffer, the session's
settings) and turns client messages into a ``Reaction``; it never touches a socket, a clock or the
session. The driver (``llmts/server/realtime/``) owns everything else: the handshake, reading and writing
frames, admission and completion of each turn from the session's scenarios (``"operation": "realtime"``),
delays, fault plans, cancellation and the journal.

The flow of one connection:

1. after the 101 the driver sends ``opening()`` (OpenAI: ``session.created``; Gemini: nothing);
2. each complete client message goes to ``receive()``; the driver sends the reaction's ``events`` at once,
   then cancels the turn being answered if ``cancel`` says so (and sends ``interrupted()``), then admits
   ``turn`` if there is one, then closes if ``close`` says so;
3. an admitted turn is completed by the session and rendered with ``answer()``: the list of events the
   driver writes in order (with the fault plan acting at content events), then ``finished()``; or with
   ``failed()`` when the scripted answer is an error or nothing answers the turn.

Every method is called with the connection's lock held, so a protocol needs no lock of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from llmts.errors import LlmtsError
from llmts.schema.config import SessionConfig
from llmts.schema.faults import FrameKind
from llmts.schema.neutral import Completion, NeutralRequest

if TYPE_CHECKING:
    from llmts.providers.base import ProviderRequest

__all__ = [
    "ClientEvent",
    "Reaction",
    "RealtimeOpening",
    "RealtimeProtocol",
    "RealtimeRoute",
    "ServerEvent",
    "Turn",
]

# One client event as the journal keeps it: ``{"type": ...}`` plus what identifies what it carried
# (item ids and roles, texts, call ids and outputs, audio byte counts; never the audio itself).
ClientEvent = dict[str, Any]


@dataclass(slots=True)
class ServerEvent:
    """One message to the client: its JSON bytes and what it is to fault plans and evidence (``CONTENT``
    for a delta that carries the answer, ``TERMINAL`` for the event that ends the turn, else ``OTHER``)."""

    data: bytes
    kind: FrameKind = FrameKind.OTHER


@dataclass(slots=True)
class Turn:
    """A model turn the client asked for: the neutral request the session's scenarios answer (``operation``
    ``realtime``; ``messages`` the conversation so far, so conversation predicates and tool results work),
    the client events since the previous turn, and how the answer is wanted."""

    neutral: NeutralRequest
    client_events: list[ClientEvent]
    # The protocol's id for this answer (OpenAI's ``resp_...``; Gemini has none: any unique string).
    response_id: str
    # Answer with audio (and its transcript) rather than text: the session's output modality.
    audio: bool = False
    # Protocol-private state the protocol needs again in ``answer``/``failed``/``interrupted``.
    context: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Reaction:
    """What one client message leads to."""

    # Events to send now, in order (acknowledgements: ``session.updated``, ``conversation.item.added``...).
    events: list[bytes] = field(default_factory=list)
    # Cancel the turn being answered, with this reason (``client_cancelled``, ``turn_detected``).
    cancel: str | None = None
    # A model turn to answer after ``events``.
    turn: Turn | None = None
    # Close the connection after the rest: (code, reason).
    close: tuple[int, str] | None = None


class RealtimeProtocol(Protocol):
    """One connection's protocol state (see the module docstring for the order of calls)."""

    def opening(self) -> list[bytes]:
        """Events to send right after the handshake."""
        ...

    def receive(self, message: bytes) -> Reaction:
        """One complete client message (a text frame's UTF-8 bytes, or a binary frame's bytes)."""
        ...

    def answer(self, turn: Turn, completion: Completion) -> list[ServerEvent]:
        """The events of an answered turn, in order; the protocol adds the answer to its conversation."""
        ...

    def finished(self, turn: Turn) -> None:
        """The driver wrote the last of ``answer``'s events (or all it will write): the turn is over and
        the next one may start."""
        ...

    def failed(self, turn: Turn | None, error: LlmtsError) -> Reaction:
        """How the protocol reports an error (OpenAI: an ``error`` event, and a failed ``response.done`` for
        a turn; Gemini: a close code and reason)."""
        ...

    def interrupted(self, turn: Turn, delivered: list[ServerEvent], reason: str) -> list[bytes]:
        """The events that end a turn cancelled after ``delivered`` were written (OpenAI: the open parts'
        ``.done`` events and ``response.done`` with status ``cancelled``; Gemini: ``interrupted``)."""
        ...

    def retained_bytes(self) -> int:
        """The estimated resident bytes the connection keeps between messages beyond its fixed cost (its
        conversation): what the process memory budget is charged for it."""
        ...


@dataclass(frozen=True, slots=True)
class RealtimeOpening:
    """What a protocol is built from: the handshake request (path arguments, query, headers; no body), the
    session's configuration (Azure's deployments), and the connection's id source (``new_id("resp")``
    -> ``"resp_..."``; seeded by the session's ``determinism.seed`` when it has one)."""

    request: ProviderRequest
    provider: str
    new_id: Callable[[str], str]
    # The session's configuration (None: unconfigured).
    config: SessionConfig | None = None
    # The next scripted input transcripts of this connection (``realtime.input_transcripts``), in order.
    transcripts: Iterator[str] = field(default_factory=lambda: iter(()))

    def heard(self, fallback: str) -> str:
        """What the user said in the next committed audio input: the next scripted transcript, else
        ``fallback`` (the protocol's description of the audio)."""
        return next(self.transcripts, fallback)

    @property
    def deployments(self) -> dict[str, str]:
        """Azure deployment -> the model it serves (the session's ``azure_deployments``)."""
        return dict(self.config.azure_deployments) if self.config is not None else {}


@dataclass(frozen=True, slots=True)
class RealtimeRoute:
    """A WebSocket route of an adapter: its werkzeug rule (the whole path, like the HTTP routes'), how the
    credential is read from the handshake, the subprotocol the server echoes when offered (``realtime``
    for the browser and Node clients), and the factory of one connection's protocol. ``open`` raises an
    ``LlmtsError`` to refuse the handshake (answered in the adapter's HTTP error envelope before any 101)."""

    rule: str
    credential: Callable[[ProviderRequest], str | None]
    open: Callable[[RealtimeOpening], RealtimeProtocol]
    subprotocol: str | None = None
    # How a refused credential is told after the 101 (OpenAI: an ``error`` event then close 3000) or, None,
    # before it (an HTTP 401 in the adapter's envelope; Gemini closes 1008 after the 101 instead).
    unauthorized_after_upgrade: Callable[[LlmtsError], Reaction] | None = None
