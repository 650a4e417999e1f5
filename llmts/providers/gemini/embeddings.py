"""Gemini ``models/{model}:embedContent`` and ``:batchEmbedContents`` (docs/embeddings.md, "Gemini").

google-genai's ``client.models.embed_content`` always sends ``batchEmbedContents``: ``{"requests":
[{"model", "content": {"parts": [{"text"}]}, "taskType", "title", "outputDimensionality"}]}``, answered
``{"embeddings": [{"values": [...]}]}``; ``embedContent`` takes one such request and answers
``{"embedding": {"values": [...]}}``. A content's text parts are joined. Task types are checked (an
unknown one is Google's 400) and do not change the vectors, so query and document vectors of one text
compare as the same text. All requests of a batch must ask for the same ``outputDimensionality``
(llmts answers one dimension per call).
"""

from __future__ import annotations

from typing import Any

import orjson

from llmts.providers.base import ProviderCall, Reply
from llmts.providers.gemini.parse import camel_or_snake, invalid_argument
from llmts.providers.operations import bounded_texts, embeddings_request, operation_result
from llmts.providers.strict import StrictRule, Violation
from llmts.runtime.signatures import SignatureBook
from llmts.schema.neutral import Completion, NeutralRequest
from llmts.schema.operations.embeddings import EmbeddingsResult
from llmts.schema.wire_values import one_of

__all__ = [
    "EMBED_RULES",
    "parse_batch_embed",
    "parse_embed",
    "render_batch_embed",
    "render_embed",
]

TASK_TYPES = frozenset(
    {
        "TASK_TYPE_UNSPECIFIED",
        "RETRIEVAL_QUERY",
        "RETRIEVAL_DOCUMENT",
        "SEMANTIC_SIMILARITY",
        "CLASSIFICATION",
        "CLUSTERING",
        "QUESTION_ANSWERING",
        "FACT_VERIFICATION",
        "CODE_RETRIEVAL_QUERY",
    }
)
# Documented output sizes (https://ai.google.dev/gemini-api/docs/embeddings); also the largest
# ``outputDimensionality`` each accepts. Unknown models: gemini-embedding-001's.
_DIMENSIONS = {"gemini-embedding-001": 3072, "text-embedding-004": 768, "embedding-001": 768}
_DEFAULT_DIMENSIONS = 3072
_MAX_BATCH = 100


def _model_id(raw: str) -> str:
    return raw.removeprefix("models/")


def _text(request: Any, where: str) -> tuple[str, Any, Any]:
    """(the content's text, its task type, its output dimensionality)."""
    if not isinstance(request, dict):
        raise invalid_argument(f"{where} must be an object", where)
    content = request.get("content")
    if not isinstance(content, dict):
        raise invalid_argument(f"{where}.content is required", f"{where}.content")
    parts = content.get("parts")
    if not isinstance(parts, list):
        raise invalid_argument(f"{where}.content.parts must be a list", f"{where}.content.parts")
    texts = []
    for index, part in enumerate(parts):
        text = part.get("text") if isinstance(part, dict) else None
        if not isinstance(text, str):
            raise invalid_argument(
                f"{where}.content.parts[{index}] must be a text part (llmts embeds text)",
                f"{where}.content.parts[{index}]",
            )
        texts.append(text)
    task = camel_or_snake(request, "taskType", "task_type")
    if task is not None and not one_of(task, TASK_TYPES):
        raise invalid_argument(
            f"Invalid value at '{where}.task_type': expected one of " + ", ".join(sorted(TASK_TYPES)),
            f"{where}.taskType",
        )
    dimensions = camel_or_snake(request, "outputDimensionality", "output_dimensionality")
    if dimensions is not None and (not isinstance(dimensions, int) or isinstance(dimensions, bool)):
        raise invalid_argument(
            f"{where}.outputDimensionality must be an integer", f"{where}.outputDimensionality"
        )
    return " ".join(texts), task, dimensions


def _request(model: str, items: list[tuple[str, Any, Any]]) -> NeutralRequest:
    sizes = {dimensions for _, _, dimensions in items}
    if len(sizes) > 1:
        raise invalid_argument(
            "llmts answers one outputDimensionality per call; "
            "every request of the batch must ask for the same",
            "requests",
        )
    (dimensions,) = sizes or {None}
    texts = bounded_texts([text for text, _, _ in items], "requests")
    return embeddings_request(
        "gemini",
        model,
        texts,
        dimensions=dimensions,
        default_dimensions=_DIMENSIONS.get(model, _DEFAULT_DIMENSIONS),
        param="outputDimensionality",
    )


def parse_embed(call: ProviderCall) -> NeutralRequest:
    model = _model_id(call.request.args["model"])
    return _request(model, [_text(call.request.json_object(), "request")])


def parse_batch_embed(call: ProviderCall) -> NeutralRequest:
    model = _model_id(call.request.args["model"])
    requests = call.request.json_object().get("requests")
    if not isinstance(requests, list):
        raise invalid_argument("requests must be a list", "requests")
    return _request(model, [_text(request, f"requests[{i}]") for i, request in enumerate(requests)])


def _reply(call: ProviderCall, payload: dict[str, Any]) -> Reply:
    return Reply(
        200, [("Content-Type", "application/json"), ("x-request-id", call.request_id)], orjson.dumps(payload)
    )


def _usage(completion: Completion) -> dict[str, int]:
    tokens = completion.usage.input_tokens
    return {"promptTokenCount": tokens, "totalTokenCount": tokens}


def render_embed(call: ProviderCall, request: NeutralRequest, completion: Completion) -> Reply:
    (vector,) = operation_result(completion, EmbeddingsResult).vectors
    return _reply(call, {"embedding": {"values": vector}, "usageMetadata": _usage(completion)})


def render_batch_embed(call: ProviderCall, request: NeutralRequest, completion: Completion) -> Reply:
    embeddings = [{"values": vector} for vector in operation_result(completion, EmbeddingsResult).vectors]
    return _reply(call, {"embeddings": embeddings, "usageMetadata": _usage(completion)})


# --- strict request contract (llmts/providers/strict.py) -------------------------------------------------


def _requests(body: dict[str, Any]) -> list[dict[str, Any]]:
    raw = body.get("requests")
    if isinstance(raw, list):
        return [item for item in raw if isinstance(item, dict)]
    return [body] if "content" in body else []


def _empty(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    if isinstance(body.get("requests"), list) and not body["requests"]:
        return Violation("* BatchEmbedContentsRequest.requests: at least one request is required", "requests")
    for index, request in enumerate(_requests(body)):
        content = request.get("content")
        parts = content.get("parts") if isinstance(content, dict) else None
        if not parts or all(isinstance(p, dict) and p.get("text") == "" for p in parts):
            return Violation(
                f"* BatchEmbedContentsRequest.requests[{index}].content.parts: "
                "contents.parts must not be empty.",
                f"requests[{index}].content.parts",
            )
    return None


def _batch_size(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    count = len(_requests(body))
    if count > _MAX_BATCH:
        return Violation(
            f"* BatchEmbedContentsRequest.requests: at most {_MAX_BATCH} requests can be in one batch",
            "requests",
        )
    return None


def _dimensionality(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    for index, request in enumerate(_requests(body)):
        value = camel_or_snake(request, "outputDimensionality", "output_dimensionality")
        model = request.get("model")
        largest = _DIMENSIONS.get(_model_id(model), _DEFAULT_DIMENSIONS) if isinstance(model, str) else None
        if isinstance(value, int) and (value < 1 or (largest is not None and value > largest)):
            return Violation(
                f"* BatchEmbedContentsRequest.requests[{index}].output_dimensionality: "
                f"Output dimensionality must be between 1 and {largest}.",
                f"requests[{index}].outputDimensionality",
            )
    return None


_SOURCE = "https://ai.google.dev/api/embeddings"
EMBED_RULES: tuple[StrictRule, ...] = (
    StrictRule("embed_empty_content", _empty, "invalid_argument", _SOURCE),
    StrictRule("embed_batch_too_large", _batch_size, "invalid_argument", _SOURCE),
    StrictRule("embed_output_dimensionality", _dimensionality, "invalid_argument", _SOURCE),
)
