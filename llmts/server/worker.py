"""llmts's gunicorn workers: gevent's pywsgi (default) and gunicorn's own ``gevent``, both with the
request-head/keep-alive deadlines and the graceful stop of server/connections.py.

With ``--no-access-log`` the pywsgi handler also skips gunicorn's per-request access-log bookkeeping:
``PyWSGIHandler.log_request`` builds datetimes, a response record and the request header list for every
request before its logger discovers that access logging is off; that is pure overhead on the hot path
(a few microseconds of ~150).
"""

from __future__ import annotations

from typing import Any

from gunicorn.workers.ggevent import GeventPyWSGIWorker, GeventWorker, PyWSGIHandler

from llmts.server.connections import GracefulWorker, HeadDeadlineHandler

__all__ = ["LlmtsGeventWorker", "LlmtsPyWSGIWorker"]


class _Handler(HeadDeadlineHandler, PyWSGIHandler):  # type: ignore[misc]
    pass


class _UnloggedHandler(_Handler):
    def log_request(self) -> None:
        return None


class LlmtsPyWSGIWorker(GracefulWorker, GeventPyWSGIWorker):  # type: ignore[misc]
    wsgi_handler = _Handler

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not self.cfg.accesslog:
            self.wsgi_handler = _UnloggedHandler


class LlmtsGeventWorker(GracefulWorker, GeventWorker):  # type: ignore[misc]
    pass
