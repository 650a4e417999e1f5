"""llmts's gunicorn workers, all gevent, all with the request-head/keep-alive deadlines and the graceful stop
of server/http/connections.py:

- ``LlmtsWorker`` (``--worker-class llmts``, the default): llmts's own HTTP/1.1 connection loop on llhttp
  (server/http/), answering malformed HTTP in JSON, with server/http/access_log.py's batched access log when
  gunicorn's access log is on with its default format and plain stream or file handlers.
- ``LlmtsPyWSGIWorker`` (``gevent_pywsgi``): the previous default, gevent's pywsgi with
server/http/pywsgi_handler.py's
  handler, kept selectable for a while (docs/server.md); it is imported only when named, because that
  handler overrides private methods of gevent's (pyproject.toml bounds gevent for it).
- ``LlmtsGeventWorker`` (``gevent``): gunicorn's own parser.

With ``--no-access-log`` the llmts workers log no requests at all. A worker gunicorn started to replace
one that died tells the app so (server/process/worker_restarts.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gunicorn.http.wsgi import base_environ
from gunicorn.workers.ggevent import VERSION, GeventWorker

from llmts.server.http.access_log import AccessLog
from llmts.server.http.connections import ConnectionTracker, GracefulWorker, ReplacementAware

if TYPE_CHECKING:
    from llmts.server.http.pywsgi_handler import LlmtsPyWSGIHandler, LlmtsPyWSGIWorker

__all__ = ["LlmtsGeventWorker", "LlmtsPyWSGIHandler", "LlmtsPyWSGIWorker", "LlmtsWorker", "ReplacementAware"]

# Imported from server/http/pywsgi_handler.py on first use (``__getattr__``): gevent's pywsgi and its private
# methods.
_LEGACY = ("LlmtsPyWSGIHandler", "LlmtsPyWSGIWorker")


class LlmtsWorker(ReplacementAware, GracefulWorker, GeventWorker):  # type: ignore[misc]
    """gunicorn's gevent worker serving each connection with llmts's HTTP/1.1 loop (server/http/)."""

    batched_access_log = True

    def llmts_connection_handler(
        self, listener: Any, tracker: ConnectionTracker, access: AccessLog | None
    ) -> Callable[[Any, Any], None]:
        from llmts.server.http.connection import Http1Server

        environ = base_environ(self.cfg)
        environ.update(
            {
                "wsgi.multithread": True,
                "wsgi.url_scheme": "https" if self.cfg.is_ssl else "http",
                "SERVER_SOFTWARE": VERSION,
                "SCRIPT_NAME": "",
            }
        )
        address = listener.getsockname()
        if isinstance(address, tuple):
            environ["SERVER_NAME"] = str(address[0])
            environ["SERVER_PORT"] = str(address[1])
        else:  # a unix socket
            environ["SERVER_NAME"] = str(address)
            environ["SERVER_PORT"] = ""
        server = Http1Server(
            self.wsgi, environ, tracker, access, self.log, gunicorn_access=bool(self.cfg.accesslog)
        )
        return server.handle


class LlmtsGeventWorker(ReplacementAware, GracefulWorker, GeventWorker):  # type: ignore[misc]
    pass


def __getattr__(name: str) -> Any:
    if name in _LEGACY:
        from llmts.server.http import pywsgi_handler as handler

        return getattr(handler, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
