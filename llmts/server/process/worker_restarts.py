"""When gunicorn replaces a dead worker: what the replacement knows and says (docs/deployment.md, "When a
worker dies"; docs/architecture.md, "One process per session owner").

Sessions live in the worker's memory. When the worker dies (SIGKILL, the OOM killer, a crash, gunicorn's
worker timeout) gunicorn's arbiter starts a new one with empty memory, which would answer the old
sessions' requests with a quiet 404. Instead:

- the arbiter of ``llmts serve`` (server/process/gunicorn_app.py) peeks at the dead worker's exit
  status before gunicorn reaps it (``peek_end``), logs one error line, appends a JSON line to
  ``--restart-file`` (what the ``--workers N`` supervisor watches) and leaves the ``WorkerEnd`` on the
  gunicorn application object, where the next forked worker finds it;
- a worker whose gunicorn generation (``age``) is above 1 is a replacement (``ReplacementAware``,
server/http/connections.py): it hands
  the app a ``WorkerRestart``, under ``llmts serve`` or any gunicorn arbiter;
- the app then answers through ``LostSessions`` (server/lost_sessions.py): every request naming a
  session this process does not know, or the ``default`` session until it is reset or configured, gets 500
  ``llm_test_server_worker_restarted`` naming the restart, and ``GET /ready`` answers 503 from then on.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass
from typing import Any

import orjson

from llmts.errors import WorkerRestarted

__all__ = ["WorkerEnd", "WorkerRestart", "describe_end", "peek_end"]

# This module runs in gunicorn's arbiter too, which imports no runtime until a worker died: the journal's
# time format is imported where a restart is described.

_WAITID_CODES = {getattr(os, name) for name in ("CLD_KILLED", "CLD_DUMPED") if hasattr(os, name)}


def describe_end(si_code: int, si_status: int) -> str:
    """How a child ended, from ``waitid``'s ``si_code`` and ``si_status``."""
    if si_code in _WAITID_CODES:
        try:
            name = signal.Signals(si_status).name
        except ValueError:
            name = f"signal {si_status}"
        dumped = " (core dumped)" if si_code == getattr(os, "CLD_DUMPED", None) else ""
        return f"was killed by {name}{dumped}"
    return f"exited with status {si_status}"


def peek_end(pid: int) -> str | None:
    """How the child ``pid`` ended, read without reaping it (``WNOWAIT``: gunicorn reaps it right after);
    None while it runs, or where the OS cannot say."""
    waitid = getattr(os, "waitid", None)
    if waitid is None:  # pragma: no cover - Linux has it; macOS since Python 3.13
        return None
    try:
        result = waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return None
    if result is None:
        return None
    return describe_end(result.si_code, result.si_status)


@dataclass(frozen=True, slots=True)
class WorkerEnd:
    """A worker that ended while its arbiter was not stopping (recorded by the arbiter)."""

    pid: int
    how: str | None  # "was killed by SIGKILL", "exited with status 1", None when unknown
    at: float  # epoch seconds, when the arbiter reaped it

    def report(self) -> str:
        """The arbiter's log line and the restart file's ``message`` (without the ``llmts:`` prefix)."""
        return (
            f"worker pid {self.pid} {self.how or 'ended'}; gunicorn restarts it with empty memory, so every "
            f"session it held is lost: requests naming one get 500 {WorkerRestarted.code} and GET /ready "
            "answers 503 from now on (docs/deployment.md)"
        )

    def event(self, server_pid: int) -> bytes:
        """One line of ``--restart-file``."""
        from llmts.runtime.journal import utc_iso

        return orjson.dumps(
            {
                "server_pid": server_pid,
                "previous_pid": self.pid,
                "previous_exit": self.how,
                "ended_at": utc_iso(self.at),
                "message": self.report(),
            }
        )


@dataclass(frozen=True, slots=True)
class WorkerRestart:
    """This process's worker replaced an earlier one (``generation`` is gunicorn's worker age, 2 or more)."""

    worker_pid: int
    generation: int
    at: float  # epoch seconds, when this worker started
    previous: WorkerEnd | None  # None under an arbiter that is not llmts's, or after a reload

    def message(self) -> str:
        from llmts.runtime.journal import utc_iso

        if self.previous is None:
            return (
                f"this server's worker process was restarted as pid {self.worker_pid} at {utc_iso(self.at)} "
                f"(gunicorn's worker number {self.generation} of this server) with empty memory, so every "
                "session held before then is lost"
            )
        previous = self.previous
        return (
            f"this server's worker process (pid {previous.pid}) {previous.how or 'ended'} at "
            f"{utc_iso(previous.at)} and gunicorn restarted it as pid {self.worker_pid} with empty memory, "
            "so every session held before then is lost"
        )

    def as_dict(self) -> dict[str, Any]:
        from llmts.runtime.journal import utc_iso

        previous = self.previous
        return {
            "worker_pid": self.worker_pid,
            "generation": self.generation,
            "restarted_at": utc_iso(self.at),
            "previous_pid": previous.pid if previous is not None else None,
            "previous_exit": previous.how if previous is not None else None,
            "previous_ended_at": utc_iso(previous.at) if previous is not None else None,
        }
