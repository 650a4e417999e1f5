"""What the schema's models share: their configuration, and leaving unset optional fields out of dumps.

A leaf (pydantic only), so that every schema module can build on it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, model_serializer

__all__ = ["STRICT", "OmitsNone", "without_none"]

# What a model a user writes (configuration, fixtures, filters) or llmts builds (compiled answers) is:
# validated whole, nothing unknown, immutable, its fields taken by name or alias. The schema is built on
# first use, not at import: a server's worker imports every model and uses few (docs/design/memory.md).
STRICT = ConfigDict(defer_build=True, extra="forbid", frozen=True, populate_by_name=True)


def without_none(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` without its ``None`` values: a dump as the user wrote it (configure echoes it back)."""
    return {key: value for key, value in data.items() if value is not None}


class OmitsNone(BaseModel):
    """A model whose dumps leave out the optional fields it does not have (``None``), so that configure
    echoes what the user wrote and a recording keeps only what was there."""

    @model_serializer(mode="wrap")
    def _omit_none(self, handler: Any) -> dict[str, Any]:
        return without_none(handler(self))
