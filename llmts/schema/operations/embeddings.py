"""The ``embeddings`` operation's schema: its row, its fixture (scripted vectors, validated and bounded)
and its compiled answer (docs/embeddings.md)."""

from __future__ import annotations

import math
from typing import Annotated

from pydantic import AfterValidator, Field

from llmts.schema.operation_row import OperationResult, OperationRow

__all__ = ["EMBEDDINGS_ROW", "EmbeddingsFixture", "EmbeddingsResult"]

EMBEDDINGS_ROW = OperationRow(
    "embeddings",
    ("embeddings",),
    {
        # Scripted vectors: per response, and their values in total (held in memory as floats).
        "embeddings_per_response": 2048,
        "embedding_dimensions": 4096,
        "embedding_values_per_response": 262_144,
        # Generated vectors of one request: inputs x dimensions.
        "generated_embedding_values": 524_288,
    },
)
_LIMIT_VECTORS = EMBEDDINGS_ROW.limits["embeddings_per_response"]
_LIMIT_DIMENSIONS = EMBEDDINGS_ROW.limits["embedding_dimensions"]
_LIMIT_VALUES = EMBEDDINGS_ROW.limits["embedding_values_per_response"]


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


class EmbeddingsResult(OperationResult):
    """One vector per input, in input order."""

    vectors: tuple[tuple[float, ...], ...]
