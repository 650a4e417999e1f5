"""The provider catalog, a leaf every layer may read: which providers exist (``registry.PACKAGES``) and what
each declares as plain data in its package's ``info.py`` (``info.ProviderInfo``: namespaces, models, SDK
clients, the environment its SDK reads). It imports nothing from llmts but the provider packages' import-free
``__init__`` and ``info`` modules, so reading it never loads the runtime or an adapter
(docs/architecture.md, "Providers and the adapter registry")."""

from __future__ import annotations

__all__: list[str] = []
