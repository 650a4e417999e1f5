"""``GET /v1/models`` (cursor pages), ``GET /v1/models/{id}`` and ``POST /v1/messages/count_tokens``."""

from __future__ import annotations

from typing import Any

from llmts.errors import InvalidRequest, ModelNotFound
from llmts.providers.anthropic.info import ANTHROPIC_INFO
from llmts.providers.anthropic_messages.parse import parse_prompt
from llmts.providers.base import ProviderCall, Reply, json_reply, load_json_object
from llmts.runtime.tokens import estimate_input_tokens

__all__ = ["count_tokens", "list_models", "model_not_found", "retrieve_model"]


# The API's default and largest page sizes.
_DEFAULT_LIMIT = 20
_MAX_LIMIT = 1000
# Release dates are unknown: the API documents the epoch for that case.
_CREATED_AT = "1970-01-01T00:00:00Z"


def _display_name(model_id: str) -> str:
    return " ".join(part.capitalize() for part in model_id.replace("_", "-").split("-") if part) or model_id


def _model(model_id: str) -> dict[str, Any]:
    return {
        "type": "model",
        "id": model_id,
        "display_name": _display_name(model_id),
        "created_at": _CREATED_AT,
        "lifecycle": "active",
    }


def model_not_found(model_id: str) -> ModelNotFound:
    # The API's wording for an unknown model.
    return ModelNotFound(f"model: {model_id}", param="model")


def _limit(call: ProviderCall) -> int:
    raw = call.request.query("limit")
    if raw is None:
        return _DEFAULT_LIMIT
    try:
        limit = int(raw)
    except ValueError:
        limit = 0
    if not 1 <= limit <= _MAX_LIMIT:
        raise InvalidRequest(
            f"limit: Input should be an integer from 1 to {_MAX_LIMIT}", code="invalid_value", param="limit"
        )
    return limit


def _cursor(ids: list[str], call: ProviderCall, name: str) -> int | None:
    value = call.request.query(name)
    if value is None:
        return None
    try:
        return ids.index(value)
    except ValueError:
        raise InvalidRequest(f"{name}: no model with id {value!r}", param=name) from None


def list_models(call: ProviderCall) -> Reply:
    ids = call.session.plan.model_ids(ANTHROPIC_INFO.listed_models)
    limit = _limit(call)
    after = _cursor(ids, call, "after_id")
    before = _cursor(ids, call, "before_id")
    if before is not None:  # the page that ends right before ``before_id``
        start = max(0, before - limit)
        page, has_more = ids[start:before], start > 0
    else:
        start = 0 if after is None else after + 1
        page, has_more = ids[start : start + limit], start + limit < len(ids)
    return json_reply(
        200,
        {
            "data": [_model(m) for m in page],
            "has_more": has_more,
            "first_id": page[0] if page else None,
            "last_id": page[-1] if page else None,
        },
        [("request-id", call.request_id)],
    )


def retrieve_model(call: ProviderCall) -> Reply:
    model_id = call.request.args["model"]
    if not call.session.plan.serves_model(model_id):
        raise model_not_found(model_id)
    return json_reply(200, _model(model_id), [("request-id", call.request_id)])


def count_tokens(call: ProviderCall) -> Reply:
    """The same estimate as a Messages request's total input; reads no state and changes none."""
    prompt = parse_prompt(load_json_object(call.request.body))
    if not call.session.plan.serves_model(prompt.model):
        raise model_not_found(prompt.model)
    tokens = estimate_input_tokens(prompt.messages, prompt.preamble)
    return json_reply(200, {"input_tokens": tokens}, [("request-id", call.request_id)])
