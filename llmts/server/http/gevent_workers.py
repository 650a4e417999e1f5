"""The gevent workers as the forked child runs them (server/worker.py names them to gunicorn): gunicorn's
gevent worker with the request-head/keep-alive deadlines and the graceful stop of
server/http/connections.py, and a replacement's word to the app (server/process/worker_restarts.py).

- ``GeventLoopWorker`` (``--worker-class llmts``, the default): llmts's own HTTP/1.1 connection loop on
  llhttp (server/http/connection.py), answering malformed HTTP in JSON, with server/http/access_log.py's
  batched access log when gunicorn's access log is on with its default format and plain stream or file
  handlers.
- ``GeventGunicornWorker`` (``gevent``): gunicorn's own parser.

With ``--no-access-log`` they log no requests at all. This module imports gevent: only the worker
process loads it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gunicorn.http.wsgi import base_environ
from gunicorn.workers.ggevent import VERSION, GeventWorker

from llmts.server.http.access_log import AccessLog
from llmts.server.http.connections import ConnectionTracker, GracefulWorker, ReplacementAware
from llmts.server.process.boot import WorkerBoot

__all__ = ["GeventGunicornWorker", "GeventLoopWorker"]


class GeventLoopWorker(WorkerBoot, ReplacementAware, GracefulWorker, GeventWorker):  # type: ignore[misc]
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


class GeventGunicornWorker(WorkerBoot, ReplacementAware, GracefulWorker, GeventWorker):  # type: ignore[misc]
    """gunicorn's gevent worker with its own HTTP parser, plus llmts's deadlines and graceful stop."""
