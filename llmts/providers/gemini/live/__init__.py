"""Gemini Live (``BidiGenerateContent`` over a WebSocket) as a sans-IO protocol (docs/design/gemini-live.md).

``routes.py`` declares the WebSocket routes the Gemini adapter serves and opens one ``GeminiLiveProtocol``
(``protocol.py``) per connection; ``client_messages.py`` parses client messages into ``client_types.py``'s
values (``fields.py`` reads protobuf JSON: camelCase or snake_case keys at every level), ``speech.py``
decides when realtime audio makes a turn, ``conversation.py`` holds the conversation and the tool calls
waiting for responses, ``summaries.py`` the bounded client events a turn journals, ``render.py`` writes
server messages and ``closes.py`` maps errors to close codes.

This module stays import-free; import the modules themselves.
"""

from __future__ import annotations

__all__: list[str] = []
