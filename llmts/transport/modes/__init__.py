"""The transport's registry of delivery modes: one module per mode, each declaring its unit.

Each module of this package but ``base.py`` is one mode (the shape of Toxiproxy's toxics): one function
decorated with its shape and the mode's name (``@in_stream("stall")``; ``base.py``). ``REGISTRY`` is
built here once, at import, from those declarations, in the order of the schema's mode table
(``llmts.schema.faults.MODES``, which owns validation); a unit the table lacks, a row without a unit, or a
shape of the wrong kind fails the import. The writer (``llmts/transport/writer.py``) and the server
(``llmts/server/respond.py``) dispatch through the derived ``STREAM_UNITS`` and ``CONNECTION_UNITS``
once per response, never per frame.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from llmts.schema.faults import MODES, SSE_MODES
from llmts.transport.modes.base import (
    Boundary,
    Drop,
    InStream,
    ModeUnit,
    Paced,
    Replace,
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

# The HTTP modes; the WebSocket-only ones act in llmts/transport/websocket_faults.py.
REGISTRY: Mapping[str, ModeUnit] = load_units(
    __name__, __path__, MappingProxyType({name: MODES[name] for name in MODES if name in SSE_MODES})
)

# Units the stream writer runs (in-stream and pacing) and units that act before any byte.
STREAM_UNITS: Mapping[str, InStream | Paced] = MappingProxyType(
    {name: unit for name, unit in REGISTRY.items() if isinstance(unit, InStream | Paced)}
)
CONNECTION_UNITS: Mapping[str, Drop | Replace] = MappingProxyType(
    {name: unit for name, unit in REGISTRY.items() if isinstance(unit, Drop | Replace)}
)
