"""Provider adapters. Adding a provider: one package here and one line in ``catalog.PACKAGES``
(docs/contributing.md, "Adding a provider").

This package module imports nothing itself, so ``llmts.providers.catalog`` and the packages' ``info``
modules load without the runtime; the adapter names below load on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = [
    "ADAPTERS",
    "InferenceRoute",
    "ProviderAdapter",
    "ProviderCall",
    "ProviderRequest",
    "Reply",
    "Route",
    "SessionView",
    "SimpleRoute",
]

_HOMES = {name: "llmts.providers.base" for name in __all__} | {"ADAPTERS": "llmts.providers.adapters"}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(home), name)
