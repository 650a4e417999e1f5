"""The OpenAI ``POST /embeddings`` wire (OpenAI, Azure, and Ollama's OpenAI-compatible ``/ollama/v1``):
parse to an ``OperationRequest``, render the vectors as ``float`` lists or ``base64`` float32 (the OpenAI
SDK asks for ``base64`` unless told otherwise and decodes it). docs/embeddings.md, "OpenAI and Azure
OpenAI".

``input`` is a string, a list of strings, a token array or a list of token arrays (a token array is
embedded as the text of its numbers and counts one token per number). The model's default dimension
comes from the caller's ``dimensions_of`` (OpenAI's: ``DEFAULT_DIMENSIONS``, 1536 for a model llmts does
not know).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from llmts.errors import InvalidRequest
from llmts.providers.base import ProviderCall, Reply
from llmts.providers.operations import bounded_texts, embeddings_request, float32_base64, operation_result
from llmts.providers.strict import StrictRule, Violation
from llmts.runtime.signatures import SignatureBook
from llmts.schema.neutral import Completion, NeutralRequest
from llmts.schema.operations.embeddings import EmbeddingsResult

__all__ = [
    "DEFAULT_DIMENSIONS",
    "EMBEDDINGS",
    "EMBEDDINGS_RULES",
    "embeddings_payload",
    "openai_dimensions",
    "parse_embeddings",
    "render_embeddings",
]

EMBEDDINGS = "embeddings"
# The documented output sizes (https://platform.openai.com/docs/guides/embeddings): also the largest
# ``dimensions`` a text-embedding-3 model accepts.
DEFAULT_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
_UNKNOWN_MODEL_DIMENSIONS = 1536
_FORMATS = ("float", "base64")
_MAX_INPUT_TOKENS = 8192
_MAX_REQUEST_TOKENS = 300_000


def _bad(message: str, param: str, code: str = "invalid_value") -> InvalidRequest:
    return InvalidRequest(message, code=code, param=param)


def _token_array(value: list[Any]) -> bool:
    return all(isinstance(item, int) and not isinstance(item, bool) for item in value)


def _texts(raw: Any) -> tuple[str, ...]:
    """The inputs as texts: a string, strings, a token array or token arrays."""
    if isinstance(raw, str):
        return (raw,)
    if not isinstance(raw, list):
        raise _bad(
            "'input' must be a string, an array of strings or an array of token arrays",
            "input",
            "invalid_type",
        )
    if raw and _token_array(raw):
        raw = [raw]
    values: list[Any] = []
    for item in raw:
        if isinstance(item, list) and _token_array(item):
            values.append(" ".join(str(token) for token in item))
        else:
            values.append(item)
    return bounded_texts(values, "input")


def openai_dimensions(model: str) -> int:
    """The output size of an OpenAI embedding model (1536 for one llmts does not know)."""
    return DEFAULT_DIMENSIONS.get(model, _UNKNOWN_MODEL_DIMENSIONS)


def parse_embeddings(
    call: ProviderCall,
    provider: str,
    model: str | None = None,
    dimensions_of: Callable[[str], int] = openai_dimensions,
) -> NeutralRequest:
    """``model`` is the model an Azure deployment path names (None: the body's); ``dimensions_of`` gives
    a model's default size."""
    body = call.request.json_object()
    if model is None:
        model = body.get("model")
        if not isinstance(model, str) or not model:
            raise _bad("you must provide a model parameter", "model", "missing_required_parameter")
    if "input" not in body:
        raise _bad("'input' is a required property", "input", "missing_required_parameter")
    encoding = body.get("encoding_format", "float")
    if encoding is not None and (not isinstance(encoding, str) or encoding not in _FORMATS):
        raise _bad("'encoding_format' must be one of 'float' or 'base64'", "encoding_format")
    dimensions = body.get("dimensions")
    if dimensions is not None and (not isinstance(dimensions, int) or isinstance(dimensions, bool)):
        raise _bad("'dimensions' must be an integer", "dimensions", "invalid_type")
    return embeddings_request(
        provider,
        model,
        _texts(body["input"]),
        dimensions=dimensions,
        default_dimensions=dimensions_of(model),
    )


def embeddings_payload(request: NeutralRequest, completion: Completion, encoding: Any) -> dict[str, Any]:
    result = operation_result(completion, EmbeddingsResult)
    as_base64 = encoding == "base64"
    data = [
        {
            "object": "embedding",
            "index": index,
            "embedding": float32_base64(vector) if as_base64 else vector,
        }
        for index, vector in enumerate(result.vectors)
    ]
    tokens = completion.usage.input_tokens
    return {
        "object": "list",
        "data": data,
        "model": request.model,
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }


def render_embeddings(call: ProviderCall, request: NeutralRequest, completion: Completion) -> Reply:
    payload = embeddings_payload(request, completion, call.request.json_object().get("encoding_format"))
    headers = [("Content-Type", "application/json"), ("x-request-id", call.request_id)]
    return Reply(200, headers, orjson.dumps(payload))


# --- strict request contract (llmts/providers/strict.py) -------------------------------------------------


def _inputs(body: dict[str, Any]) -> list[Any]:
    raw = body.get("input")
    if isinstance(raw, str):
        return [raw]
    if isinstance(raw, list) and raw and _token_array(raw):
        return [raw]
    return raw if isinstance(raw, list) else []


def _empty_input(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    raw = body.get("input")
    if raw == [] or any(item in ("", []) for item in _inputs(body)):
        return Violation(
            "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.",
            "input",
        )
    return None


def _input_tokens(item: Any) -> int:
    return len(item) if isinstance(item, list) else (len(item) + 3) // 4 if isinstance(item, str) else 0


def _too_many_tokens(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    counts = [_input_tokens(item) for item in _inputs(body)]
    for count in counts:
        if count > _MAX_INPUT_TOKENS:
            return Violation(
                f"This model's maximum context length is {_MAX_INPUT_TOKENS} tokens, however you requested "
                f"{count} tokens. Please reduce your prompt.",
                "input",
            )
    if sum(counts) > _MAX_REQUEST_TOKENS:
        return Violation(
            f"Requested {sum(counts)} tokens, max {_MAX_REQUEST_TOKENS} tokens per request", "input"
        )
    return None


def _dimensions(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    dimensions = body.get("dimensions")
    if dimensions is None:
        return None
    model = body.get("model")
    if model == "text-embedding-ada-002":
        return Violation("This model does not support specifying dimensions.", "dimensions")
    largest = DEFAULT_DIMENSIONS.get(model) if isinstance(model, str) else None
    if isinstance(dimensions, int) and (dimensions < 1 or (largest is not None and dimensions > largest)):
        return Violation(
            f"Invalid value for 'dimensions' = {dimensions}. "
            f"Must be between 1 and {largest or 'the model size'}.",
            "dimensions",
        )
    return None


_SOURCE = "https://platform.openai.com/docs/api-reference/embeddings/create"
EMBEDDINGS_RULES: tuple[StrictRule, ...] = (
    StrictRule("embeddings_empty_input", _empty_input, "invalid_value", _SOURCE),
    StrictRule("embeddings_input_too_long", _too_many_tokens, "invalid_value", _SOURCE),
    StrictRule("embeddings_dimensions", _dimensions, "invalid_value", _SOURCE),
)
