"""InvokeModel for embedding and rerank models (docs/embeddings.md, "AWS Bedrock", and the first
table of docs/rerank.md).

The path's model id picks the body (a region prefix such as ``us.`` is ignored):

* ``amazon.titan-embed-text-v1``: ``{"inputText"}`` -> ``{"embedding", "inputTextTokenCount"}`` (1536
  values);
* ``amazon.titan-embed-text-v2:0``: also ``dimensions`` (256, 512 or 1024, the default), ``normalize``
  and ``embeddingTypes`` (``float``, ``binary``: one 0/1 per dimension) -> also ``embeddingsByType``;
* ``cohere.embed-*``: the Cohere embed body (``texts``/``images``, ``input_type``, ``embedding_types``,
  parsed by the shared Cohere wire ``llmts/providers/cohere_retrieval/``) -> ``embeddings_floats`` (a
  list of vectors) without ``embedding_types``, else ``embeddings_by_type``;
* ``cohere.rerank-*`` and ``amazon.rerank-*``: ``{"query", "documents", "top_n"}`` -> ``{"id", "results"}``.

Vectors are unit length whatever ``normalize`` says. Streaming these models is Bedrock's 400.
"""

from __future__ import annotations

from typing import Any

import orjson

from llmts.errors import InvalidRequest
from llmts.providers.base import ProviderCall, Reply
from llmts.providers.bedrock.render import LATENCY_MS
from llmts.providers.cohere_retrieval.embed import embed_request, embedding_types, encode_vectors
from llmts.providers.cohere_retrieval.rerank import rerank_request, rerank_results
from llmts.providers.operations import bounded_texts, embeddings_request, operation_result
from llmts.schema.neutral import Completion, NeutralRequest
from llmts.schema.operations.embeddings import EmbeddingsResult

__all__ = ["operation_of_model", "parse_model_invoke", "render_model_invoke"]

_TITAN_V1 = "amazon.titan-embed-text-v1"
_TITAN_V2 = "amazon.titan-embed-text-v2"
_TITAN_DIMENSIONS = (256, 512, 1024)
_TITAN_TYPES = ("float", "binary")


# Cross-region inference profile prefixes Bedrock puts before a model id (``us.``, ``apac.``, ``global.``).
_PROFILE_PREFIXES = frozenset({"us", "eu", "apac", "global", "us-gov", "ca", "jp", "au"})


def _base_id(model: str) -> str:
    """The model id alone: the part after an ARN's last ``/``, without an inference-profile prefix."""
    model = model.rpartition("/")[2]
    head, _, rest = model.partition(".")
    return rest if rest and (head in _PROFILE_PREFIXES or len(head) == 2) else model


def operation_of_model(model: str) -> str | None:
    """``embeddings`` or ``rerank`` for the models this module serves, else None (a chat model)."""
    base = _base_id(model)
    if base.startswith(("amazon.titan-embed-text", "cohere.embed")):
        return "embeddings"
    if base.startswith(("cohere.rerank", "amazon.rerank")):
        return "rerank"
    return None


def _bad(message: str) -> InvalidRequest:
    return InvalidRequest(f"Malformed input request: {message}, please reformat your input and try again.")


def _titan(body: dict[str, Any], model: str) -> NeutralRequest:
    text = body.get("inputText")
    if not isinstance(text, str):
        raise _bad("#: required key [inputText] not found")
    v2 = _base_id(model).startswith(_TITAN_V2)
    dimensions = body.get("dimensions")
    if dimensions is not None and (not v2 or dimensions not in _TITAN_DIMENSIONS):
        raise _bad(
            "#/dimensions: "
            + ("extraneous key [dimensions] is not permitted" if not v2 else "256, 512 or 1024")
        )
    for key, kinds in (("embeddingTypes", _TITAN_TYPES),):
        raw = body.get(key)
        if raw is not None and (not v2 or not isinstance(raw, list) or not all(k in kinds for k in raw)):
            raise _bad(f"#/{key}: expected a list of float, binary")
    if "normalize" in body and (not v2 or not isinstance(body["normalize"], bool)):
        raise _bad("#/normalize: expected type: Boolean")
    return embeddings_request(
        "bedrock",
        model,
        bounded_texts([text], "inputText", code="invalid_request"),
        dimensions=dimensions,
        default_dimensions=1024 if v2 else 1536,
    )


def parse_model_invoke(body: dict[str, Any], model: str, operation: str) -> NeutralRequest:
    base = _base_id(model)
    if operation == "rerank":
        documents = body.get("documents")
        if isinstance(documents, list):  # amazon.rerank also takes {"type": "TEXT", "text": ...} sources
            body = {**body, "documents": [_rerank_text(document) for document in documents]}
        return rerank_request(body, "bedrock", model)
    if base.startswith("cohere.embed"):
        return embed_request(body, "bedrock", model, 1536 if base.startswith("cohere.embed-v4") else 1024)
    return _titan(body, model)


def _rerank_text(document: Any) -> Any:
    if isinstance(document, dict) and isinstance(document.get("textDocument"), dict):
        return document["textDocument"].get("text")
    return document


def _payload(body: dict[str, Any], request: NeutralRequest, completion: Completion) -> dict[str, Any]:
    base = _base_id(request.model)
    if request.operation == "rerank":
        return {"id": completion.response_id, "results": rerank_results(request, completion, False)}
    result = operation_result(completion, EmbeddingsResult)
    if base.startswith("cohere.embed"):
        texts = body.get("texts")
        common = {"id": completion.response_id, "texts": texts if isinstance(texts, list) else []}
        if body.get("embedding_types") is None:
            return {**common, "embeddings": result.vectors, "response_type": "embeddings_floats"}
        encoded = encode_vectors(embedding_types(body), completion)
        return {**common, "embeddings": encoded, "response_type": "embeddings_by_type"}
    (vector,) = result.vectors
    payload: dict[str, Any] = {"embedding": vector, "inputTextTokenCount": completion.usage.input_tokens}
    kinds = body.get("embeddingTypes")
    if base.startswith(_TITAN_V2):
        by_type: dict[str, Any] = {"float": vector}
        if isinstance(kinds, list) and "binary" in kinds:
            by_type = {"binary": [1 if value > 0 else 0 for value in vector]}
            if "float" in kinds:
                by_type["float"] = vector
        payload["embeddingsByType"] = by_type
    return payload


def render_model_invoke(call: ProviderCall, request: NeutralRequest, completion: Completion) -> Reply:
    payload = _payload(call.request.json_object(), request, completion)
    headers = [
        ("Content-Type", "application/json"),
        ("x-amzn-RequestId", call.request_id),
        ("X-Amzn-Bedrock-Invocation-Latency", str(LATENCY_MS)),
        ("X-Amzn-Bedrock-Input-Token-Count", str(completion.usage.input_tokens)),
    ]
    return Reply(200, headers, orjson.dumps(payload))
