"""Ollama's model routes from the session's models: ``/api/tags``, ``/api/show``, ``/api/ps``,
``/api/version``, and the OpenAI-compatible ``/v1/models`` listing (docs/providers.md, "Ollama").

Every value is derived from the model name (digest, sizes) or fixed, so listings are deterministic.
"""

from __future__ import annotations

import hashlib
from typing import Any

from llmts.errors import InvalidRequest, ModelNotFound
from llmts.providers.base import ProviderCall, Reply, json_reply
from llmts.providers.ollama.info import OLLAMA_INFO

__all__ = [
    "OLLAMA_VERSION",
    "list_openai_models",
    "list_running",
    "list_tags",
    "model_not_found",
    "retrieve_openai_model",
    "show_model",
    "version",
]

# The Ollama server version llmts reports (``GET /api/version``).
OLLAMA_VERSION = "0.12.6"
_MODIFIED_AT = "2025-01-01T00:00:00Z"
_EXPIRES_AT = "2099-01-01T00:00:00Z"
_CAPABILITIES = ["completion", "tools", "thinking"]


def model_not_found(model: str) -> ModelNotFound:
    return ModelNotFound(f"model '{model}' not found")


def _digest(model: str) -> str:
    return hashlib.sha256(model.encode()).hexdigest()


def _size(model: str) -> int:
    return 1_000_000_000 + int(_digest(model)[:6], 16)


def _details() -> dict[str, Any]:
    return {
        "parent_model": "",
        "format": "gguf",
        "family": "llama",
        "families": ["llama"],
        "parameter_size": "8.0B",
        "quantization_level": "Q4_K_M",
    }


def _entry(model: str) -> dict[str, Any]:
    return {
        "name": model,
        "model": model,
        "modified_at": _MODIFIED_AT,
        "size": _size(model),
        "digest": _digest(model),
        "details": _details(),
    }


def list_tags(call: ProviderCall) -> Reply:
    return json_reply(
        200, {"models": [_entry(m) for m in call.session.plan.model_ids(OLLAMA_INFO.listed_models)]}
    )


def list_running(call: ProviderCall) -> Reply:
    models = [
        {**_entry(m), "expires_at": _EXPIRES_AT, "size_vram": _size(m), "context_length": 4096}
        for m in call.session.plan.model_ids(OLLAMA_INFO.listed_models)
    ]
    for model in models:
        del model["modified_at"]
    return json_reply(200, {"models": models})


def show_model(call: ProviderCall) -> Reply:
    body = call.request.json_object()
    model = body.get("model") or body.get("name")  # older clients send ``name``
    if not isinstance(model, str) or not model:
        raise InvalidRequest("model is required", code="invalid_request")
    if not call.session.plan.serves_model(model):
        raise model_not_found(model)
    return json_reply(
        200,
        {
            "modelfile": f"FROM {model}\n",
            "parameters": "",
            "template": "{{ .Prompt }}",
            "details": _details(),
            "model_info": {"general.architecture": "llama", "llama.context_length": 4096},
            "capabilities": _CAPABILITIES,
            "modified_at": _MODIFIED_AT,
        },
    )


def version(call: ProviderCall) -> Reply:
    return json_reply(200, {"version": OLLAMA_VERSION})


def _openai_model(model: str) -> dict[str, Any]:
    return {"id": model, "object": "model", "created": 0, "owned_by": "library"}


def list_openai_models(call: ProviderCall) -> Reply:
    return json_reply(
        200,
        {
            "object": "list",
            "data": [_openai_model(m) for m in call.session.plan.model_ids(OLLAMA_INFO.listed_models)],
        },
    )


def retrieve_openai_model(call: ProviderCall) -> Reply:
    model = call.request.args["model"]
    if not call.session.plan.serves_model(model):
        raise ModelNotFound(f"model '{model}' not found", param="model")
    return json_reply(200, _openai_model(model))
