"""Composition root: the WSGI app (``app``), the provider path, the gunicorn worker (``worker``) and the CLI
(``cli``); ``http/``, ``api/``, ``process/`` and ``upstream/`` beside them (docs/architecture.md, "Layers").
Nothing is imported here, so the arbiter process loads only what it runs."""

from __future__ import annotations

__all__: list[str] = []
