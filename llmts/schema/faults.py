"""Stream delivery plans (a response's ``stream_delivery``) and the delivery evidence the transport records.

In-stream modes act after ``after_content_frames`` counted text frames were handed to the socket:

* ``early_clean_end`` — end the body cleanly; the rest and the protocol's terminal sequence are omitted.
* ``delay_then_continue`` — pause ``delay_ms`` once, then send the rest (unless the client left).
* ``abort_connection`` — reset the TCP connection (RST); nothing more is sent.
* ``truncate_bytes`` — send only ``cut_bytes`` bytes of the next frame, then end the body cleanly.
* ``malformed_frame`` — insert one syntactically broken frame, then continue normally.
* ``stall`` — stop sending and hold the connection until the client leaves or ``delay_ms`` passes,
  then end the body cleanly without the terminal sequence.
* ``slow_drip`` — deliver the whole stream, paced at ``bytes_per_second`` (``after_content_frames``
  does not apply).

Connection modes act before any byte of the response (status line included) is sent:

* ``reset_before_headers`` — reset the connection.
* ``empty_response`` — close the connection without a status line.
* ``http_error_page`` — answer ``status`` (502/503/504) with a proxy-style HTML page.
"""

from __future__ import annotations

import enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_serializer, model_validator

__all__ = [
    "CONNECTION_MODES",
    "IN_STREAM_MODES",
    "DeliveryMode",
    "FrameKind",
    "StreamDelivery",
    "TransportOutcome",
]

DeliveryMode = Literal[
    "early_clean_end",
    "delay_then_continue",
    "abort_connection",
    "truncate_bytes",
    "malformed_frame",
    "stall",
    "slow_drip",
    "reset_before_headers",
    "empty_response",
    "http_error_page",
]
IN_STREAM_MODES = frozenset(
    {
        "early_clean_end",
        "delay_then_continue",
        "abort_connection",
        "truncate_bytes",
        "malformed_frame",
        "stall",
    }
)
CONNECTION_MODES = frozenset({"reset_before_headers", "empty_response", "http_error_page"})
TransportOutcome = Literal["completed", "early_end", "aborted", "client_gone"]

_MAX_DELAY_MS = 60_000
_MAX_STALL_MS = 300_000


class StreamDelivery(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: DeliveryMode
    after_content_frames: int = Field(default=1, ge=1, le=128)
    delay_ms: int = Field(default=0, ge=0, le=_MAX_STALL_MS)
    cut_bytes: int | None = Field(default=None, ge=1, le=65_536)
    bytes_per_second: int | None = Field(default=None, ge=1, le=10_000_000)
    status: int | None = None

    @model_validator(mode="after")
    def _mode_parameters(self) -> StreamDelivery:
        mode = self.mode
        if mode == "delay_then_continue":
            if not 1 <= self.delay_ms <= _MAX_DELAY_MS:
                raise ValueError(f"delay_then_continue needs delay_ms between 1 and {_MAX_DELAY_MS}")
        elif mode == "stall":
            if not 1 <= self.delay_ms <= _MAX_STALL_MS:
                raise ValueError(f"stall needs delay_ms (how long to hold the connection) 1..{_MAX_STALL_MS}")
        elif self.delay_ms:
            raise ValueError(f"{mode} takes no delay_ms")
        if (self.cut_bytes is not None) != (mode == "truncate_bytes"):
            raise ValueError("cut_bytes is required by truncate_bytes and allowed with no other mode")
        if (self.bytes_per_second is not None) != (mode == "slow_drip"):
            raise ValueError("bytes_per_second is required by slow_drip and allowed with no other mode")
        if mode == "http_error_page":
            if self.status not in (502, 503, 504):
                raise ValueError("http_error_page needs status 502, 503 or 504")
        elif self.status is not None:
            raise ValueError("status is only allowed with http_error_page")
        if (
            mode in CONNECTION_MODES or mode == "slow_drip"
        ) and "after_content_frames" in self.model_fields_set:
            raise ValueError(f"{mode} does not take after_content_frames")
        return self

    @property
    def in_stream(self) -> bool:
        return self.mode in IN_STREAM_MODES

    @model_serializer(mode="wrap")
    def _compact(self, handler: Any) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if self.mode in CONNECTION_MODES or self.mode == "slow_drip":
            data.pop("after_content_frames", None)
        if not data.get("delay_ms"):
            data.pop("delay_ms", None)
        return {key: value for key, value in data.items() if value is not None}


class FrameKind(enum.IntEnum):
    """What a stream frame is to delivery plans and evidence."""

    OTHER = 0  # start/progress frames: do not advance the delivery boundary
    CONTENT = 1  # a counted non-empty text frame
    TERMINAL = 2  # the protocol's terminal marker ([DONE], response.completed, message_stop, final STOP)
