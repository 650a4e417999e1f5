"""Per-connection bounds of the realtime WebSocket routes (docs/server.md, "WebSocket limits";
docs/realtime.md, "Limits"): ``llmts serve --ws-*`` options, ``LLMTS_WS_*`` variables.

Plain numbers, so the CLI and the app can hold them without importing the WebSocket stack before the first
upgrade. A write's deadline is not here: it is the server's ``--write-timeout`` (``Timeouts.write``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

__all__ = ["REALTIME_ENV", "RealtimeSettings"]

# Field name -> environment variable (``llmts serve`` and ``create_app()`` both read them).
REALTIME_ENV = {
    "max_message_bytes": "LLMTS_WS_MAX_MESSAGE_BYTES",
    "idle_timeout": "LLMTS_WS_IDLE_TIMEOUT",
    "max_messages_per_second": "LLMTS_WS_MAX_MESSAGES_PER_SECOND",
}


@dataclass(frozen=True, slots=True)
class RealtimeSettings:
    """Every one is finite and positive (everything is bounded)."""

    # A whole client message, after inflation; past it the connection is closed with 1009.
    max_message_bytes: int = 1_048_576
    # No frame at all from the client for this many seconds: closed with 1001.
    idle_timeout: float = 300.0
    # Client messages and pings per second (a token bucket as deep as the rate): past it, closed with 1008.
    max_messages_per_second: int = 200

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            option = f"--ws-{field.name.replace('_', '-')} ({REALTIME_ENV[field.name]})"
            if field.type == "int":
                if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                    raise ValueError(f"{option} must be a positive whole number")
            elif not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise ValueError(f"{option} must be a positive number of seconds")

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> RealtimeSettings:
        """Defaults overridden by ``LLMTS_WS_*`` variables; raises ValueError naming a bad one."""
        values: dict[str, Any] = {}
        for field in fields(cls):
            variable = REALTIME_ENV[field.name]
            text = env.get(variable)
            if not text:
                continue
            try:
                values[field.name] = int(text) if field.type == "int" else float(text)
            except ValueError:
                kind = "a whole number" if field.type == "int" else "a number of seconds"
                raise ValueError(f"{variable} must be {kind}, not {text!r}") from None
        return cls(**values)
