"""The shapes of a delivery mode's unit (docs/architecture.md#stream-delivery-fault-modes).

A mode's unit is one function in its own module of this package; its registry row (``__init__.py``)
wraps that function in the shape that says when the transport calls it. The shape's ``kind`` must be the
mode's ``DeliveryKind`` in the schema's mode table (``llmts.schema.faults.MODES``); a test pins the two.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

from llmts.schema.faults import DeliveryKind, FrameKind, StreamDelivery
from llmts.transport.abort import ConnectionAborted
from llmts.transport.evidence import DeliveryEvidence
from llmts.transport.waiting import WaitOutcome, wait

__all__ = ["Boundary", "Drop", "InStream", "ModeUnit", "Paced", "Page", "Replace", "Wait", "never"]

Wait = Callable[[float, Any, Callable[[], bool]], WaitOutcome]


class Page(NamedTuple):
    """A whole answer sent instead of the provider's (``status`` is what the journal records)."""

    status: int
    status_line: str
    headers: list[tuple[str, str]]
    body: bytes


def never() -> bool:
    """The cancellation condition of a wait only the client can cut short."""
    return False


@dataclass(slots=True)
class Boundary:
    """What an in-stream unit may act on: built once, when the plan's boundary frame was handed over."""

    plan: StreamDelivery
    sock: Any
    evidence: DeliveryEvidence
    # The frame that would have been sent next (None when the boundary frame was the last one).
    next_frame: bytes | None
    # The protocol's broken frame (a provider may supply its own; default: a cut-off SSE JSON frame).
    malformed_frame: bytes
    wait: Wait = wait

    def hold(self, seconds: float) -> WaitOutcome:
        """Keep the connection open for ``seconds``; ends early when the client leaves."""
        return self.wait(seconds, self.sock, never)


@dataclass(frozen=True, slots=True)
class InStream:
    """Runs right after the ``after_content_frames``-th content frame was handed to the socket.

    ``act`` yields any extra bytes (recording them in ``Boundary.evidence`` after each yield returned)
    and returns True to let the writer send the remaining frames, or False after setting
    ``evidence.transport_outcome`` to end the body; it raises ``reset_connection(...)`` to abort.
    """

    kind: ClassVar[DeliveryKind] = DeliveryKind.IN_STREAM
    act: Callable[[Boundary], Generator[bytes, None, bool]]


@dataclass(frozen=True, slots=True)
class Paced:
    """Writes the whole stream itself (instead of the writer's frame loop), recording all evidence."""

    kind: ClassVar[DeliveryKind] = DeliveryKind.PACING
    deliver: Callable[
        [Sequence[bytes], Sequence[FrameKind], StreamDelivery, Any, DeliveryEvidence], Iterator[bytes]
    ]


@dataclass(frozen=True, slots=True)
class Drop:
    """Ends the connection before any response byte; returns the exception the server must raise."""

    kind: ClassVar[DeliveryKind] = DeliveryKind.CONNECTION
    drop: Callable[[Any], ConnectionAborted]


@dataclass(frozen=True, slots=True)
class Replace:
    """Answers instead of the provider, before any provider byte, with a whole (non-protocol) page."""

    kind: ClassVar[DeliveryKind] = DeliveryKind.CONNECTION
    page: Callable[[StreamDelivery], Page]


ModeUnit = InStream | Paced | Drop | Replace
