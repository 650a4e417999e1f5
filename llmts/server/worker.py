"""llmts's gunicorn workers, by the names gunicorn's ``-k`` (and ``llmts serve --worker-class``) takes:

- ``LlmtsWorker`` (``llmts``, the default): llmts's own HTTP/1.1 loop on llhttp;
- ``LlmtsGeventWorker`` (``gevent``): gunicorn's own parser;
- ``LlmtsPyWSGIWorker`` (``gevent_pywsgi``): the previous default, gevent's pywsgi with
  server/http/pywsgi_handler.py's handler, kept selectable for a while (docs/server.md); imported only
  when named, because that handler overrides private methods of gevent's (pyproject.toml bounds gevent).

All are gevent workers with llmts's deadlines and graceful stop (server/http/gevent_workers.py). The first
two are what gunicorn's arbiter holds: it builds one per worker (gunicorn's ``Worker.__init__``: the
heartbeat file, the listeners) and forks, and the child turns it into the gevent class before it does
anything else (``init_process``). So the arbiter, which serves nothing, never imports gevent or the app
(docs/architecture.md, "The two processes").
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import TYPE_CHECKING, Any, ClassVar

from gunicorn.workers.base_async import AsyncWorker

from llmts.server.process.boot import collector_off

if TYPE_CHECKING:
    from llmts.server.http.pywsgi_handler import LlmtsPyWSGIHandler, LlmtsPyWSGIWorker

__all__ = ["LlmtsGeventWorker", "LlmtsPyWSGIHandler", "LlmtsPyWSGIWorker", "LlmtsWorker"]

_GEVENT_WORKERS = "llmts.server.http.gevent_workers"
# Imported from server/http/pywsgi_handler.py on first use (``__getattr__``): gevent's pywsgi and its private
# methods.
_LEGACY = ("LlmtsPyWSGIHandler", "LlmtsPyWSGIWorker")


class _GeventOnFork(AsyncWorker):  # type: ignore[misc]
    """The arbiter's side of a gevent worker: gunicorn's async worker state, built before the fork; the
    child becomes ``_BECOMES`` (same base, same instance layout) and runs as it."""

    _BECOMES: ClassVar[str]

    @classmethod
    def check_config(cls, cfg: Any, log: Any) -> None:
        """In the arbiter (gunicorn calls it before it forks): a missing gevent is a clear start-up error
        here, not a traceback from every worker that fails to boot."""
        if importlib.util.find_spec("gevent") is None:
            raise RuntimeError("llmts's workers need gevent: pip install 'gevent>=24.10.1'")

    def init_process(self) -> None:
        collector_off()  # until the app is loaded (server/process/boot.py)
        real = getattr(importlib.import_module(_GEVENT_WORKERS), self._BECOMES)
        self.__class__ = real
        real.init_process(self)


class LlmtsWorker(_GeventOnFork):
    """gunicorn's gevent worker serving each connection with llmts's HTTP/1.1 loop."""

    _BECOMES = "GeventLoopWorker"


class LlmtsGeventWorker(_GeventOnFork):
    """gunicorn's gevent worker with gunicorn's own HTTP parser."""

    _BECOMES = "GeventGunicornWorker"


def __getattr__(name: str) -> Any:
    if name in _LEGACY:
        from llmts.server.http import pywsgi_handler as handler

        return getattr(handler, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
