"""The ``openai`` and ``azure-openai`` providers: Chat Completions, Responses and models under
``/openai/v1``, and the same wire under Azure's routes (``azure.py``).

This module stays import-free: ``info.py`` declares the namespaces (read by the schema and the Python
API), ``adapter.py`` the routes (loaded by ``llmts/providers/adapters.py``).
"""

from __future__ import annotations

__all__: list[str] = []
