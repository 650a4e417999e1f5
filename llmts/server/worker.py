"""gunicorn's gevent_pywsgi worker, minus per-request access-log bookkeeping when no access log is kept.

gunicorn's ``PyWSGIHandler.log_request`` builds datetimes, a response record and the request header
list for every request before its logger discovers that access logging is off; with ``--no-access-log``
that is pure overhead on the hot path (a few microseconds of ~150).
"""

from __future__ import annotations

from typing import Any

from gunicorn.workers.ggevent import GeventPyWSGIWorker, PyWSGIHandler

__all__ = ["LlmtsPyWSGIWorker"]


class _UnloggedHandler(PyWSGIHandler):  # type: ignore[misc]
    def log_request(self) -> None:
        return None


class LlmtsPyWSGIWorker(GeventPyWSGIWorker):  # type: ignore[misc]
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not self.cfg.accesslog:
            self.wsgi_handler = _UnloggedHandler
