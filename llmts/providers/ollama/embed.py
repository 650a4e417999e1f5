"""Ollama ``POST /api/embed`` and the legacy ``POST /api/embeddings`` (docs/embeddings.md, "Ollama").

``/api/embed`` takes ``input`` (a string or strings) and an optional ``dimensions`` and answers
``{"model", "embeddings", "total_duration", "load_duration", "prompt_eval_count"}``; ``/api/embeddings``
(``client.embeddings``) takes one ``prompt`` and answers ``{"embedding"}``. Both answer unit vectors of
the model's size (a ``:tag`` is ignored), durations derived from the token count as in chat. The
OpenAI-compatible ``/ollama/v1/embeddings`` speaks the shared OpenAI wire with these sizes.
"""

from __future__ import annotations

from typing import Any

import orjson

from llmts.errors import InvalidRequest
from llmts.providers.base import ProviderCall, Reply
from llmts.providers.operations import bounded_texts, embeddings_request, operation_result
from llmts.schema.neutral import Completion, NeutralRequest
from llmts.schema.operations.embeddings import EmbeddingsResult

__all__ = [
    "model_dimensions",
    "parse_embed",
    "parse_legacy_embeddings",
    "render_embed",
    "render_legacy_embeddings",
]

# Sizes of popular embedding models in the Ollama library; unknown models: nomic-embed-text's.
_DIMENSIONS = {
    "nomic-embed-text": 768,
    "mxbai-embed-large": 1024,
    "all-minilm": 384,
    "snowflake-arctic-embed": 1024,
    "bge-m3": 1024,
    "embeddinggemma": 768,
    "qwen3-embedding": 4096,
}
_DEFAULT_DIMENSIONS = 768
_LOAD_NS = 1_000_000
_NS_PER_TOKEN = 100_000


def _bad(message: str) -> InvalidRequest:
    return InvalidRequest(message, code="invalid_request")


def _model(body: dict[str, Any]) -> str:
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _bad("model is required")
    return model


def model_dimensions(model: str) -> int:
    """The output size of an Ollama embedding model (its ``:tag`` ignored)."""
    return _DIMENSIONS.get(model.partition(":")[0], _DEFAULT_DIMENSIONS)


def _request(model: str, texts: tuple[str, ...], dimensions: Any) -> NeutralRequest:
    if dimensions is not None and (not isinstance(dimensions, int) or isinstance(dimensions, bool)):
        raise _bad("dimensions must be an integer")
    return embeddings_request(
        "ollama",
        model,
        texts,
        dimensions=dimensions,
        default_dimensions=model_dimensions(model),
    )


def parse_embed(call: ProviderCall) -> NeutralRequest:
    body = call.request.json_object()
    model = _model(body)
    raw = body.get("input", "")
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list):
        raise _bad("input must be a string or a list of strings")
    return _request(model, bounded_texts(raw, "input", code="invalid_request"), body.get("dimensions"))


def parse_legacy_embeddings(call: ProviderCall) -> NeutralRequest:
    body = call.request.json_object()
    model = _model(body)
    prompt = body.get("prompt", "")
    if not isinstance(prompt, str):
        raise _bad("prompt must be a string")
    return _request(model, bounded_texts([prompt], "prompt", code="invalid_request"), None)


def _reply(call: ProviderCall, payload: dict[str, Any]) -> Reply:
    return Reply(200, [("Content-Type", "application/json; charset=utf-8")], orjson.dumps(payload))


def render_embed(call: ProviderCall, request: NeutralRequest, completion: Completion) -> Reply:
    tokens = completion.usage.input_tokens
    payload = {
        "model": request.model,
        "embeddings": operation_result(completion, EmbeddingsResult).vectors,
        "total_duration": _LOAD_NS + tokens * _NS_PER_TOKEN,
        "load_duration": _LOAD_NS,
        "prompt_eval_count": tokens,
    }
    return _reply(call, payload)


def render_legacy_embeddings(call: ProviderCall, request: NeutralRequest, completion: Completion) -> Reply:
    vectors = operation_result(completion, EmbeddingsResult).vectors
    return _reply(call, {"embedding": vectors[0] if vectors else []})
