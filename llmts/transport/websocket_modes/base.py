"""The shape of a WebSocket delivery unit, its decorator, and what it acts on: the channel it writes to
and the boundary it is called at (docs/architecture.md#stream-delivery-fault-modes).

A unit is one function in its own module of this package, decorated with ``@on_websocket("<mode>")``,
which marks it as the HTTP shapes' decorators do (``llmts/transport/modes/base.py``), so one check,
``registry_of``, builds both registries. It is called once, right after the plan's boundary event went
out, with an ``EventBoundary``; it acts through ``at.channel``, records what it sent in ``at.evidence``
after the call returned, and returns True to let the turn's remaining events go out, or False after
setting ``evidence.transport_outcome`` to end the turn.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, Protocol, TypeVar

from llmts.schema.faults import Channel, DeliveryKind, StreamDelivery
from llmts.transport.evidence import DeliveryEvidence
from llmts.transport.modes.base import declare_unit
from llmts.transport.waiting import WaitOutcome

__all__ = [
    "MALFORMED_EVENT",
    "EventAct",
    "EventBoundary",
    "EventChannel",
    "OnWebSocket",
    "on_websocket",
]

# The default broken event: a text frame whose JSON object is cut off (the transport names no protocol's
# events; a protocol may supply its own).
MALFORMED_EVENT = b'{"malformed_event": "cut off here: '


class EventChannel(Protocol):
    """The WebSocket a turn's events go out on (``llmts/transport/websocket.py``'s ``WebSocket``). Sends
    return False when the client is gone (or stopped reading past the write deadline)."""

    @property
    def open(self) -> bool: ...

    def send(self, data: bytes) -> bool:
        """One text frame holding ``data`` (a JSON event)."""
        ...

    def send_raw(self, data: bytes) -> bool:
        """One text frame holding ``data`` as it is (not JSON)."""
        ...

    def close(self, code: int, reason: str) -> None:
        """A close frame with ``code`` and ``reason``; the connection ends once the client answers."""
        ...

    def abort(self) -> None:
        """Drop the TCP connection without a close frame."""
        ...


@dataclass(slots=True)
class EventBoundary:
    """What a WebSocket unit may act on: built once, when the plan's boundary event went out."""

    plan: StreamDelivery
    channel: EventChannel
    evidence: DeliveryEvidence
    # Waits ``seconds`` with the connection open; returns early with CLIENT_GONE or CANCELLED.
    hold: Callable[[float], WaitOutcome]
    # True once the turn was cancelled (a CANCELLED hold that is not this is the session superseding it).
    interrupted: Callable[[], bool]
    # The protocol's broken event (default ``MALFORMED_EVENT``).
    malformed_event: bytes

    def pause(self, seconds: float) -> bool:
        """Hold the connection ``seconds`` (the reader greenlet still answers pings): True once they
        elapsed, else False with the evidence saying why the turn ends here."""
        outcome = self.hold(seconds)
        if outcome is WaitOutcome.ELAPSED:
            return True
        evidence = self.evidence
        if outcome is WaitOutcome.CLIENT_GONE:
            evidence.transport_outcome = "client_gone"
            return False
        evidence.transport_outcome = "early_end"
        if evidence.ended_by is None and not self.interrupted():
            evidence.ended_by = "superseded"  # the session was reset, reconfigured or deleted
        return False


# A unit's function: True lets the turn's remaining events go out.
EventAct = Callable[[EventBoundary], bool]
_E = TypeVar("_E", bound=EventAct)


@dataclass(frozen=True, slots=True)
class OnWebSocket:
    """The WebSocket units' one shape: runs right after the ``after_content_frames``-th content event of a
    realtime turn went out (``llmts/transport/websocket_delivery.py``)."""

    kind: ClassVar[DeliveryKind] = DeliveryKind.IN_STREAM
    channel: ClassVar[Channel] = "websocket"
    act: EventAct


def on_websocket(mode: str) -> Callable[[_E], _E]:
    """Declares the decorated ``act(at: EventBoundary) -> bool`` the WebSocket unit of mode ``mode``."""

    def declare(act: _E) -> _E:
        declare_unit(act, mode, OnWebSocket(act))
        return act

    return declare
