"""The ``speech`` operation's row: answered by the ``audio`` kind, whose fixture and compiled answer live
in ``llmts/schema/media.py`` with the other media formats (docs/audio.md)."""

from __future__ import annotations

from llmts.schema.operation_row import OperationRow

__all__ = ["SPEECH_ROW"]

SPEECH_ROW = OperationRow("speech", ("audio",))
