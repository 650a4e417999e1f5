"""llmts's gunicorn workers: gevent's pywsgi (default) and gunicorn's own ``gevent``, both with the
request-head/keep-alive deadlines and the graceful stop of server/connections.py.

The pywsgi worker runs server/handler.py's handler (lean request head and response path, malformed HTTP
answered in JSON) and, when gunicorn's access log is on with its default format and plain stream or file
handlers, server/access_log.py's batched access log instead of gunicorn's per-request logging record.
With ``--no-access-log`` the handler logs nothing at all.

A worker gunicorn started to replace one that died tells the app so (server/worker_restarts.py).
"""

from __future__ import annotations

import time
from typing import Any

from gunicorn.workers.ggevent import GeventPyWSGIWorker, GeventWorker

from llmts.server.connections import GracefulWorker, HeadDeadlineHandler
from llmts.server.handler import LlmtsPyWSGIHandler
from llmts.server.worker_restarts import WorkerRestart

__all__ = ["LlmtsGeventWorker", "LlmtsPyWSGIHandler", "LlmtsPyWSGIWorker"]


class _Handler(HeadDeadlineHandler, LlmtsPyWSGIHandler):
    pass


class _UnloggedHandler(_Handler):
    def log_request(self) -> None:
        return None


class _ReplacementAware:
    """Mixin for gunicorn workers: gunicorn numbers the workers it starts (``age``), so a worker above 1
    replaced an earlier one of the same arbiter, whose sessions died with it. The app hears of it before
    it serves; under ``llmts serve`` the arbiter also left how the old worker ended on the application."""

    age: int
    pid: int
    app: Any
    wsgi: Any

    def load_wsgi(self) -> None:
        super().load_wsgi()  # type: ignore[misc]
        note = getattr(self.wsgi, "worker_restarted", None)
        if self.age > 1 and callable(note):
            previous = getattr(self.app, "llmts_last_worker_end", None)
            note(WorkerRestart(self.pid, self.age, time.time(), previous))


class LlmtsPyWSGIWorker(_ReplacementAware, GracefulWorker, GeventPyWSGIWorker):  # type: ignore[misc]
    wsgi_handler = _Handler
    batched_access_log = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not self.cfg.accesslog:
            self.wsgi_handler = _UnloggedHandler


class LlmtsGeventWorker(_ReplacementAware, GracefulWorker, GeventWorker):  # type: ignore[misc]
    pass
