"""What every provider's routes of the operations other than chat share (docs/architecture.md,
"Operations"): reading a request's texts within llmts's bounds, building the ``OperationRequest``, and
turning vectors into the wire's number formats. Any provider may import this module; it imports none.
"""

from __future__ import annotations

import base64
import sys
from array import array
from collections.abc import Sequence
from typing import Any

from llmts.errors import InvalidRequest
from llmts.schema.fixtures import LIMITS
from llmts.schema.neutral import OperationRequest, build

__all__ = ["bounded_texts", "float32_base64", "operation_request"]

_MAX_INPUTS = LIMITS["operation_inputs"]
_MAX_CHARS = LIMITS["operation_input_chars"]
_MAX_DIMENSIONS = LIMITS["embedding_dimensions"]


def bounded_texts(values: Sequence[Any], param: str, *, code: str = "invalid_value") -> tuple[str, ...]:
    """The strings of ``values`` (every one must be a string), within llmts's input bounds (a 400
    naming ``param`` otherwise)."""
    if len(values) > _MAX_INPUTS:
        raise InvalidRequest(
            f"{param} has {len(values)} items; llmts accepts at most {_MAX_INPUTS} (operation_inputs)",
            code=code,
            param=param,
        )
    total = 0
    for index, value in enumerate(values):
        if not isinstance(value, str):
            raise InvalidRequest(f"{param}[{index}] must be a string", code=code, param=param)
        total += len(value)
    if total > _MAX_CHARS:
        raise InvalidRequest(
            f"{param} has {total} characters; llmts accepts at most {_MAX_CHARS} (operation_input_chars)",
            code=code,
            param=param,
        )
    return tuple(values)


def operation_request(
    provider: str,
    operation: str,
    model: str,
    inputs: tuple[str, ...],
    *,
    dimensions: int | None = None,
    default_dimensions: int = 0,
    query: str = "",
    top_n: int | None = None,
    image_inputs: tuple[int, ...] = (),
    param: str = "dimensions",
) -> OperationRequest:
    """The neutral request; embeddings also check the dimension is one llmts can answer (1..4096)."""
    if operation == "embeddings":
        size = dimensions or default_dimensions
        if not 1 <= size <= _MAX_DIMENSIONS:
            raise InvalidRequest(
                f"{param} must be between 1 and {_MAX_DIMENSIONS} (llmts' limit)",
                code="invalid_value",
                param=param,
            )
    return build(
        OperationRequest,
        provider=provider,
        operation=operation,
        model=model,
        messages=(),
        inputs=inputs,
        query=query,
        dimensions=dimensions,
        default_dimensions=default_dimensions,
        top_n=top_n,
        image_inputs=image_inputs,
    )


def float32_base64(vector: Sequence[float]) -> str:
    """A vector as little-endian float32 bytes in base64 (OpenAI's and Cohere's ``base64`` format)."""
    values = array("f", vector)
    if sys.byteorder == "big":  # pragma: no cover - the wire is little-endian
        values.byteswap()
    return base64.b64encode(values.tobytes()).decode()
