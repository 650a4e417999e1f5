"""The ``gemini`` provider: the Gemini Developer API under ``/gemini/v1beta`` and ``/gemini/v1``.

This module stays import-free: ``info.py`` declares the namespace (read by the schema and the Python API),
``adapter.py`` the routes (loaded by ``llmts/providers/adapters.py``).
"""

from __future__ import annotations

__all__: list[str] = []
