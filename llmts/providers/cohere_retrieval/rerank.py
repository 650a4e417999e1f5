"""Cohere ``POST /v2/rerank`` (and the v1 client's ``/v1/rerank``), docs/rerank.md.

The request's ``documents`` (strings; v1 also ``{"text": ...}`` objects) are ranked against ``query``:
by a ``rerank`` fixture, else by the words they share with the query. ``top_n`` keeps the first n results
(of a fixture's too); ``return_documents: true`` (a v1 parameter, accepted on both) adds each result's
``document: {"text"}``. ``meta.billed_units.search_units`` counts one unit per 100 documents, as Cohere
bills. Bedrock's ``cohere.rerank-*`` model takes this body too (``rerank_request``, ``rerank_results``).
"""

from __future__ import annotations

from typing import Any

import orjson

from llmts.errors import InvalidRequest
from llmts.providers.base import ProviderCall, Reply
from llmts.providers.operations import bounded_texts, operation_input, operation_request, operation_result
from llmts.providers.strict import StrictRule, Violation
from llmts.runtime.operations.rerank import RerankInput
from llmts.runtime.signatures import SignatureBook
from llmts.schema.neutral import Completion, NeutralRequest
from llmts.schema.operations.rerank import RerankResult

__all__ = ["RERANK_RULES", "parse_rerank", "render_rerank", "rerank_request", "rerank_results"]

RERANK = "rerank"
_MAX_DOCUMENTS = 1000


def _bad(message: str, param: str) -> InvalidRequest:
    return InvalidRequest(f"invalid request: {message}", code="invalid_request", param=param)


def _document_text(document: Any, index: int) -> Any:
    if isinstance(document, dict):
        text = document.get("text")
        if not isinstance(text, str):
            raise _bad(f"documents[{index}] must be a string or an object with a text", "documents")
        return text
    return document


def rerank_request(body: dict[str, Any], provider: str, model: str) -> NeutralRequest:
    query = body.get("query")
    if not isinstance(query, str):
        raise _bad("query must be a string", "query")
    documents = body.get("documents")
    if not isinstance(documents, list):
        raise _bad("documents must be a list", "documents")
    texts = bounded_texts(
        [_document_text(document, i) for i, document in enumerate(documents)],
        "documents",
        code="invalid_request",
    )
    top_n = body.get("top_n")
    if top_n is not None and (not isinstance(top_n, int) or isinstance(top_n, bool)):
        raise _bad("top_n must be an integer", "top_n")
    return operation_request(provider, RERANK, model, RerankInput(query, texts, top_n))


def parse_rerank(call: ProviderCall, *, provider: str) -> NeutralRequest:
    """A ``/v2/rerank`` or ``/v1/rerank`` request of the route's ``provider`` namespace."""
    body = call.request.json_object()
    model = body.get("model")
    if model is None and call.request.path.endswith("/v1/rerank"):
        model = "rerank-english-v3.0"  # the v1 API's default model
    if not isinstance(model, str) or not model:
        raise _bad("model is required", "model")
    return rerank_request(body, provider, model)


def rerank_results(request: NeutralRequest, completion: Completion, documents: bool) -> list[dict[str, Any]]:
    """The ranked results, cut to ``top_n``, each with its document when asked for."""
    result = operation_result(completion, RerankResult)
    asked = operation_input(request, RerankInput)
    hits = result.hits if asked.top_n is None else result.hits[: max(asked.top_n, 0)]
    results: list[dict[str, Any]] = []
    for index, score in hits:
        item: dict[str, Any] = {"index": index, "relevance_score": score}
        if documents:
            item["document"] = {"text": asked.documents[index]}
        results.append(item)
    return results


def render_rerank(call: ProviderCall, request: NeutralRequest, completion: Completion) -> Reply:
    body = call.request.json_object()
    count = len(operation_input(request, RerankInput).documents)
    payload = {
        "id": completion.response_id,
        "results": rerank_results(request, completion, body.get("return_documents") is True),
        "meta": {
            "api_version": {"version": "2" if "/v2/" in call.request.path else "1"},
            "billed_units": {"search_units": max(1, (count + 99) // 100)},
        },
    }
    return Reply(
        200, [("Content-Type", "application/json"), ("x-request-id", call.request_id)], orjson.dumps(payload)
    )


# --- strict request contract (llmts/providers/strict.py) -------------------------------------------------


def _empty(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    if body.get("query") == "":
        return Violation("invalid request: query must not be empty", "query")
    if body.get("documents") == []:
        return Violation("invalid request: documents must not be empty", "documents")
    return None


def _too_many(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    documents = body.get("documents")
    if isinstance(documents, list) and len(documents) > _MAX_DOCUMENTS:
        return Violation(
            f"invalid request: documents must have at most {_MAX_DOCUMENTS} elements, got {len(documents)}",
            "documents",
        )
    return None


def _top_n(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    top_n = body.get("top_n")
    if isinstance(top_n, int) and top_n < 1:
        return Violation("invalid request: top_n must be at least 1", "top_n")
    return None


_SOURCE = "https://docs.cohere.com/reference/rerank"
RERANK_RULES: tuple[StrictRule, ...] = (
    StrictRule("rerank_empty_input", _empty, "invalid_request", _SOURCE),
    StrictRule("rerank_too_many_documents", _too_many, "invalid_request", _SOURCE),
    StrictRule("rerank_top_n", _top_n, "invalid_request", _SOURCE),
)
