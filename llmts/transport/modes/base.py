"""The shapes of a delivery mode's unit, the decorators a unit declares itself with, and the check that
builds the registry (docs/architecture.md#stream-delivery-fault-modes).

A mode's unit is one function in its own module of this package, decorated with the shape that says when
the transport calls it and the mode's name: ``@in_stream("stall")``, ``@paced("slow_drip")``,
``@drops_connection("empty_response")`` or ``@replaces_answer("http_error_page")``. The decorator marks
the function (as pluggy marks hook implementations) and returns it unchanged, so the unit stays a plain
function to call and test. ``load_units`` imports every module of the package and builds the registry
from the marks, refusing (at import) a module without exactly one unit, a name the schema's mode table
(``llmts.schema.faults.MODES``) does not have, a table row without a unit, and a shape whose ``kind`` is
not the row's ``DeliveryKind``. Each shape says the channel it serves: the four here serve HTTP answers;
the WebSocket units' shape (``OnWebSocket``, ``@on_websocket``) is in ``llmts/transport/websocket_modes/``,
whose registry the same ``registry_of`` builds and checks against the table's websocket rows.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import FunctionType, MappingProxyType, ModuleType
from typing import Any, ClassVar, NamedTuple, Protocol, TypeVar

from llmts.schema.faults import MODES, Channel, DeliveryKind, FrameKind, ModeSpec, StreamDelivery
from llmts.transport.abort import ConnectionAborted
from llmts.transport.evidence import DeliveryEvidence
from llmts.transport.waiting import WaitOutcome, wait

__all__ = [
    "Boundary",
    "Drop",
    "InStream",
    "ModeUnit",
    "Paced",
    "Page",
    "Replace",
    "Unit",
    "Wait",
    "channel_table",
    "declare_unit",
    "drops_connection",
    "in_stream",
    "load_units",
    "never",
    "paced",
    "registry_of",
    "replaces_answer",
]

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


# The signature of each shape's function.
Act = Callable[[Boundary], Generator[bytes, None, bool]]
Deliver = Callable[
    [Sequence[bytes], Sequence[FrameKind], StreamDelivery, Any, DeliveryEvidence], Iterator[bytes]
]
DropFunction = Callable[[Any], ConnectionAborted]
PageFunction = Callable[[StreamDelivery], Page]


class Unit(Protocol):
    """What the registry check reads of any shape (the four below, and ``OnWebSocket``)."""

    kind: ClassVar[DeliveryKind]
    channel: ClassVar[Channel]


@dataclass(frozen=True, slots=True)
class InStream:
    """Runs right after the ``after_content_frames``-th content frame was handed to the socket.

    ``act`` yields any extra bytes (recording them in ``Boundary.evidence`` after each yield returned)
    and returns True to let the writer send the remaining frames, or False after setting
    ``evidence.transport_outcome`` to end the body; it raises ``reset_connection(...)`` to abort.
    """

    kind: ClassVar[DeliveryKind] = DeliveryKind.IN_STREAM
    channel: ClassVar[Channel] = "http"
    act: Act


@dataclass(frozen=True, slots=True)
class Paced:
    """Writes the whole stream itself (instead of the writer's frame loop), recording all evidence."""

    kind: ClassVar[DeliveryKind] = DeliveryKind.PACING
    channel: ClassVar[Channel] = "http"
    deliver: Deliver


@dataclass(frozen=True, slots=True)
class Drop:
    """Ends the connection before any response byte; returns the exception the server must raise."""

    kind: ClassVar[DeliveryKind] = DeliveryKind.CONNECTION
    channel: ClassVar[Channel] = "http"
    drop: DropFunction


@dataclass(frozen=True, slots=True)
class Replace:
    """Answers instead of the provider, before any provider byte, with a whole (non-protocol) page."""

    kind: ClassVar[DeliveryKind] = DeliveryKind.CONNECTION
    channel: ClassVar[Channel] = "http"
    page: PageFunction


ModeUnit = InStream | Paced | Drop | Replace

# Where each channel's units live and the decorators they declare themselves with (for import errors).
_HOMES: dict[Channel, tuple[str, str]] = {
    "http": ("llmts/transport/modes/", "@in_stream, @paced, @drops_connection or @replaces_answer"),
    "websocket": ("llmts/transport/websocket_modes/", "@on_websocket"),
}


# The attribute a declaring decorator sets on the unit's function: ``(mode name, unit)``.
_DECLARED = "__llmts_mode_unit__"

_A = TypeVar("_A", bound=Act)
_D = TypeVar("_D", bound=Deliver)
_X = TypeVar("_X", bound=DropFunction)
_P = TypeVar("_P", bound=PageFunction)


def declare_unit(function: Any, mode: str, unit: Unit) -> None:
    """Marks ``function`` as the declaration of ``unit``, the unit of mode ``mode`` (what each shape's
    decorator does)."""
    setattr(function, _DECLARED, (mode, unit))


def in_stream(mode: str) -> Callable[[_A], _A]:
    """Declares the decorated ``act(at)`` the unit of in-stream mode ``mode``."""

    def declare(act: _A) -> _A:
        declare_unit(act, mode, InStream(act))
        return act

    return declare


def paced(mode: str) -> Callable[[_D], _D]:
    """Declares the decorated ``deliver(frames, kinds, plan, sock, evidence)`` the unit of pacing mode
    ``mode``."""

    def declare(deliver: _D) -> _D:
        declare_unit(deliver, mode, Paced(deliver))
        return deliver

    return declare


def drops_connection(mode: str) -> Callable[[_X], _X]:
    """Declares the decorated ``drop(sock)`` the unit of connection mode ``mode``."""

    def declare(drop: _X) -> _X:
        declare_unit(drop, mode, Drop(drop))
        return drop

    return declare


def replaces_answer(mode: str) -> Callable[[_P], _P]:
    """Declares the decorated ``page(plan)`` the unit of connection mode ``mode``."""

    def declare(page: _P) -> _P:
        declare_unit(page, mode, Replace(page))
        return page

    return declare


def _declared_in(module: ModuleType) -> list[tuple[str, Unit]]:
    """The units the module's own functions declare (a unit imported from elsewhere is not its own)."""
    return [
        value.__dict__[_DECLARED]
        for value in vars(module).values()
        if isinstance(value, FunctionType)
        and _DECLARED in value.__dict__
        and value.__module__ == module.__name__
    ]


def channel_table(channel: Channel) -> Mapping[str, ModeSpec]:
    """The rows of the mode table (``llmts.schema.faults.MODES``) that act on ``channel``, in table order."""
    return MappingProxyType({name: spec for name, spec in MODES.items() if channel in spec.channels})


def registry_of(
    modules: Iterable[ModuleType], table: Mapping[str, ModeSpec], channel: Channel = "http"
) -> Mapping[str, Unit]:
    """Mode name -> unit, in ``table`` order, from the units ``modules`` declare for ``channel``; raises
    ``RuntimeError`` naming the module or mode when they and the table disagree."""
    home, decorators = _HOMES[channel]
    units: dict[str, Unit] = {}
    for module in modules:
        declared = _declared_in(module)
        if len(declared) != 1:
            raise RuntimeError(
                f"{module.__name__} declares {len(declared)} mode units: a module of {home} is one mode's "
                f"unit, one function decorated with {decorators} (docs/contributing.md)"
            )
        ((mode, unit),) = declared
        if unit.channel != channel:
            raise RuntimeError(
                f"{module.__name__} declares mode {mode!r} for the {unit.channel} channel, but {home} holds "
                f"the {channel} channel's units ({decorators})"
            )
        spec = table.get(mode)
        if spec is None:
            row, lacks = MODES.get(mode), "does not have"
            if row is not None and channel not in row.channels:
                lacks = f"gives no {channel} channel"
            raise RuntimeError(
                f"{module.__name__} declares a unit of mode {mode!r}, which the mode table "
                f"(llmts.schema.faults.MODES) {lacks}"
            )
        if mode in units:
            raise RuntimeError(f"{module.__name__} declares a second unit of mode {mode!r}")
        if unit.kind is not spec.kind:
            raise RuntimeError(
                f"{module.__name__} declares {mode!r} as a {unit.kind.value} unit, but the mode table says "
                f"{spec.kind.value}"
            )
        units[mode] = unit
    missing = [mode for mode in table if mode not in units]
    if missing:
        raise RuntimeError(
            f"no unit in {home} declares the mode(s) {', '.join(missing)} of the mode table "
            "(llmts.schema.faults.MODES)"
        )
    return MappingProxyType({mode: units[mode] for mode in table})


def load_units(
    package: str, path: Iterable[str], table: Mapping[str, ModeSpec], channel: Channel = "http"
) -> Mapping[str, Unit]:
    """Imports every module of ``package`` (at ``path``) but its ``base`` and builds the registry of
    ``channel`` from them."""
    modules = [
        importlib.import_module(f"{package}.{info.name}")
        for info in pkgutil.iter_modules(path)
        if info.name != __name__.rpartition(".")[2]
    ]
    return registry_of(modules, table, channel)
