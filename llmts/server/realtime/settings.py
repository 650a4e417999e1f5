"""Per-connection bounds of the realtime WebSocket routes (docs/realtime.md#limits, docs/server.md).

Plain numbers, so the app can hold them without importing the WebSocket stack before the first upgrade.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RealtimeSettings"]


@dataclass(frozen=True, slots=True)
class RealtimeSettings:
    # A whole client message, after inflation; past it the connection is closed with 1009.
    max_message_bytes: int = 1_048_576
    # No frame at all from the client for this long: closed with 1001.
    idle_timeout: float | None = 300.0
    # A write the client does not read within this: the connection is reset.
    write_timeout: float | None = 30.0
    # Client messages per second (a token bucket as deep as the rate): past it, closed with 1008.
    max_messages_per_second: int = 200
