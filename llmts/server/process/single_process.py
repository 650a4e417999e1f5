"""Refuse ``gunicorn -w N 'llmts.app:create_app()'`` with N > 1 (docs/deployment.md).

A session lives in one process's memory: under N gunicorn workers sharing one socket, a session created
by one worker would answer 404 (or another session's state) on the next connection the kernel hands to
another. ``llmts serve --workers N`` runs N processes on N ports instead, each owning its sessions.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["SeveralWorkersRefused", "gunicorn_binds", "refuse_several_gunicorn_workers"]


def _gunicorn_config() -> Any:
    """gunicorn's settings of the process loading the app: the worker (or, with ``--preload``, the
    arbiter) that is calling the factory is a caller frame's ``self``; None outside gunicorn."""
    if "gunicorn" not in sys.modules:
        return None
    frame = sys._getframe(1)
    while frame is not None:
        owner = frame.f_locals.get("self")
        if owner is not None and type(owner).__module__.startswith("gunicorn."):
            cfg = getattr(owner, "cfg", None)
            if cfg is not None and hasattr(cfg, "workers"):
                return cfg
        frame = frame.f_back  # type: ignore[assignment]
    return None


def _app_import_error() -> type[Exception]:
    try:
        from gunicorn.errors import AppImportError
    except ImportError:  # pragma: no cover - gunicorn is a dependency
        return RuntimeError
    return AppImportError  # type: ignore[no-any-return]


class SeveralWorkersRefused(_app_import_error()):  # type: ignore[misc]
    """Start-up only (no HTTP status): gunicorn was asked for more than one worker for one llmts app.

    A subclass of gunicorn's ``AppImportError``, so gunicorn prints the message alone and halts.
    """


def gunicorn_binds() -> list[str] | None:
    """The addresses gunicorn binds for the process loading the app (``["127.0.0.1:8000"]``); None
    outside gunicorn."""
    cfg = _gunicorn_config()
    return None if cfg is None else [str(address) for address in cfg.bind]


def refuse_several_gunicorn_workers() -> None:
    """Raise ``SeveralWorkersRefused`` when gunicorn runs (or will run) more than one worker."""
    cfg = _gunicorn_config()
    if cfg is None:
        return
    workers = int(cfg.workers)
    if workers > 1:
        raise SeveralWorkersRefused(
            f"llmts: refusing to run under {workers} gunicorn workers: a session lives in one process, "
            "and gunicorn's workers would split each session's requests between processes that cannot "
            "see each other. Use `llmts serve --workers N` (N processes, each on its own port, owning "
            "its sessions; docs/deployment.md) or `gunicorn -w 1`."
        )
