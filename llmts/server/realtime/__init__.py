"""Realtime over WebSocket (docs/realtime.md): the upgrade's routing (``path.py``) and one connection's
driver (``connection.py``, loaded with the first upgrade)."""

from __future__ import annotations

from llmts.server.realtime.path import RealtimePath
from llmts.server.realtime.settings import RealtimeSettings

__all__ = ["RealtimePath", "RealtimeSettings"]
