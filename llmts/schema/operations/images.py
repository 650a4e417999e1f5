"""The ``images`` operation's row: answered by the ``images`` kind, whose fixture and compiled answer
live in ``llmts/schema/media.py`` with the other media formats (docs/images.md)."""

from __future__ import annotations

from llmts.schema.operation_row import OperationRow

__all__ = ["IMAGES_ROW"]

IMAGES_ROW = OperationRow("images", ("images",))
