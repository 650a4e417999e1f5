"""The OpenAI Realtime API (GA event names) over WebSocket, sans-IO (docs/realtime.md).

``routes.py`` declares the ``openai`` and ``azure-openai`` WebSocket routes; ``protocol.py`` is one
connection's protocol (``OpenAIRealtimeProtocol``), built from ``session.py`` and ``fields.py`` (the
session object and its checks), ``items.py`` and ``state.py`` (the conversation and the input audio
buffer), ``client_events.py`` (the client events' envelopes), ``summaries.py`` (what a turn tells the
journal), ``turns.py`` (a response's turn), ``response.py``, ``render.py`` and ``interruption.py`` (the
events of an answered, cancelled or failed turn), ``audio.py`` (formats, silence, what llmts "hears"),
``wire.py`` (events as bytes, errors in the service's words) and ``limits.py`` (every bound).
Only ``routes.py`` is imported with the adapters; the rest loads on the first connection.
"""

from __future__ import annotations

__all__: list[str] = []
