"""Provider adapters: one package per provider, plus the shared wire packages several providers speak.
Adding a provider: one package here and one line in ``llmts.catalog.registry.PACKAGES``
(docs/contributing.md, "Adding a provider").

This package module imports nothing, so the catalog (``llmts.catalog``) reads the packages' ``info``
modules without loading the runtime; the adapter interface is ``llmts.providers.base`` and the loaded
adapters are ``llmts.providers.adapters.ADAPTERS``.
"""

from __future__ import annotations

__all__: list[str] = []
