"""Provider adapters. Adding a provider: a module here and one line in ``ADAPTERS``."""

from __future__ import annotations

from llmts.providers.base import (
    InferenceRoute,
    ProviderAdapter,
    ProviderCall,
    ProviderRequest,
    Reply,
    Route,
    SimpleRoute,
)
from llmts.providers.openai import OPENAI

__all__ = [
    "ADAPTERS",
    "InferenceRoute",
    "ProviderAdapter",
    "ProviderCall",
    "ProviderRequest",
    "Reply",
    "Route",
    "SimpleRoute",
]

ADAPTERS: tuple[ProviderAdapter, ...] = (OPENAI,)
