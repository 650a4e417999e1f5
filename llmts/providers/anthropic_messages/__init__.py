"""The Anthropic Messages wire, shared by every provider that speaks it (``anthropic``, and Bedrock's
InvokeModel, whose body for Anthropic models is the Messages body without ``model`` and ``stream``):
the body's parser, the Message JSON and SSE renderers, the strict request rules. Not a provider: it has
no ``info.py``, is not registered, and imports no provider package (docs/architecture.md, "Shared wire
modules"). Import-free, like a provider package's ``__init__``.
"""

from __future__ import annotations

__all__: list[str] = []
