"""The OpenAI Realtime API (GA event names) over WebSocket, sans-IO (docs/realtime.md).

``routes.py`` declares the ``openai`` and ``azure-openai`` WebSocket routes; ``protocol.py`` is one
connection's protocol (``OpenAIRealtimeProtocol``), built from ``session.py`` (the session object),
``items.py`` and ``state.py`` (the conversation and the input audio buffer), ``client_events.py`` (the
client events' envelopes), ``turns.py`` (a response's turn), ``render.py`` and ``interruption.py`` (the
events of an answered, cancelled or failed turn), ``audio.py`` (formats, silence, what llmts "hears").
Only ``routes.py`` is imported with the adapters; the rest loads on the first connection.
"""

from __future__ import annotations

__all__: list[str] = []
