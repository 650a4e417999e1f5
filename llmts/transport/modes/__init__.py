"""The transport's registry of delivery modes: one unit per mode, one row per unit.

Each module of this package is one mode (the shape of Toxiproxy's toxics); ``REGISTRY`` maps the mode's
name to its unit wrapped in the shape that says when it acts (``base.py``). The writer
(``llmts/transport/writer.py``) and the server (``llmts/server/respond.py``) dispatch through the
derived ``STREAM_UNITS`` and ``CONNECTION_UNITS`` once per response, never per frame. Validation lives in
the schema's mode table (``llmts.schema.faults.MODES``); tests/transport/test_mode_registry.py pins the
two to each other and to the names the configuration accepts.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from llmts.transport.modes import (
    abort_connection,
    delay_then_continue,
    early_clean_end,
    empty_response,
    http_error_page,
    malformed_frame,
    reset_before_headers,
    slow_drip,
    stall,
    truncate_bytes,
)
from llmts.transport.modes.base import Boundary, Drop, InStream, ModeUnit, Paced, Replace

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
]

REGISTRY: Mapping[str, ModeUnit] = MappingProxyType(
    {
        "early_clean_end": InStream(early_clean_end.act),
        "delay_then_continue": InStream(delay_then_continue.act),
        "abort_connection": InStream(abort_connection.act),
        "truncate_bytes": InStream(truncate_bytes.act),
        "malformed_frame": InStream(malformed_frame.act),
        "stall": InStream(stall.act),
        "slow_drip": Paced(slow_drip.deliver),
        "reset_before_headers": Drop(reset_before_headers.drop),
        "empty_response": Drop(empty_response.drop),
        "http_error_page": Replace(http_error_page.page),
    }
)

# Units the stream writer runs (in-stream and pacing) and units that act before any byte.
STREAM_UNITS: Mapping[str, InStream | Paced] = MappingProxyType(
    {name: unit for name, unit in REGISTRY.items() if isinstance(unit, InStream | Paced)}
)
CONNECTION_UNITS: Mapping[str, Drop | Replace] = MappingProxyType(
    {name: unit for name, unit in REGISTRY.items() if isinstance(unit, Drop | Replace)}
)
