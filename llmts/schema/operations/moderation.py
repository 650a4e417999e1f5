"""The ``moderation`` operation's schema: its row, the categories a fixture may flag or score, its
fixture (verdicts, validated and bounded) and its compiled answer (docs/configuration.md,
"Operations")."""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import BaseModel, Field, model_serializer, model_validator

from llmts.schema.model_base import STRICT
from llmts.schema.operation_row import OperationResult, OperationRow

__all__ = [
    "MODERATION_CATEGORIES",
    "MODERATION_ROW",
    "ModerationFixture",
    "ModerationFixtures",
    "ModerationResult",
    "ModerationVerdict",
]

MODERATION_ROW = OperationRow("moderation", ("moderation",), {"moderation_results_per_response": 2048})

# The moderation categories a fixture may flag or score (the omni-moderation set).
MODERATION_CATEGORIES: tuple[str, ...] = (
    "harassment",
    "harassment/threatening",
    "hate",
    "hate/threatening",
    "illicit",
    "illicit/violent",
    "self-harm",
    "self-harm/instructions",
    "self-harm/intent",
    "sexual",
    "sexual/minors",
    "violence",
    "violence/graphic",
)


def _check_categories(names: dict[str, Any]) -> None:
    for name in names:
        if name not in MODERATION_CATEGORIES:
            raise ValueError(
                f"unknown moderation category {name!r}; expected one of " + ", ".join(MODERATION_CATEGORIES)
            )


class ModerationFixture(BaseModel):
    """A moderation verdict: the categories that apply (``true``), their scores (0..1, default 0.9 for a
    category that applies) and ``flagged`` (default: whether any category applies)."""

    model_config = STRICT

    flagged: bool | None = None
    categories: dict[str, bool] = Field(default_factory=dict)
    category_scores: dict[str, float] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _known_categories(self) -> ModerationFixture:
        _check_categories(self.categories)
        _check_categories(self.category_scores)
        for name, score in self.category_scores.items():
            if not (math.isfinite(score) and 0.0 <= score <= 1.0):
                raise ValueError(f"category_scores[{name!r}] must be between 0 and 1")
        return self

    @model_serializer(mode="wrap")
    def _drop_unset(self, handler: Any) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        return {k: v for k, v in data.items() if v is not None and (v or k == "categories")}


# One verdict for every input, or one per input (in input order).
ModerationFixtures = (
    ModerationFixture
    | Annotated[
        list[ModerationFixture],
        Field(min_length=1, max_length=MODERATION_ROW.limits["moderation_results_per_response"]),
    ]
)


class ModerationVerdict(BaseModel):
    """The verdict on one input: flagged, the categories that apply and every category's score."""

    model_config = STRICT

    flagged: bool
    categories: dict[str, bool]
    category_scores: dict[str, float]


class ModerationResult(OperationResult):
    """One verdict per input; a single verdict answers every input."""

    verdicts: tuple[ModerationVerdict, ...]
