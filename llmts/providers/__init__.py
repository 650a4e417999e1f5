"""Provider adapters. Adding a provider: a module here and one line in ``ADAPTERS``."""

from __future__ import annotations

from llmts.providers.anthropic import ANTHROPIC
from llmts.providers.base import (
    InferenceRoute,
    ProviderAdapter,
    ProviderCall,
    ProviderRequest,
    Reply,
    Route,
    SimpleRoute,
)
from llmts.providers.gemini import GEMINI
from llmts.providers.openai import AZURE_OPENAI, OPENAI

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

ADAPTERS: tuple[ProviderAdapter, ...] = (OPENAI, AZURE_OPENAI, ANTHROPIC, GEMINI)
