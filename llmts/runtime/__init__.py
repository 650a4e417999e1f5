"""Provider-neutral runtime: sessions, scenario queues, token estimates. No sockets, no werkzeug."""

from __future__ import annotations

from llmts.runtime.clock import Clock, IdSource, RandomIds, SystemClock
from llmts.runtime.registry import DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_ID, SessionRegistry
from llmts.runtime.session import Admission, Session

__all__ = [
    "DEFAULT_MAX_SESSIONS",
    "DEFAULT_SESSION_ID",
    "Admission",
    "Clock",
    "IdSource",
    "RandomIds",
    "Session",
    "SessionRegistry",
    "SystemClock",
]
