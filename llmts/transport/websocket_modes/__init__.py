"""The transport's registry of WebSocket delivery modes: one module per mode, each declaring its unit.

Each module of this package but ``base.py`` is one mode's unit: one function decorated with
``@on_websocket("<mode>")`` (``base.py``). ``REGISTRY`` is built here once, at import, from those
declarations, by the same check as the HTTP units' (``llmts/transport/modes/base.py`` ``registry_of``),
against the rows of the schema's mode table (``llmts.schema.faults.MODES``) for the websocket channel
(``WEBSOCKET_MODES``): a unit of a mode the table lacks or gives no websocket channel, a websocket row
without a unit, or a unit of another shape fails the import. ``llmts/transport/websocket_delivery.py``
dispatches through it once per turn.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from llmts.transport.modes.base import channel_table, load_units
from llmts.transport.websocket_modes.base import (
    MALFORMED_EVENT,
    EventBoundary,
    EventChannel,
    OnWebSocket,
    on_websocket,
)

__all__ = [
    "MALFORMED_EVENT",
    "REGISTRY",
    "EventBoundary",
    "EventChannel",
    "OnWebSocket",
    "on_websocket",
]

# Every unit is an ``OnWebSocket`` (``registry_of`` checked each one's channel); the filter is for mypy.
REGISTRY: Mapping[str, OnWebSocket] = MappingProxyType(
    {
        name: unit
        for name, unit in load_units(__name__, __path__, channel_table("websocket"), "websocket").items()
        if isinstance(unit, OnWebSocket)
    }
)
