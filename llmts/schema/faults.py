"""Stream delivery plans (a response's ``stream_delivery``) and the delivery evidence the transport records.

Theory of operation: ``MODES`` is the one declaration of the modes a plan may name (what each does to the
client: docs/stream-delivery.md#modes). Each row says when the mode acts (``DeliveryKind``), which
parameters it needs and the values it accepts (every other parameter is refused), and whether it is
harmless (the client still gets the whole answer). ``DeliveryMode`` (the names validation accepts, in
table order), ``StreamDelivery`` validation and ``CONNECTION_MODES``/``IN_STREAM_MODES``/``PACING_MODES``/
``HARMLESS_MODES`` (used by the compatibility checks and the journal's success flag) all derive from it.
What a mode does on the socket is its unit in ``llmts/transport/modes/`` (HTTP) or
``llmts/transport/websocket_modes/`` (WebSocket), which declares itself by the same name; the transport
refuses to import unless each package's units and this table's rows for its channel name the same modes
(docs/architecture.md#stream-delivery-fault-modes).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, model_serializer, model_validator

from llmts.schema.model_base import STRICT

__all__ = [
    "CONNECTION_MODES",
    "HARMLESS_MODES",
    "IN_STREAM_MODES",
    "MODES",
    "PACING_MODES",
    "SSE_MODES",
    "WEBSOCKET_MODES",
    "DeliveryKind",
    "DeliveryMode",
    "FrameKind",
    "ModeSpec",
    "Needs",
    "StreamDelivery",
    "TransportOutcome",
]

TransportOutcome = Literal["completed", "early_end", "aborted", "client_gone"]
# Parameters a mode may need; each is refused by every mode that does not need it.
Parameter = Literal["delay_ms", "cut_bytes", "bytes_per_second", "status", "code"]
# Where a mode can act: an HTTP answer (a body or an SSE stream) or a realtime turn on a WebSocket.
Channel = Literal["http", "websocket"]
_HTTP: frozenset[Channel] = frozenset({"http"})
_BOTH: frozenset[Channel] = frozenset({"http", "websocket"})
_WS: frozenset[Channel] = frozenset({"websocket"})
# Close codes a scripted close may send (RFC 6455 7.4: 1004-1006 and 1015 never go on the wire).
_CLOSE_CODES = frozenset(
    {1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014}
) | frozenset(range(3000, 5000))
# A close reason travels in a control frame: at most 123 bytes of UTF-8.
_MAX_REASON_BYTES = 123

_MAX_DELAY_MS = 60_000
_MAX_STALL_MS = 300_000


class DeliveryKind(enum.Enum):
    """When a mode acts, which decides what it fits and which parameters it takes."""

    IN_STREAM = "in_stream"  # after ``after_content_frames`` content frames; streamed plain text only
    PACING = "pacing"  # over the whole stream; streamed plain text only; no ``after_content_frames``
    CONNECTION = "connection"  # before any response byte; fits every successful response


@dataclass(frozen=True, slots=True)
class Needs:
    """A parameter a mode requires, the values it accepts with that mode, and the error otherwise."""

    parameter: Parameter
    accepts: range | frozenset[int]
    message: str


@dataclass(frozen=True, slots=True)
class ModeSpec:
    """One row of the mode table: what validation, compatibility checks and evidence know of a mode."""

    kind: DeliveryKind
    # The client still gets the whole, valid answer (the plan only changes timing): a response that
    # applied it can still be a success in the journal.
    harmless: bool
    needs: tuple[Needs, ...] = ()
    # The channels it acts on (docs/stream-delivery.md#modes, docs/realtime.md#faults).
    channels: frozenset[Channel] = _HTTP

    @property
    def in_stream(self) -> bool:
        return self.kind is DeliveryKind.IN_STREAM


def _only_with(parameter: Parameter, mode: str) -> str:
    return f"{parameter} is required by {mode} and allowed with no other mode"


_IN, _PACE, _CONN = DeliveryKind.IN_STREAM, DeliveryKind.PACING, DeliveryKind.CONNECTION

# The mode table (docs/stream-delivery.md#modes). A new mode is one row here and one unit per channel it
# acts on, in llmts/transport/modes/ or llmts/transport/websocket_modes/, that declares itself by the same
# name (docs/contributing.md).
MODES: Mapping[str, ModeSpec] = MappingProxyType(
    {
        "early_clean_end": ModeSpec(_IN, harmless=False, channels=_BOTH),
        "delay_then_continue": ModeSpec(
            _IN,
            harmless=True,
            needs=(
                Needs(
                    "delay_ms",
                    range(1, _MAX_DELAY_MS + 1),
                    f"delay_then_continue needs delay_ms between 1 and {_MAX_DELAY_MS}",
                ),
            ),
            channels=_BOTH,
        ),
        "abort_connection": ModeSpec(_IN, harmless=False, channels=_BOTH),
        "truncate_bytes": ModeSpec(
            _IN,
            harmless=False,
            needs=(Needs("cut_bytes", range(1, 65_537), _only_with("cut_bytes", "truncate_bytes")),),
        ),
        "malformed_frame": ModeSpec(_IN, harmless=False),
        "stall": ModeSpec(
            _IN,
            harmless=False,
            needs=(
                Needs(
                    "delay_ms",
                    range(1, _MAX_STALL_MS + 1),
                    f"stall needs delay_ms (how long to hold the connection) 1..{_MAX_STALL_MS}",
                ),
            ),
            channels=_BOTH,
        ),
        "slow_drip": ModeSpec(
            _PACE,
            harmless=True,
            needs=(
                Needs(
                    "bytes_per_second",
                    range(1, 10_000_001),
                    _only_with("bytes_per_second", "slow_drip"),
                ),
            ),
        ),
        "reset_before_headers": ModeSpec(_CONN, harmless=False),
        "empty_response": ModeSpec(_CONN, harmless=False),
        "http_error_page": ModeSpec(
            _CONN,
            harmless=False,
            needs=(
                Needs("status", frozenset({502, 503, 504}), "http_error_page needs status 502, 503 or 504"),
            ),
        ),
        # WebSocket only: a close frame with ``code`` and ``reason`` after N content events, and an event
        # that is not JSON.
        "close": ModeSpec(
            _IN,
            harmless=False,
            needs=(
                Needs(
                    "code",
                    _CLOSE_CODES,
                    "close needs code 1000-1003, 1007-1014 or 3000-4999 "
                    "(1004-1006 and 1015 never go on the wire)",
                ),
            ),
            channels=_WS,
        ),
        "malformed_event": ModeSpec(_IN, harmless=False, channels=_WS),
    }
)


# The names a plan accepts, in the order validation errors (and the JSON schema's enum) list them. Built
# from the table, so to a type checker it is a ``str``; pydantic validates the ``Literal``.
if TYPE_CHECKING:
    DeliveryMode = str
else:
    DeliveryMode = Literal[tuple(MODES)]


def _modes_needing(parameter: Parameter) -> str:
    return ", ".join(
        name for name, spec in MODES.items() if any(n.parameter == parameter for n in spec.needs)
    )


# What a parameter given to a mode that does not need it is told, in the order validation checks them.
_REFUSED: Mapping[Parameter, str] = MappingProxyType(
    {
        "delay_ms": "{mode} takes no delay_ms",
        "cut_bytes": _only_with("cut_bytes", _modes_needing("cut_bytes")),
        "bytes_per_second": _only_with("bytes_per_second", _modes_needing("bytes_per_second")),
        "status": f"status is only allowed with {_modes_needing('status')}",
        "code": _only_with("code", _modes_needing("code")),
    }
)
_NEEDS: Mapping[str, Mapping[Parameter, Needs]] = MappingProxyType(
    {name: MappingProxyType({n.parameter: n for n in spec.needs}) for name, spec in MODES.items()}
)

IN_STREAM_MODES = frozenset(name for name, spec in MODES.items() if spec.kind is _IN)
PACING_MODES = frozenset(name for name, spec in MODES.items() if spec.kind is _PACE)
CONNECTION_MODES = frozenset(name for name, spec in MODES.items() if spec.kind is _CONN)
HARMLESS_MODES = frozenset(name for name, spec in MODES.items() if spec.harmless)
SSE_MODES = frozenset(name for name, spec in MODES.items() if "http" in spec.channels)
WEBSOCKET_MODES = frozenset(name for name, spec in MODES.items() if "websocket" in spec.channels)


class StreamDelivery(BaseModel):
    model_config = STRICT

    mode: DeliveryMode
    after_content_frames: int = Field(default=1, ge=1, le=128)
    delay_ms: int = Field(default=0, ge=0, le=_MAX_STALL_MS)
    cut_bytes: int | None = Field(default=None, ge=1, le=65_536)
    bytes_per_second: int | None = Field(default=None, ge=1, le=10_000_000)
    status: int | None = None
    # ``close`` only: the close frame's code and reason.
    code: int | None = None
    reason: str | None = None

    @model_validator(mode="after")
    def _mode_parameters(self) -> StreamDelivery:
        if self.reason is not None:
            if self.mode != "close":
                raise ValueError("reason is only allowed with close")
            if len(self.reason.encode()) > _MAX_REASON_BYTES:
                raise ValueError(f"a close reason is at most {_MAX_REASON_BYTES} bytes of UTF-8")
        mode = self.mode
        needs = _NEEDS[mode]
        for parameter, refused in _REFUSED.items():
            value = getattr(self, parameter)
            need = needs.get(parameter)
            if need is not None:
                if value is None or value not in need.accepts:
                    raise ValueError(need.message)
            elif value != type(self).model_fields[parameter].default:
                raise ValueError(refused.format(mode=mode))
        if not MODES[mode].in_stream and "after_content_frames" in self.model_fields_set:
            raise ValueError(f"{mode} does not take after_content_frames")
        return self

    @property
    def in_stream(self) -> bool:
        return self.mode in IN_STREAM_MODES

    @property
    def harmless(self) -> bool:
        return self.mode in HARMLESS_MODES

    @model_serializer(mode="wrap")
    def _compact(self, handler: Any) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if self.mode not in IN_STREAM_MODES:
            data.pop("after_content_frames", None)
        if not data.get("delay_ms"):
            data.pop("delay_ms", None)
        return {key: value for key, value in data.items() if value is not None}


class FrameKind(enum.IntEnum):
    """What a stream frame is to delivery plans and evidence."""

    OTHER = 0  # start/progress frames: do not advance the delivery boundary
    CONTENT = 1  # a counted non-empty text frame
    TERMINAL = 2  # the protocol's terminal marker ([DONE], response.completed, message_stop, final STOP)
