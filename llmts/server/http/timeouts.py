"""Connection timeouts and the graceful-stop budget: one settings object for the CLI, the app and the worker.

Defaults and what each bounds are documented in docs/server.md ("Timeouts and shutdown"); the design is
in docs/architecture.md ("Hostile input, limits and timeouts").
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields

__all__ = ["DEFAULT_MAX_BODY_BYTES", "TIMEOUT_ENV", "Timeouts"]

# Largest request body accepted on any route (provider or control); bigger bodies get 413.
DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024

# Field name -> environment variable (``llmts serve`` and ``create_app()`` both read them).
TIMEOUT_ENV = {
    "request_head": "LLMTS_REQUEST_HEAD_TIMEOUT",
    "body": "LLMTS_BODY_TIMEOUT",
    "write": "LLMTS_WRITE_TIMEOUT",
    "keepalive": "LLMTS_KEEPALIVE_TIMEOUT",
    "graceful": "LLMTS_GRACEFUL_TIMEOUT",
}


@dataclass(frozen=True, slots=True)
class Timeouts:
    """Seconds; every one is finite and positive (everything is bounded)."""

    # A new connection must deliver its request line and headers within this.
    request_head: float = 10.0
    # A request body must arrive completely within this, once the app starts reading it.
    body: float = 30.0
    # One write to the client (one stream frame, or a whole body) must be accepted within this.
    write: float = 60.0
    # A kept-alive connection must deliver its next request head within this after its last response.
    keepalive: float = 30.0
    # SIGTERM: in-flight responses may finish within this; streams still running near it end cleanly.
    graceful: float = 5.0

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise ValueError(
                    f"the {field.name.replace('_', '-')} timeout must be a positive number of seconds"
                )

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Timeouts:
        """Defaults overridden by ``LLMTS_*_TIMEOUT`` variables; raises ValueError naming a bad one."""
        values: dict[str, float] = {}
        for name, variable in TIMEOUT_ENV.items():
            text = env.get(variable)
            if text:
                try:
                    values[name] = float(text)
                except ValueError:
                    raise ValueError(f"{variable} must be a number of seconds, not {text!r}") from None
        return cls(**values)
