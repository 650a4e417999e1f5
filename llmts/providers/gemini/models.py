"""``GET models`` (paged by ``pageSize``/``pageToken``), ``GET models/{model}`` and ``:countTokens``."""

from __future__ import annotations

from typing import Any

from llmts.errors import InvalidRequest, MethodNotAllowed, ModelNotFound, RouteNotFound
from llmts.providers.base import ProviderCall, Reply, json_reply, load_json_object
from llmts.providers.gemini.info import GEMINI_INFO
from llmts.providers.gemini.parse import GENERATE, parse_body
from llmts.runtime.admission import input_tokens

__all__ = ["count_tokens", "get_model", "list_models", "unknown_method"]


_METHODS = ("generateContent", "streamGenerateContent", "countTokens")
_MAX_PAGE = 1000


def _model(model_id: str) -> dict[str, Any]:
    return {
        "name": "models/" + model_id,
        "version": "001",
        "displayName": model_id,
        "description": "A scripted llmts model",
        "inputTokenLimit": 1048576,
        "outputTokenLimit": 65536,
        "supportedGenerationMethods": ["generateContent", "countTokens"],
    }


def _not_found(call: ProviderCall, model_id: str, method: str) -> ModelNotFound:
    version = call.request.args.get("version", "v1beta")
    return ModelNotFound(
        f"models/{model_id} is not found for API version {version}, or is not supported for {method}. "
        "Call ListModels to see the list of available models and their supported methods.",
        param="model",
    )


def _int_query(call: ProviderCall, name: str, default: int) -> int:
    raw = call.request.query(name)
    if raw is None or raw == "":
        return default
    if not raw.isdigit():
        raise InvalidRequest(f"{name} must be a non-negative integer", code="invalid_argument", param=name)
    return int(raw)


def list_models(call: ProviderCall) -> Reply:
    models = call.session.plan.model_ids(GEMINI_INFO.listed_models)
    size = _int_query(call, "pageSize", 50) or 50
    start = _int_query(call, "pageToken", 0)
    page = models[start : start + min(size, _MAX_PAGE)]
    payload: dict[str, Any] = {"models": [_model(model_id) for model_id in page]}
    if start + len(page) < len(models):
        payload["nextPageToken"] = str(start + len(page))  # omitted on the last page: the pager stops
    return json_reply(200, payload)


def get_model(call: ProviderCall) -> Reply:
    model_id = call.request.args["model"]
    name, _, method = model_id.rpartition(":")
    if name and method in _METHODS:
        raise MethodNotAllowed(f"GET is not allowed on models/{model_id}; use POST")
    if not call.session.plan.serves_model(model_id):
        raise _not_found(call, model_id, "get")
    return json_reply(200, _model(model_id))


def unknown_method(call: ProviderCall) -> Reply:
    raise RouteNotFound(f"llmts has no Gemini method POST models/{call.request.args['model']}")


def count_tokens(call: ProviderCall) -> Reply:
    """``{"contents": [...]}`` or ``{"generateContentRequest": {...}}``: the same estimate as
    ``usageMetadata.promptTokenCount`` of that request, without consuming a scripted answer."""
    model_id = call.request.args["model"]
    if not call.session.plan.serves_model(model_id):
        raise _not_found(call, model_id, "countTokens")
    body = load_json_object(call.request.body)
    wrapped = body.get("generateContentRequest")
    if wrapped is not None:
        if body.get("contents") is not None:
            raise InvalidRequest(
                "contents and generateContentRequest are mutually exclusive",
                code="invalid_argument",
                param="generateContentRequest",
            )
        if not isinstance(wrapped, dict):
            raise InvalidRequest(
                "generateContentRequest must be an object",
                code="invalid_argument",
                param="generateContentRequest",
            )
        body = wrapped
    request = parse_body(body, model_id, GENERATE)
    total = input_tokens(request)
    return json_reply(
        200, {"totalTokens": total, "promptTokensDetails": [{"modality": "TEXT", "tokenCount": total}]}
    )
