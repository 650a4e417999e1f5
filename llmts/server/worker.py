"""llmts's gunicorn workers: gevent's pywsgi (default) and gunicorn's own ``gevent``, both with the
request-head/keep-alive deadlines and the graceful stop of server/connections.py.

The pywsgi worker runs server/handler.py's handler (lean request head and response path, malformed HTTP
answered in JSON) and, when gunicorn's access log is on with its default format and plain stream or file
handlers, server/access_log.py's batched access log instead of gunicorn's per-request logging record.
With ``--no-access-log`` the handler logs nothing at all.
"""

from __future__ import annotations

from typing import Any

from gunicorn.workers.ggevent import GeventPyWSGIWorker, GeventWorker

from llmts.server.connections import GracefulWorker, HeadDeadlineHandler
from llmts.server.handler import LlmtsPyWSGIHandler

__all__ = ["LlmtsGeventWorker", "LlmtsPyWSGIHandler", "LlmtsPyWSGIWorker"]


class _Handler(HeadDeadlineHandler, LlmtsPyWSGIHandler):
    pass


class _UnloggedHandler(_Handler):
    def log_request(self) -> None:
        return None


class LlmtsPyWSGIWorker(GracefulWorker, GeventPyWSGIWorker):  # type: ignore[misc]
    wsgi_handler = _Handler
    batched_access_log = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not self.cfg.accesslog:
            self.wsgi_handler = _UnloggedHandler


class LlmtsGeventWorker(GracefulWorker, GeventWorker):  # type: ignore[misc]
    pass
