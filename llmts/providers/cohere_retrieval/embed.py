"""Cohere ``POST /v2/embed`` (docs/embeddings.md, "Cohere"): ``texts``, ``images`` (data URIs) or
``inputs`` (content lists of text and image parts) with ``input_type``, answered as
``embeddings_by_type`` in every requested ``embedding_types`` (``float`` when none is asked for):
``int8``/``uint8`` scale each vector so its largest magnitude is 127, ``binary``/``ubinary`` pack one bit
per dimension (positive values), ``base64`` is the float32 bytes. An image is embedded from its data URI's
text, so the same image gives the same vector. Bedrock's ``cohere.embed-*`` models take this body too
(``embed_request``, ``embedding_types``, ``encode_vectors``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import orjson

from llmts.errors import InvalidRequest
from llmts.providers.base import ProviderCall, Reply
from llmts.providers.operations import (
    bounded_texts,
    embeddings_request,
    float32_base64,
    int8_values,
    operation_result,
    packed_bits,
    uint8_values,
)
from llmts.providers.strict import StrictRule, Violation
from llmts.runtime.signatures import SignatureBook
from llmts.schema.neutral import Completion, NeutralRequest
from llmts.schema.operations.embeddings import EmbeddingsResult
from llmts.schema.wire_values import one_of

__all__ = [
    "EMBED_RULES",
    "embed_payload",
    "embed_request",
    "embedding_types",
    "encode_vectors",
    "parse_embed",
    "render_embed",
]

INPUT_TYPES = frozenset({"search_document", "search_query", "classification", "clustering", "image"})
# Documented output sizes (https://docs.cohere.com/docs/cohere-embed); unknown models: embed-v4.0's.
_DIMENSIONS = {
    "embed-v4.0": 1536,
    "embed-english-v3.0": 1024,
    "embed-multilingual-v3.0": 1024,
    "embed-english-light-v3.0": 384,
    "embed-multilingual-light-v3.0": 384,
}
_DEFAULT_DIMENSIONS = 1536
# embed-v4.0's choices of output_dimension.
_OUTPUT_DIMENSIONS = (256, 512, 1024, 1536)
_MAX_INPUTS = 96

_ENCODERS: dict[str, Callable[[Sequence[float]], Any]] = {
    "float": list,
    "int8": int8_values,
    "uint8": uint8_values,
    "binary": lambda vector: packed_bits(vector, signed=True),
    "ubinary": lambda vector: packed_bits(vector, signed=False),
    "base64": float32_base64,
}


def _bad(message: str, param: str) -> InvalidRequest:
    return InvalidRequest(f"invalid request: {message}", code="invalid_request", param=param)


def _content_text(content: Any, where: str) -> str:
    if not isinstance(content, list):
        raise _bad(f"{where}.content must be a list", f"{where}.content")
    texts = []
    for index, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "image_url" and isinstance(part.get("image_url"), dict):
            url = part["image_url"].get("url")
            if not isinstance(url, str):
                raise _bad(f"{where}.content[{index}].image_url.url must be a string", f"{where}.content")
            texts.append(url)
        else:
            raise _bad(f"{where}.content[{index}] must be a text or image_url part", f"{where}.content")
    return " ".join(texts)


def _inputs(body: dict[str, Any]) -> tuple[str, ...]:
    for key in ("texts", "images", "inputs"):
        raw = body.get(key)
        if raw is None:
            continue
        if not isinstance(raw, list):
            raise _bad(f"{key} must be a list", key)
        if key == "inputs":
            raw = [
                _content_text(item.get("content") if isinstance(item, dict) else None, f"inputs[{i}]")
                for i, item in enumerate(raw)
            ]
        return bounded_texts(raw, key, code="invalid_request")
    raise _bad("one of texts, images or inputs must be provided", "texts")


def embedding_types(body: dict[str, Any]) -> list[str]:
    """The requested types, checked (``float`` when none is given)."""
    raw = body.get("embedding_types")
    if raw is None:
        return ["float"]
    if not isinstance(raw, list) or not raw:
        raise _bad("embedding_types must be a non-empty list", "embedding_types")
    for kind in raw:
        if not one_of(kind, _ENCODERS):
            raise _bad(
                f"embedding_types must be one of {', '.join(_ENCODERS)}, not {kind!r}", "embedding_types"
            )
    return list(dict.fromkeys(raw))


def embed_request(
    body: dict[str, Any], provider: str, model: str, default_dimensions: int | None = None
) -> NeutralRequest:
    """The Cohere embed body (v2, and Bedrock's) as a neutral request (``default_dimensions``: the
    model's size when the model id is not Cohere's own)."""
    input_type = body.get("input_type")
    if input_type is not None and not one_of(input_type, INPUT_TYPES):
        raise _bad(f"input_type must be one of {', '.join(sorted(INPUT_TYPES))}", "input_type")
    embedding_types(body)
    dimensions = body.get("output_dimension")
    if dimensions is not None and (not isinstance(dimensions, int) or isinstance(dimensions, bool)):
        raise _bad("output_dimension must be an integer", "output_dimension")
    return embeddings_request(
        provider,
        model,
        _inputs(body),
        dimensions=dimensions,
        default_dimensions=default_dimensions or _DIMENSIONS.get(model, _DEFAULT_DIMENSIONS),
        param="output_dimension",
    )


def parse_embed(call: ProviderCall, *, provider: str) -> NeutralRequest:
    """A ``/v2/embed`` request of the route's ``provider`` namespace."""
    body = call.request.json_object()
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _bad("model is required", "model")
    return embed_request(body, provider, model)


def encode_vectors(kinds: list[str], completion: Completion) -> dict[str, list[Any]]:
    """The completion's vectors in each of ``kinds`` (checked by ``embedding_types``)."""
    result = operation_result(completion, EmbeddingsResult)
    return {kind: [_ENCODERS[kind](vector) for vector in result.vectors] for kind in kinds}


def embed_payload(body: dict[str, Any], completion: Completion, request: NeutralRequest) -> dict[str, Any]:
    """``embeddings_by_type``: every requested type, the texts, and the billed tokens."""
    embeddings = encode_vectors(embedding_types(body), completion)
    texts = body.get("texts")
    payload: dict[str, Any] = {
        "id": completion.response_id,
        "embeddings": embeddings,
        "texts": texts if isinstance(texts, list) else [],
        "meta": {
            "api_version": {"version": "2"},
            "billed_units": {"input_tokens": completion.usage.input_tokens},
        },
        "response_type": "embeddings_by_type",
    }
    return payload


def render_embed(call: ProviderCall, request: NeutralRequest, completion: Completion) -> Reply:
    payload = embed_payload(call.request.json_object(), completion, request)
    return Reply(
        200, [("Content-Type", "application/json"), ("x-request-id", call.request_id)], orjson.dumps(payload)
    )


# --- strict request contract (llmts/providers/strict.py) -------------------------------------------------


def _count(body: dict[str, Any]) -> tuple[str, int] | None:
    for key in ("texts", "images", "inputs"):
        raw = body.get(key)
        if isinstance(raw, list):
            return key, len(raw)
    return None


def _input_type_required(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    if body.get("input_type") is None:
        return Violation(
            "invalid request: valid input_type must be provided with the provided model", "input_type"
        )
    return None


def _empty(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    found = _count(body)
    if found is not None and found[1] == 0:
        return Violation(f"invalid request: {found[0]} must not be empty", found[0])
    texts = body.get("texts")
    if isinstance(texts, list) and any(text == "" for text in texts):
        return Violation("invalid request: texts must not contain empty strings", "texts")
    return None


def _too_many(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    found = _count(body)
    if found is not None and found[1] > _MAX_INPUTS:
        return Violation(
            f"invalid request: {found[0]} must have at most {_MAX_INPUTS} elements, got {found[1]}", found[0]
        )
    return None


def _output_dimension(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    value = body.get("output_dimension")
    if value is None:
        return None
    model = body.get("model")
    if isinstance(model, str) and model in _DIMENSIONS and not model.startswith("embed-v4"):
        return Violation(
            f"invalid request: output_dimension is not supported for model {model}", "output_dimension"
        )
    if value not in _OUTPUT_DIMENSIONS:
        return Violation(
            "invalid request: output_dimension must be one of " + ", ".join(map(str, _OUTPUT_DIMENSIONS)),
            "output_dimension",
        )
    return None


_SOURCE = "https://docs.cohere.com/reference/embed"
EMBED_RULES: tuple[StrictRule, ...] = (
    StrictRule("embed_input_type_required", _input_type_required, "invalid_request", _SOURCE),
    StrictRule("embed_empty_input", _empty, "invalid_request", _SOURCE),
    StrictRule("embed_too_many_inputs", _too_many, "invalid_request", _SOURCE),
    StrictRule("embed_output_dimension", _output_dimension, "invalid_request", _SOURCE),
)
