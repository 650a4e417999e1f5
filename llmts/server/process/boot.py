"""What the forked worker spares itself while it boots (docs/design/memory.md, "The worker's boot").

- The cyclic garbage collector: loading the app allocates about 100,000 objects that live as long as the
  worker and frees almost none, so the collections during the boot (about 120, one of them full) find
  next to nothing. ``collector_off`` stops it when the forked worker begins (server/worker.py);
  ``WorkerBoot`` turns it back on once the app is loaded, after ``gc.freeze()`` moved everything the boot
  made to the permanent generation, where later collections never look (the few cycles the boot left
  behind stay with it).
- gevent's plugin look-ups: ``monkey.patch_all()`` asks ``importlib.metadata.entry_points`` for its plugin
  groups 25 times, and each call reads every installed distribution's ``entry_points.txt`` (about 60 ms
  with 150 distributions). While gevent patches, the entry points are read once and each call selects
  its group from them, as ``entry_points`` itself does.

Before patching, the worker also takes the real ``ssl`` objects where the arbiter imported gunicorn under a
stand-in (``settle``, server/process/deferred_ssl.py).
"""

from __future__ import annotations

import gc
import importlib.metadata
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from llmts.server.process.deferred_ssl import settle

__all__ = ["WorkerBoot", "collector_off"]


def collector_off() -> None:
    """Called first in the forked worker; ``WorkerBoot.load_wsgi`` undoes it."""
    gc.disable()


@contextmanager
def _entry_points_read_once() -> Iterator[None]:
    read = importlib.metadata.entry_points
    every: list[Any] = []

    def entry_points(**params: Any) -> Any:
        if not every:
            every.append(read())
        return every[0].select(**params)

    importlib.metadata.entry_points = entry_points
    try:
        yield
    finally:
        importlib.metadata.entry_points = read


class WorkerBoot:
    """Mixin for llmts's three gunicorn gevent workers: the real ``ssl`` objects first (``settle``), gevent
    patches with the entry points read once, and the collector is on again, without the boot's objects,
    once the app is loaded (or failed to load). ``gevent_pywsgi``'s worker is not built through
    server/worker.py's stand-ins, so its collector stays on during the boot; the freeze still applies."""

    def patch(self) -> None:
        settle()  # the real ssl.SSLError where the arbiter imported gunicorn without ssl (deferred_ssl.py)
        with _entry_points_read_once():
            super().patch()  # type: ignore[misc]

    def load_wsgi(self) -> None:
        try:
            super().load_wsgi()  # type: ignore[misc]
        finally:
            gc.freeze()
            gc.enable()
