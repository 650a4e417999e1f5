"""``GET /v1/models`` (``page_size`` / ``page_token`` pages) and ``GET /v1/models/{model}``."""

from __future__ import annotations

from typing import Any

from llmts.errors import InvalidRequest, ModelNotFound
from llmts.providers.base import ProviderCall, Reply, json_reply
from llmts.providers.cohere.info import COHERE_INFO

__all__ = ["get_model", "list_models", "model_not_found"]

# The API's default and largest page sizes.
_DEFAULT_PAGE = 20
_MAX_PAGE = 1000
_CONTEXT_LENGTH = 128000


def _model(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "is_deprecated": False,
        "endpoints": ["chat"],
        "finetuned": False,
        "context_length": _CONTEXT_LENGTH,
        "default_endpoints": [],
        "features": ["tools", "json_mode", "json_schema"],
    }


def model_not_found(model: str) -> ModelNotFound:
    # The API's wording for an unknown model.
    return ModelNotFound(
        f"model '{model}' not found, make sure the correct model ID was used "
        "and that you have access to the model.",
        param="model",
    )


def _page_size(call: ProviderCall) -> int:
    raw = call.request.query("page_size")
    if raw is None:
        return _DEFAULT_PAGE
    size = int(raw) if raw.isdigit() else 0
    if not 1 <= size <= _MAX_PAGE:
        raise InvalidRequest(f"page_size: must be an integer from 1 to {_MAX_PAGE}", param="page_size")
    return size


def list_models(call: ProviderCall) -> Reply:
    """Every served model offers ``chat``: ``?endpoint=chat`` keeps all, other endpoints list none."""
    endpoint = call.request.query("endpoint")
    ids = call.session.plan.model_ids(COHERE_INFO.listed_models) if endpoint in (None, "chat") else []
    size = _page_size(call)
    token = call.request.query("page_token")
    start = int(token) if token is not None and token.isdigit() else 0
    page = ids[start : start + size]
    after = start + size
    payload = {
        "models": [_model(m) for m in page],
        "next_page_token": str(after) if after < len(ids) else None,
    }
    return json_reply(200, payload, [("x-request-id", call.request_id)])


def get_model(call: ProviderCall) -> Reply:
    model = call.request.args["model"]
    if not call.session.plan.serves_model(model):
        raise model_not_found(model)
    return json_reply(200, _model(model), [("x-request-id", call.request_id)])
