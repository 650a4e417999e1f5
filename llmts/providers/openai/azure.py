"""The ``azure-openai`` namespace: the OpenAI wire (chat + Responses) under Azure's routes
(docs/providers.md).

* ``AzureOpenAI(azure_endpoint=f"{base}/azure-openai", api_version=...)`` sends chat to
  ``/openai/deployments/{deployment}/chat/completions?api-version=`` and Responses/models to
  ``/openai/responses``, ``/openai/models`` (no deployment segment); auth ``api-key: <key>``.
* ``OpenAI(base_url=f"{base}/azure-openai/openai/v1")`` sends ``/openai/v1/...`` with ``Authorization:
  Bearer``; ``AzureOpenAI(base_url=".../openai/v1")`` inserts ``/deployments/{model}`` there too.

A deployment in the path maps to its model through the session's ``azure_deployments`` (unknown -> 404
``DeploymentNotFound``); a body ``model`` on the other routes may be a deployment name or a served model id.
``api-version`` is accepted with any value, and also when missing (curl users). Neutral requests say
provider ``azure-openai``, so scenarios can target Azure alone. Responses are stored apart from OpenAI's.
The Realtime WebSocket routes (``/openai/realtime``, ``/openai/v1/realtime``) are in ``realtime/routes.py``.
"""

from __future__ import annotations

from typing import Any

import orjson

from llmts.errors import InvalidRequest, LlmtsError, ModelNotFound, ProviderUnauthorized
from llmts.providers.base import (
    InferenceRoute,
    ProviderAdapter,
    ProviderCall,
    ProviderRequest,
    Reply,
    Route,
    SimpleRoute,
    bearer_token,
)
from llmts.providers.chat_completions.embeddings import EMBEDDINGS_RULES, embeddings_payload, parse_embeddings
from llmts.providers.chat_completions.errors import render_openai_error
from llmts.providers.chat_completions.parse import chat_request_from_body
from llmts.providers.chat_completions.render import chat_completion_payload, render_chat_stream
from llmts.providers.openai.info import AZURE_OPENAI_INFO
from llmts.providers.openai.models import list_models, retrieve_model
from llmts.providers.openai.native_parse import NATIVE_TOOL_TYPES
from llmts.providers.openai.rate_limits import openai_rate_limit_headers
from llmts.providers.openai.realtime.routes import AZURE_REALTIME_ROUTES
from llmts.providers.openai.responses_routes import ResponsesSurface, responses_routes
from llmts.providers.openai.stream_faults import CHAT_STREAM_FAULTS
from llmts.providers.openai.strict_rules import CHAT_RULES
from llmts.schema.neutral import Completion, NeutralRequest

__all__ = ["AZURE_OPENAI", "render_azure_error"]

_PROVIDER = AZURE_OPENAI_INFO.namespace
_ROOT = "/azure-openai/openai"
_DEPLOYMENT_NOT_FOUND = (
    "The API deployment for this resource does not exist. If you created the deployment within the last "
    "5 minutes, please wait a moment and try again."
)
_ACCESS_DENIED = (
    "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key "
    "for an active subscription and use a correct regional API endpoint for your resource."
)
_SAFE = {"filtered": False, "severity": "safe"}
_FILTER_RESULTS = {"hate": _SAFE, "self_harm": _SAFE, "sexual": _SAFE, "violence": _SAFE}
_PROMPT_FILTER_RESULTS = [{"prompt_index": 0, "content_filter_results": _FILTER_RESULTS}]
# A ``content_filter`` finish: Azure names the category that filtered the completion.
_FILTERED_RESULTS = {**_FILTER_RESULTS, "violence": {"filtered": True, "severity": "high"}}


def _credential(request: ProviderRequest) -> str | None:
    key = request.header("api-key")
    return key.strip() if key and key.strip() else bearer_token(request)


def _served_by(call: ProviderCall, deployment: str) -> str | None:
    """The model a deployment serves; unconfigured sessions serve any deployment as its name, and so do
    sessions with an Azure upstream for the deployments they do not map (the real resource knows its
    deployments: the request is forwarded, docs/recording.md)."""
    config = call.session.plan.configuration
    if config is None:
        return deployment
    model = config.azure_deployments.get(deployment)
    if model is None and _PROVIDER in config.upstreams:
        return deployment
    return model


def _deployment_model(call: ProviderCall, deployment: str) -> str:
    model = _served_by(call, deployment)
    if model is None:
        raise ModelNotFound(
            f"deployment {deployment!r} is not in this session's azure_deployments",
            code="DeploymentNotFound",
        )
    return model


def _resolve_model(call: ProviderCall, raw: Any) -> str:
    """The path's deployment wins (the body's model is ignored there, as on Azure); else the body's
    ``model`` as a deployment name, or as a model id."""
    deployment = call.request.args.get("deployment")
    if deployment is not None:
        return _deployment_model(call, deployment)
    if not isinstance(raw, str) or not raw:
        raise InvalidRequest(
            "you must provide a model parameter", code="missing_required_parameter", param="model"
        )
    return _served_by(call, raw) or raw


def _parse_chat(call: ProviderCall) -> NeutralRequest:
    body = call.request.json_object()
    model = _resolve_model(call, body.get("model"))
    return chat_request_from_body(body, provider=_PROVIDER, model=model, refused_tool_types=NATIVE_TOOL_TYPES)


def _render_chat(call: ProviderCall, request: NeutralRequest, completion: Completion) -> Reply:
    headers = [("x-request-id", call.request_id), ("apim-request-id", call.request_id)]
    if request.stream:
        # No Azure filter-only first chunk: its empty ``object`` fails the SDK's strict chunk validation.
        reply = render_chat_stream(request, completion, call.request_id)
        reply.headers.append(headers[1])
        return reply
    payload = chat_completion_payload(request, completion)
    payload["prompt_filter_results"] = _PROMPT_FILTER_RESULTS
    filtered = completion.output.finish_reason == "content_filter"
    payload["choices"][0]["content_filter_results"] = _FILTERED_RESULTS if filtered else _FILTER_RESULTS
    return Reply(200, [("Content-Type", "application/json"), *headers], orjson.dumps(payload))


def _parse_embeddings(call: ProviderCall) -> NeutralRequest:
    body = call.request.json_object()
    return parse_embeddings(call, _PROVIDER, _resolve_model(call, body.get("model")))


def _render_embeddings(call: ProviderCall, request: NeutralRequest, completion: Completion) -> Reply:
    payload = embeddings_payload(request, completion, call.request.json_object().get("encoding_format"))
    headers = [
        ("Content-Type", "application/json"),
        ("x-request-id", call.request_id),
        ("apim-request-id", call.request_id),
    ]
    return Reply(200, headers, orjson.dumps(payload))


def _embeddings_route(rule: str) -> InferenceRoute:
    return InferenceRoute(
        rule, ("POST",), _parse_embeddings, _render_embeddings, strict_rules=EMBEDDINGS_RULES
    )


def _azure_envelope(status: int, code: str, message: str, request_id: str) -> Reply:
    body = {"error": {"code": code, "message": message}}
    headers = [
        ("Content-Type", "application/json"),
        ("x-request-id", request_id),
        ("apim-request-id", request_id),
    ]
    return Reply(status, headers, orjson.dumps(body))


def render_azure_error(error: LlmtsError, request_id: str) -> Reply:
    """OpenAI's envelope, except where Azure answers in its own words: 401 and unknown deployments/models."""
    if isinstance(error, ProviderUnauthorized):
        return _azure_envelope(401, "401", f"{_ACCESS_DENIED} (llmts: {error.message})", request_id)
    if isinstance(error, ModelNotFound):
        return _azure_envelope(
            404, "DeploymentNotFound", f"{_DEPLOYMENT_NOT_FOUND} (llmts: {error.message})", request_id
        )
    reply = render_openai_error(error, request_id)
    reply.headers.append(("apim-request-id", request_id))
    return reply


_SURFACE = ResponsesSurface(
    provider=_PROVIDER, store_namespace="azure-openai.responses", resolve_model=_resolve_model
)


def _routes() -> tuple[Route, ...]:
    routes: list[Route] = []
    for root in (_ROOT, f"{_ROOT}/v1"):
        routes.append(
            InferenceRoute(
                f"{root}/deployments/<deployment>/chat/completions",
                ("POST",),
                _parse_chat,
                _render_chat,
                in_stream_faults=CHAT_STREAM_FAULTS,
                strict_rules=CHAT_RULES,
            )
        )
        routes.append(_embeddings_route(f"{root}/deployments/<deployment>/embeddings"))
        routes.extend(responses_routes(root, _SURFACE))
        routes.extend(responses_routes(f"{root}/deployments/<deployment>", _SURFACE))
        routes.append(SimpleRoute(f"{root}/models", ("GET",), list_models, "models.list"))
        routes.append(SimpleRoute(f"{root}/models/<path:model>", ("GET",), retrieve_model, "models.get"))
    routes.append(
        InferenceRoute(
            f"{_ROOT}/v1/chat/completions",
            ("POST",),
            _parse_chat,
            _render_chat,
            in_stream_faults=CHAT_STREAM_FAULTS,
            strict_rules=CHAT_RULES,
        )
    )
    routes.append(_embeddings_route(f"{_ROOT}/v1/embeddings"))
    return tuple(routes)


AZURE_OPENAI = ProviderAdapter(
    info=AZURE_OPENAI_INFO,
    prefix="/azure-openai",
    routes=_routes(),
    credential=_credential,
    render_error=render_azure_error,
    rate_limit_headers=openai_rate_limit_headers,
    realtime_routes=AZURE_REALTIME_ROUTES,
)
