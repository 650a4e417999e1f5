"""What every provider's routes of the operations other than chat share (docs/architecture.md,
"Operations"): reading a request's texts within llmts's bounds, building the ``OperationRequest`` around the
operation's typed input (``llmts/runtime/operations/<operation>.py``), and
turning vectors into the wire's number formats. Any provider may import this module; it imports none.
"""

from __future__ import annotations

import base64
import sys
from array import array
from collections.abc import Sequence
from typing import Any, TypeVar

from llmts.errors import InvalidRequest, LlmtsError
from llmts.runtime.operations.embeddings import EmbeddingsInput
from llmts.schema.fixtures import LIMITS
from llmts.schema.neutral import Completion, NeutralRequest, OperationInput, OperationRequest, build

__all__ = [
    "bounded_texts",
    "embeddings_request",
    "float32_base64",
    "int8_values",
    "operation_input",
    "operation_request",
    "operation_result",
    "packed_bits",
    "uint8_values",
]

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
    provider: str, operation: str, model: str, given: OperationInput, *, stream: bool = False
) -> OperationRequest:
    """The neutral request of ``operation`` carrying its typed input (built by the adapter from values
    it checked, so nothing is validated again)."""
    return build(
        OperationRequest,
        provider=provider,
        operation=operation,
        model=model,
        messages=(),
        stream=stream,
        input=given,
    )


def embeddings_request(
    provider: str,
    model: str,
    inputs: tuple[str, ...],
    *,
    dimensions: int | None = None,
    default_dimensions: int = 0,
    param: str = "dimensions",
) -> OperationRequest:
    """An embeddings request, once its dimension is one llmts can answer (1..4096; a 400 naming
    ``param`` otherwise)."""
    size = dimensions or default_dimensions
    if not 1 <= size <= _MAX_DIMENSIONS:
        raise InvalidRequest(
            f"{param} must be between 1 and {_MAX_DIMENSIONS} (llmts' limit)",
            code="invalid_value",
            param=param,
        )
    return operation_request(
        provider, "embeddings", model, EmbeddingsInput(inputs, dimensions, default_dimensions)
    )


def float32_base64(vector: Sequence[float]) -> str:
    """A vector as little-endian float32 bytes in base64 (OpenAI's and Cohere's ``base64`` format)."""
    values = array("f", vector)
    if sys.byteorder == "big":  # pragma: no cover - the wire is little-endian
        values.byteswap()
    return base64.b64encode(values.tobytes()).decode()


def int8_values(vector: Sequence[float]) -> list[int]:
    """Signed int8 quantization: the vector scaled so its largest magnitude is 127."""
    largest = max((abs(value) for value in vector), default=0.0)
    scale = 127.0 / largest if largest else 0.0
    return [round(value * scale) for value in vector]


def uint8_values(vector: Sequence[float]) -> list[int]:
    """Unsigned int8 quantization: the int8 values shifted by 128 (0..255)."""
    return [value + 128 for value in int8_values(vector)]


def packed_bits(vector: Sequence[float], signed: bool) -> list[int]:
    """One bit per dimension (1 where the value is positive), eight to a byte, most significant first;
    ``signed`` bytes are the unsigned ones minus 128 (Cohere's ``binary`` and ``ubinary``)."""
    packed = []
    for start in range(0, len(vector), 8):
        byte = 0
        for offset, value in enumerate(vector[start : start + 8]):
            if value > 0:
                byte |= 0x80 >> offset
        packed.append(byte - 128 if signed else byte)
    return packed


_Result = TypeVar("_Result")
_Input = TypeVar("_Input", bound=OperationInput)


def operation_input(request: NeutralRequest, kind: type[_Input]) -> _Input:
    """The request's typed input, of the kind the route's own parser built."""
    given = request.input if isinstance(request, OperationRequest) else None
    if not isinstance(given, kind):  # pragma: no cover - the route's parser built the request
        raise LlmtsError(f"the request is not the operation's ({kind.__name__})")
    return given


def operation_result(completion: Completion, kind: type[_Result]) -> _Result:
    """The completion's operation answer (vectors, verdicts, images...), of the kind admission already
    checked the route's operation answers with."""
    result = completion.output.result
    if not isinstance(result, kind):  # pragma: no cover - admission checks the kind
        raise LlmtsError(f"the answer is not the operation's ({kind.__name__})")
    return result
