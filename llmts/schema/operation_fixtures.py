"""Response fixtures of the operations other than chat: scripted vectors, moderation verdicts and rerank
results (docs/configuration.md, "Operations"). Validated whole at configure time, every list bounded by
``OPERATION_LIMITS``; ``ResponseFixture`` (``fixtures.py``) carries them as its ``embeddings``,
``moderation`` and ``rerank`` kinds."""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_serializer, model_validator

from llmts.schema.operations import MODERATION_CATEGORIES, OPERATION_LIMITS

__all__ = [
    "EmbeddingsFixture",
    "ModerationFixture",
    "ModerationFixtures",
    "RerankFixture",
    "RerankHitFixture",
]

_STRICT = ConfigDict(defer_build=True, extra="forbid", frozen=True, populate_by_name=True)
_LIMIT_VECTORS = OPERATION_LIMITS["embeddings_per_response"]
_LIMIT_DIMENSIONS = OPERATION_LIMITS["embedding_dimensions"]
_LIMIT_VALUES = OPERATION_LIMITS["embedding_values_per_response"]


def _check_vectors(vectors: list[list[float]]) -> list[list[float]]:
    dimensions = len(vectors[0])
    for index, vector in enumerate(vectors):
        if not 1 <= len(vector) <= _LIMIT_DIMENSIONS:
            raise ValueError(f"embeddings[{index}] must have 1..{_LIMIT_DIMENSIONS} values")
        if len(vector) != dimensions:
            raise ValueError(
                f"embeddings[{index}] has {len(vector)} values but embeddings[0] has {dimensions}: "
                "every vector of a response has the same dimension"
            )
        if not all(math.isfinite(value) for value in vector):
            raise ValueError(f"embeddings[{index}] has a value that is not a finite number")
    if len(vectors) * dimensions > _LIMIT_VALUES:
        raise ValueError(
            f"the response scripts {len(vectors) * dimensions} values; at most {_LIMIT_VALUES} "
            "(embedding_values_per_response)"
        )
    return vectors


# One vector per input of the request, in input order.
EmbeddingsFixture = Annotated[
    list[list[float]],
    Field(min_length=1, max_length=_LIMIT_VECTORS),
    AfterValidator(_check_vectors),
]


def _check_categories(names: dict[str, Any]) -> None:
    for name in names:
        if name not in MODERATION_CATEGORIES:
            raise ValueError(
                f"unknown moderation category {name!r}; expected one of " + ", ".join(MODERATION_CATEGORIES)
            )


class ModerationFixture(BaseModel):
    """A moderation verdict: the categories that apply (``true``), their scores (0..1, default 0.9 for a
    category that applies) and ``flagged`` (default: whether any category applies)."""

    model_config = _STRICT

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
        Field(min_length=1, max_length=OPERATION_LIMITS["moderation_results_per_response"]),
    ]
)


class RerankHitFixture(BaseModel):
    """One ranked document: its index in the request's ``documents`` and its score."""

    model_config = _STRICT

    index: int = Field(ge=0, lt=OPERATION_LIMITS["operation_inputs"])
    relevance_score: float = Field(ge=0.0, le=1.0)


def _check_rerank(hits: list[RerankHitFixture]) -> list[RerankHitFixture]:
    indexes = [hit.index for hit in hits]
    if len(indexes) != len(set(indexes)):
        raise ValueError("rerank results must name each document index at most once")
    return hits


# Ranked documents, most relevant first, each named at most once.
RerankFixture = Annotated[
    list[RerankHitFixture],
    Field(min_length=1, max_length=OPERATION_LIMITS["rerank_results_per_response"]),
    AfterValidator(_check_rerank),
]
