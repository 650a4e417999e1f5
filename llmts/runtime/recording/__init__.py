"""Record and replay (docs/recording.md): what a recording session keeps, how it becomes a configuration,
and how a replayed request is compared with the recorded ones. No HTTP client here: forwarding is the
server's (``llmts/server/upstream/client.py``).

``recording_configuration`` is imported from ``recording/export.py`` itself, not from here: the export reads
the conversations package, whose book checks outputs through ``runtime/compat.py``, which reads
``recording/match.py``; re-exported here, it would close an import circle through this package."""

from __future__ import annotations

from llmts.runtime.recording.match import (
    closest_recorded,
    first_difference,
    no_recorded_match,
    recorded_request,
)
from llmts.runtime.recording.store import REDACTED, Exchange, Recorder, Redactor, kept_headers

__all__ = [
    "REDACTED",
    "Exchange",
    "Recorder",
    "Redactor",
    "closest_recorded",
    "first_difference",
    "kept_headers",
    "no_recorded_match",
    "recorded_request",
]
