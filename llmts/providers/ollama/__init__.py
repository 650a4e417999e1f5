"""The ``ollama`` provider: Ollama's native API under ``/ollama/api`` (NDJSON streams) and its
OpenAI-compatible API under ``/ollama/v1``. Import-free: the catalog reads ``info.py`` without the adapter.
"""

from __future__ import annotations

__all__: list[str] = []
