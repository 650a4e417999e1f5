"""Realtime over WebSocket (docs/realtime.md): the upgrade's routing (``path.RealtimePath``), one
connection's driver (``connection.py``, loaded with the first upgrade) and the per-connection bounds
(``settings.RealtimeSettings``). Nothing is imported here: the CLI (and so gunicorn's arbiter) reads the
settings without loading the app."""

from __future__ import annotations

__all__: list[str] = []
