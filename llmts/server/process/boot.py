"""The worker's boot without the cyclic garbage collector (docs/design/memory.md, "The worker's boot").

Loading the app allocates about 100,000 objects that live as long as the worker and frees almost none,
so the collections during the boot (about 120, one of them full) find next to nothing.
``collector_off`` stops it when the forked worker begins (server/worker.py); ``FrozenBoot`` turns it back
on once the app is loaded, after ``gc.freeze()`` moved everything the boot made to the permanent
generation, where later collections never look (the few cycles the boot left behind stay with it).
"""

from __future__ import annotations

import gc

__all__ = ["FrozenBoot", "collector_off"]


def collector_off() -> None:
    """Called first in the forked worker; ``FrozenBoot.load_wsgi`` undoes it."""
    gc.disable()


class FrozenBoot:
    """Mixin for llmts's gunicorn workers: the collector is on again, without the boot's objects, once the
    app is loaded (or failed to load)."""

    def load_wsgi(self) -> None:
        try:
            super().load_wsgi()  # type: ignore[misc]
        finally:
            gc.freeze()
            gc.enable()
