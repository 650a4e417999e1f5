"""Cohere's embed and rerank wire, shared by every provider that speaks it (``cohere``, and Bedrock's
InvokeModel on the ``cohere.embed-*`` and ``cohere.rerank-*`` models): the bodies' parsers, the answers'
payloads, the strict request rules. Not a provider: it has no ``info.py``, is not registered, and imports
no provider package (docs/architecture.md, "Shared wire modules"). Import-free, like a provider package's
``__init__``.
"""

from __future__ import annotations

__all__: list[str] = []
