"""The ``cohere`` provider: Cohere v2 chat (JSON and SSE) under ``/cohere/v2``, models under ``/cohere/v1``.

This module stays import-free: ``info.py`` declares the namespace (read by the schema and the Python API),
``adapter.py`` the routes (loaded by ``llmts/providers/adapters.py``).
"""

from __future__ import annotations

__all__: list[str] = []
