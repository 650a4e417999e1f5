"""Session lookup in a worker that replaced a dead one (docs/deployment.md, "When a worker dies"): the app,
the control API and the provider path ask ``LostSessions`` instead of the registry once the worker heard of
a restart (server/process/worker_restarts.py)."""

from __future__ import annotations

import orjson

from llmts.errors import SessionNotFound, WorkerRestarted
from llmts.runtime import DEFAULT_SESSION_ID, Session, SessionRegistry
from llmts.server.process.worker_restarts import WorkerRestart

__all__ = ["LostSessions"]


class LostSessions:
    """Session lookup in a replacement worker: unknown ids, and ``default`` until it is reset or
    configured, are ``WorkerRestarted`` instead of ``SessionNotFound``.

    An id the process does not know may be one that was never created (or was deleted since the
    restart); the worker cannot tell, so it says what it knows: the restart happened, sessions are lost.
    """

    def __init__(self, restart: WorkerRestart) -> None:
        self.restart = restart
        self._message = restart.message()
        # The default session exists in every process, so its lost state (configuration changes, queue
        # positions, journal) would otherwise pass unnoticed; a reset or configure starts it over.
        self.default_lost = True
        self.ready_body = orjson.dumps(
            {"status": "worker_restarted", "reason": self._message, "worker_restart": restart.as_dict()}
        )

    def get(self, registry: SessionRegistry, session_id: str, *, restores: bool = False) -> Session:
        """The session, or ``WorkerRestarted``; ``restores`` (reset, configure) accepts a lost default."""
        try:
            session = registry.get(session_id)
        except SessionNotFound:
            raise self.error(session_id) from None
        if session_id == DEFAULT_SESSION_ID and self.default_lost and not restores:
            raise self.error(session_id)
        return session

    def restored(self, session_id: str) -> None:
        """The default session was reset or configured: it answers normally from now on."""
        if session_id == DEFAULT_SESSION_ID:
            self.default_lost = False

    def error(self, session_id: str) -> WorkerRestarted:
        if session_id == DEFAULT_SESSION_ID:
            return WorkerRestarted(
                f"the default session's state (configuration, queue positions, journal) was lost: "
                f"{self._message}. POST /admin-api/reset (or /admin-api/configure) for the default "
                "session to start it over"
            )
        return WorkerRestarted(
            f"no session {session_id!r} on this server, which lost its sessions: {self._message}. "
            "Create a new session (docs/deployment.md)"
        )
