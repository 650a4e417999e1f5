"""The transport's registry of delivery modes: one module per mode, each declaring its unit.

Each module of this package but ``base.py`` is one mode (the shape of Toxiproxy's toxics): one function
decorated with its shape and the mode's name (``@in_stream("stall")``; ``base.py``). ``REGISTRY`` is
built here once, at import, from those declarations, in the order of the schema's mode table
(``llmts.schema.faults.MODES``, which owns validation) restricted to its rows for the http channel
(``SSE_MODES``); a unit the table lacks or gives no http channel, an http row without a unit, or a shape of
the wrong kind or channel fails the import. The websocket rows have their units in
``llmts/transport/websocket_modes/``. The writer (``llmts/transport/writer.py``) and the server
(``llmts/server/respond.py``) dispatch through the derived ``STREAM_UNITS`` and ``CONNECTION_UNITS``
once per response, never per frame.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from llmts.transport.modes.base import (
    Boundary,
    Drop,
    InStream,
    ModeUnit,
    Paced,
    Replace,
    channel_table,
    drops_connection,
    in_stream,
    load_units,
    paced,
    replaces_answer,
)

__all__ = [
    "CONNECTION_UNITS",
    "REGISTRY",
    "STREAM_UNITS",
    "Boundary",
    "Drop",
    "InStream",
    "ModeUnit",
    "Paced",
    "Replace",
    "drops_connection",
    "in_stream",
    "paced",
    "replaces_answer",
]

# The HTTP modes (``SSE_MODES``); a realtime turn's units are in llmts/transport/websocket_modes/.
# Every unit has one of the four HTTP shapes (``registry_of`` checked each one's channel); the filter is
# for mypy.
REGISTRY: Mapping[str, ModeUnit] = MappingProxyType(
    {
        name: unit
        for name, unit in load_units(__name__, __path__, channel_table("http")).items()
        if isinstance(unit, InStream | Paced | Drop | Replace)
    }
)

# Units the stream writer runs (in-stream and pacing) and units that act before any byte.
STREAM_UNITS: Mapping[str, InStream | Paced] = MappingProxyType(
    {name: unit for name, unit in REGISTRY.items() if isinstance(unit, InStream | Paced)}
)
CONNECTION_UNITS: Mapping[str, Drop | Replace] = MappingProxyType(
    {name: unit for name, unit in REGISTRY.items() if isinstance(unit, Drop | Replace)}
)
