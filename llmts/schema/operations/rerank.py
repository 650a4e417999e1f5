"""The ``rerank`` operation's schema: its row, its fixture (ranked documents, validated and bounded) and
its compiled answer (docs/configuration.md, "Operations")."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, Field

from llmts.schema.model_base import STRICT
from llmts.schema.operation_row import INPUT_LIMITS, OperationResult, OperationRow

__all__ = ["RERANK_ROW", "RerankFixture", "RerankHitFixture", "RerankResult"]

RERANK_ROW = OperationRow("rerank", ("rerank",), {"rerank_results_per_response": 1000})


class RerankHitFixture(BaseModel):
    """One ranked document: its index in the request's ``documents`` and its score."""

    model_config = STRICT

    index: int = Field(ge=0, lt=INPUT_LIMITS["operation_inputs"])
    relevance_score: float = Field(ge=0.0, le=1.0)


def _check_rerank(hits: list[RerankHitFixture]) -> list[RerankHitFixture]:
    indexes = [hit.index for hit in hits]
    if len(indexes) != len(set(indexes)):
        raise ValueError("rerank results must name each document index at most once")
    return hits


# Ranked documents, most relevant first, each named at most once.
RerankFixture = Annotated[
    list[RerankHitFixture],
    Field(min_length=1, max_length=RERANK_ROW.limits["rerank_results_per_response"]),
    AfterValidator(_check_rerank),
]


class RerankResult(OperationResult):
    """(document index, relevance score) pairs, most relevant first."""

    hits: tuple[tuple[int, float], ...]
