"""What an operation's schema module declares (docs/architecture.md, "Operations"): its row of the
operation table, and the base of its compiled answer.

A leaf (pydantic and ``model_base`` only), so that every module of ``llmts/schema/operations/`` can build
on it while that package's ``__init__`` collects the rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from pydantic import BaseModel

from llmts.schema.model_base import STRICT

__all__ = ["INPUT_LIMITS", "OperationResult", "OperationRow"]


@dataclass(frozen=True)
class OperationRow:
    """One operation of the table: its name (the scenario's ``operation`` value and the journal's
    ``operation``), the response fixture kinds that answer it (each a field of ``ResponseFixture``, in
    the order validation messages list them) and its own limits (merged into ``LIMITS``; documented in
    docs/configuration.md, "Limits")."""

    name: str
    kinds: tuple[str, ...]
    limits: Mapping[str, int] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "limits", MappingProxyType(dict(self.limits)))  # frozen all the way


# Limits every operation with text inputs shares (embeddings, moderation, rerank...: the routes that
# bound them with ``bounded_texts``): the inputs of one request (texts to embed or moderate, documents to
# rerank) and their characters.
INPUT_LIMITS: Mapping[str, int] = MappingProxyType(
    {
        "operation_inputs": 2048,
        "operation_input_chars": 1_048_576,
    }
)


class OperationResult(BaseModel):
    """The compiled answer of an operation other than chat (``ScriptedOutput.result``): each operation's
    result model subclasses it."""

    model_config = STRICT  # built by llmts: immutable, nothing unknown loaded
