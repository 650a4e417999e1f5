"""The session registry: the only process-wide mutable state (with the memory budget it owns).

Lookups on the request path are a plain dict read (no lock); the registry lock guards create/delete only.
Every session charges what it retains to the registry's ``MemoryBudget`` (llmts.runtime.memory).
"""

from __future__ import annotations

import re
import secrets
import threading

from llmts.errors import InvalidRequest, SessionCapacityExceeded, SessionNotFound
from llmts.runtime.clock import Clock, IdSource, RandomIds, SystemClock
from llmts.runtime.memory import MemoryBudget
from llmts.runtime.session import Session

__all__ = ["DEFAULT_MAX_SESSIONS", "DEFAULT_SESSION_ID", "SESSION_ID_PATTERN", "SessionRegistry"]

DEFAULT_SESSION_ID = "default"
DEFAULT_MAX_SESSIONS = 4096
# Minted and client-chosen ids alike (``PUT /admin-api/sessions/{id}``): ``ses_`` + 32 lowercase hex.
SESSION_ID_PATTERN = re.compile(r"ses_[0-9a-f]{32}")


class SessionRegistry:
    def __init__(
        self,
        *,
        clock: Clock | None = None,
        ids: IdSource | None = None,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        max_memory_bytes: int | None = None,
    ) -> None:
        self._clock = clock or SystemClock()
        self._ids = ids or RandomIds()
        self._max_sessions = max_sessions
        # None: the default derived from the machine's memory (llmts.runtime.memory.default_max_memory).
        self.memory = MemoryBudget(max_memory_bytes)
        self._lock = threading.Lock()
        self._sessions: dict[str, Session] = {}
        self.default = self._new(DEFAULT_SESSION_ID)
        self._sessions[DEFAULT_SESSION_ID] = self.default

    @property
    def max_sessions(self) -> int:
        return self._max_sessions

    def _new(self, session_id: str) -> Session:
        return Session(session_id, clock=self._clock, ids=self._ids, budget=self.memory)

    def create(self) -> Session:
        with self._lock:
            self._check_capacity()
            session = self._new("ses_" + secrets.token_hex(16))
            self._sessions[session.id] = session
            return session

    def ensure(self, session_id: str) -> tuple[Session, bool]:
        """The session ``session_id`` (a client-chosen id), created if absent; whether it was created."""
        if not SESSION_ID_PATTERN.fullmatch(session_id):
            raise InvalidRequest(
                f"a session id is 'ses_' followed by 32 lowercase hex digits, not {session_id[:80]!r}",
                code="invalid_session_id",
            )
        with self._lock:
            session = self._sessions.get(session_id)
            if session is not None:
                return session, False
            self._check_capacity()
            session = self._sessions[session_id] = self._new(session_id)
            return session, True

    def _check_capacity(self) -> None:
        # The default session does not count against the limit.
        if len(self._sessions) - 1 >= self._max_sessions:
            raise SessionCapacityExceeded(
                f"the server already holds {self._max_sessions} sessions (its limit); delete some first"
            )

    def get(self, session_id: str) -> Session:
        session = self._sessions.get(session_id)
        if session is None:
            raise SessionNotFound(f"no session {session_id!r} on this server")
        return session

    def delete(self, session_id: str) -> None:
        if session_id == DEFAULT_SESSION_ID:
            raise InvalidRequest(
                "the default session cannot be deleted; reset or reconfigure it instead",
                code="default_session_not_deletable",
            )
        with self._lock:
            session = self._sessions.pop(session_id, None)
        if session is None:
            raise SessionNotFound(f"no session {session_id!r} on this server")
        session.retire()

    def list(self) -> list[Session]:
        return list(self._sessions.values())
