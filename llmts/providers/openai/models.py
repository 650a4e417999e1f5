"""``GET /models`` and ``GET /models/{id}``: the models the session serves."""

from __future__ import annotations

from typing import Any

from llmts.errors import ModelNotFound
from llmts.providers.base import ProviderCall, Reply, json_reply
from llmts.providers.openai.info import OPENAI_INFO

__all__ = ["list_models", "retrieve_model"]


def _model(model_id: str) -> dict[str, Any]:
    return {"id": model_id, "object": "model", "created": 0, "owned_by": "llmts"}


def list_models(call: ProviderCall) -> Reply:
    return json_reply(
        200,
        {
            "object": "list",
            "data": [_model(m) for m in call.session.plan.model_ids(OPENAI_INFO.listed_models)],
        },
    )


def retrieve_model(call: ProviderCall) -> Reply:
    model_id = call.request.args["model"]
    if not call.session.plan.serves_model(model_id):
        raise ModelNotFound(
            f"The model `{model_id}` does not exist or you do not have access to it.", param="model"
        )
    return json_reply(200, _model(model_id))
