"""The OpenAI Chat Completions wire, shared by every provider that speaks it (``openai``, ``azure-openai``
and Ollama's OpenAI-compatible ``/ollama/v1``): request parsing, JSON and SSE rendering, the error
envelope. Not a provider: it has no ``info.py``, is not registered, and imports no provider package
(docs/architecture.md, "Shared wire modules"). Import-free, like a provider package's ``__init__``.
"""

from __future__ import annotations

__all__: list[str] = []
