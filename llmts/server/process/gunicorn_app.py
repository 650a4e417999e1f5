"""Run the WSGI app on gunicorn with exactly one gevent worker, embedded through ``BaseApplication``, under
an arbiter that reports a worker dying (server/process/worker_restarts.py)."""

from __future__ import annotations

import gc
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from llmts.server.process.deferred_ssl import ssl_deferred

# An arbiter of the ``llmts`` and ``gevent`` worker classes without TLS never loads OpenSSL
# (server/process/deferred_ssl.py): gunicorn's modules, the worker classes' base included
# (server/worker.py), are imported under a stand-in ``ssl``.
with ssl_deferred():
    import gunicorn.workers.base_async  # noqa: F401
    from gunicorn.app.base import BaseApplication
    from gunicorn.arbiter import Arbiter

from llmts.server.http.timeouts import Timeouts
from llmts.server.process.worker_restarts import WorkerEnd, peek_end

if TYPE_CHECKING:
    from llmts.server.process.tls import TlsFiles

__all__ = ["DEFAULT_WORKER_CLASS", "LOG_FORMATS", "WORKER_CLASSES", "GunicornServer"]

# All are gunicorn's gevent workers (server/worker.py). ``llmts`` (llmts's own HTTP/1.1 loop on llhttp) is
# the default: the least CPU per request (docs/architecture.md, "The server's hot path");
# ``gevent_pywsgi`` (gevent's pywsgi, the previous default) stays selectable for a while; ``gevent`` uses
# gunicorn's own parser.
# --worker-class -> gunicorn worker class.
_WORKER_PATHS = {
    "llmts": "llmts.server.worker.LlmtsWorker",
    "gevent_pywsgi": "llmts.server.worker.LlmtsPyWSGIWorker",
    "gevent": "llmts.server.worker.LlmtsGeventWorker",
}
WORKER_CLASSES = tuple(_WORKER_PATHS)
DEFAULT_WORKER_CLASS = "llmts"
# --log-format -> gunicorn logger class (both escape client text; server/http/log_text.py).
_LOGGER_PATHS = {
    "text": "llmts.server.http.log_text.EscapingLogger",
    "json": "llmts.server.http.log_text.JsonLogger",
}
LOG_FORMATS = tuple(_LOGGER_PATHS)


def _watch_parent(pid: int) -> None:
    """Stop the server when the process that started it is gone (a killed test run leaves no server)."""
    while True:
        time.sleep(1.0)
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            os.kill(os.getpid(), signal.SIGTERM)
            return
        except PermissionError:
            continue


class _Arbiter(Arbiter):  # type: ignore[misc]
    """gunicorn's arbiter, saying so when a worker ends outside a stop: gunicorn then starts a new one
    with empty memory, which must not pass for the old one (docs/deployment.md, "When a worker dies")."""

    app: GunicornServer

    def __init__(self, app: GunicornServer) -> None:
        self._llmts_stopping = False
        self._llmts_end: WorkerEnd | None = None  # the last end since the last spawn
        super().__init__(app)

    def reap_workers(self) -> None:
        # How each ended, read before gunicorn's waitpid consumes the status (it only logs it).
        ends = {pid: peek_end(pid) for pid in self.WORKERS}
        timed_out = {pid for pid, worker in self.WORKERS.items() if worker.aborted}
        super().reap_workers()
        if self._llmts_stopping:
            return
        for pid, how in ends.items():
            if pid not in self.WORKERS:
                if pid in timed_out:
                    how = f"{how or 'ended'} after gunicorn's worker timeout"
                self._llmts_worker_ended(WorkerEnd(pid, how, time.time()))

    def _llmts_worker_ended(self, end: WorkerEnd) -> None:
        self._llmts_end = end
        self.log.error("llmts: %s", end.report())
        path = self.app.restart_file
        if path:
            try:
                with open(path, "ab") as handle:
                    handle.write(end.event(os.getpid()) + b"\n")
            except OSError as exc:
                self.log.error("llmts: cannot append to --restart-file %s: %s", path, exc)

    def spawn_worker(self) -> Any:
        # The forked worker reads how its predecessor ended here (ReplacementAware,
        # server/http/connections.py).
        self.app.llmts_last_worker_end, self._llmts_end = self._llmts_end, None
        return super().spawn_worker()

    def stop(self, graceful: bool = True) -> None:
        self._llmts_stopping = True  # workers ending now were told to
        super().stop(graceful)


class GunicornServer(BaseApplication):  # type: ignore[misc]
    def __init__(
        self,
        app_factory: Callable[[], Any],
        *,
        host: str,
        port: int,
        access_log: bool = True,
        log_format: str = "text",
        parent_pid: int | None = None,
        ready_file: str | None = None,
        worker_class: str = DEFAULT_WORKER_CLASS,
        timeouts: Timeouts | None = None,
        drain_seconds: float = 0.0,
        restart_file: str | None = None,
        tls: TlsFiles | None = None,
    ) -> None:
        timeouts = timeouts or Timeouts()
        # The arbiter appends one JSON line per worker that died here (the ``--workers`` supervisor reads it).
        self.restart_file = restart_file
        self.llmts_last_worker_end: WorkerEnd | None = None
        self._app_factory = app_factory
        self._options: dict[str, Any] = {
            "bind": f"[{host}]:{port}" if ":" in host else f"{host}:{port}",
            "workers": 1,
            "worker_class": _WORKER_PATHS[worker_class],
            "worker_connections": 10_000,
            "control_socket_disable": True,
            "accesslog": "-" if access_log else None,
            "errorlog": "-",
            "logger_class": _LOGGER_PATHS[log_format],  # no raw client text in any log line
            "loglevel": "info",
            # The arbiter kills a worker that outlives this; the worker stops sooner when it can.
            # (gunicorn takes whole seconds; the worker uses the exact figures, server/http/connections.py).
            # The drain (docs/deployment.md) comes first, inside the same SIGTERM-to-SIGKILL window.
            "graceful_timeout": math.ceil(timeouts.graceful + drain_seconds),
            "keepalive": math.ceil(timeouts.keepalive),
            "when_ready": self._when_ready,
        }
        self._tls = tls
        if tls is not None:  # the gevent workers wrap each accepted socket (server/http/connections.py)
            self._options.update(certfile=tls.cert, keyfile=tls.key)
        self._parent_pid = parent_pid
        self._ready_file = ready_file
        super().__init__()

    def _when_ready(self, arbiter: Any) -> None:
        sockname = arbiter.LISTENERS[0].sock.getsockname()
        host, port = sockname[0], sockname[1]
        shown = f"[{host}]" if ":" in host else host
        url = f"{'https' if self._tls else 'http'}://{shown}:{port}"
        lines = f"llmts listening on {url}\n"
        if self._tls is not None:
            lines = f"{self._tls.announcement()}\n{lines}"
        # One write: the processes of ``--workers N`` share stdout, and ``print`` may write the text and its
        # newline apart (gunicorn's arbiter leaves stdout unbuffered), which would splice their lines.
        sys.stdout.write(lines)
        sys.stdout.flush()
        if self._ready_file:
            # Write then rename, so a reader never sees a half-written URL.
            partial = self._ready_file + ".partial"
            with open(partial, "w") as handle:
                handle.write(url)
            os.replace(partial, self._ready_file)
        if self._parent_pid:
            threading.Thread(target=_watch_parent, args=(self._parent_pid,), daemon=True).start()

    def run(self) -> None:
        """gunicorn's ``BaseApplication.run`` with llmts's arbiter."""
        gc.freeze()  # what the arbiter imported lives as long as it does (server/process/boot.py)
        try:
            _Arbiter(self).run()
        except RuntimeError as exc:
            print(f"\nError: {exc}\n", file=sys.stderr, flush=True)
            sys.exit(1)

    def load_config(self) -> None:
        for key, value in self._options.items():
            if value is not None:
                self.cfg.set(key, value)

    def load(self) -> Any:
        return self._app_factory()
