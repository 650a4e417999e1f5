"""The ``transcription`` and ``translation`` operations' rows: both answered by the ``transcript`` kind
(a translation is a transcript in English), whose fixture and compiled answer live in
``llmts/schema/media.py`` with the other media formats (docs/audio.md)."""

from __future__ import annotations

from llmts.schema.operation_row import OperationRow

__all__ = ["TRANSCRIPTION_ROW", "TRANSLATION_ROW"]

TRANSCRIPTION_ROW = OperationRow("transcription", ("transcript",))
TRANSLATION_ROW = OperationRow("translation", ("transcript",))
