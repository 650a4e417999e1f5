"""The Realtime WebSocket routes of the ``openai`` and ``azure-openai`` adapters (docs/realtime.md).

* OpenAI: ``/openai/v1/realtime?model=...`` (``call_id=`` may replace ``model``: such a connection serves
  ``gpt-realtime``); the key as ``Authorization: Bearer`` (the Python SDK, the JS ``ws`` client) or as the
  subprotocol ``openai-insecure-api-key.<key>`` beside ``realtime`` (the browser/Node ``WebSocket`` client,
  which needs ``realtime`` echoed). A refused key is told after the upgrade, as the service does: an
  ``error`` event (``invalid_api_key``), then close 3000 ``invalid_request_error.invalid_api_key``.
* Azure: ``/azure-openai/openai/realtime`` (``AzureOpenAI``: ``?api-version=...&deployment=...``) and
  ``/azure-openai/openai/v1/realtime`` (GA: ``?model=<deployment>``); the key as the ``api-key`` header,
  the ``api-key`` query parameter (the JS client's), ``Authorization: Bearer`` or the OpenAI subprotocol;
  the deployment maps to its model through the session's ``azure_deployments``, an unmapped name is the
  model itself (as a body ``model`` on the REST routes). A refused key is an HTTP 401 before the upgrade.

A handshake without a model is refused with the REST routes' 400 (``missing_required_parameter``).
The protocol module loads on the first connection only.
"""

from __future__ import annotations

import orjson

from llmts.errors import InvalidRequest, LlmtsError
from llmts.providers.base import ProviderRequest, bearer_token
from llmts.providers.realtime import Reaction, RealtimeOpening, RealtimeProtocol, RealtimeRoute

__all__ = [
    "AZURE_REALTIME_ROUTES",
    "CALL_MODEL",
    "OPENAI_REALTIME_ROUTES",
    "azure_credential",
    "openai_credential",
    "subprotocol_key",
    "unauthorized_after_upgrade",
]

# The subprotocol that carries the key of a client that cannot set headers, and the one llmts echoes.
_KEY_PREFIX = "openai-insecure-api-key."
_SUBPROTOCOL = "realtime"
# The model of a connection opened with ``call_id`` (a SIP or WebRTC call's sideband) and no ``model``.
CALL_MODEL = "gpt-realtime"
_UNAUTHORIZED_CLOSE = (3000, "invalid_request_error.invalid_api_key")


def subprotocol_key(request: ProviderRequest) -> str | None:
    """The key offered as ``openai-insecure-api-key.<key>`` in ``Sec-WebSocket-Protocol``."""
    offered = request.environ.get("HTTP_SEC_WEBSOCKET_PROTOCOL")
    if not isinstance(offered, str):
        return None
    for token in offered.split(","):
        token = token.strip()
        if token.startswith(_KEY_PREFIX) and len(token) > len(_KEY_PREFIX):
            return token[len(_KEY_PREFIX) :]
    return None


def openai_credential(request: ProviderRequest) -> str | None:
    return bearer_token(request) or subprotocol_key(request)


def azure_credential(request: ProviderRequest) -> str | None:
    for key in (request.header("api-key"), request.query("api-key")):
        if key and key.strip():
            return key.strip()
    return bearer_token(request) or subprotocol_key(request)


def _missing_model() -> InvalidRequest:
    return InvalidRequest(
        "you must provide a model parameter", code="missing_required_parameter", param="model"
    )


def _protocol(opening: RealtimeOpening, model: str) -> RealtimeProtocol:
    from llmts.providers.openai.realtime.audio import input_transcript
    from llmts.providers.openai.realtime.protocol import OpenAIRealtimeProtocol

    return OpenAIRealtimeProtocol(
        opening, model, transcribe=lambda size: opening.heard(input_transcript(size))
    )


def _open_openai(opening: RealtimeOpening) -> RealtimeProtocol:
    model = opening.request.query("model")
    if not model:
        if not opening.request.query("call_id"):
            raise _missing_model()
        model = CALL_MODEL
    return _protocol(opening, model)


def _open_azure(opening: RealtimeOpening) -> RealtimeProtocol:
    name = opening.request.query("deployment") or opening.request.query("model")
    if not name:
        raise _missing_model()
    return _protocol(opening, opening.deployments.get(name, name))


def unauthorized_after_upgrade(error: LlmtsError) -> Reaction:
    """The service's answer to a bad key: an ``error`` event, then close 3000. (No connection exists yet,
    so the event's id is fixed.)"""
    event = {
        "type": "error",
        "event_id": "event_invalid_api_key",
        "error": {
            "type": "invalid_request_error",
            "code": "invalid_api_key",
            "message": error.message,
            "param": None,
            "event_id": None,
        },
    }
    return Reaction(events=[orjson.dumps(event)], close=_UNAUTHORIZED_CLOSE)


OPENAI_REALTIME_ROUTES = (
    RealtimeRoute(
        "/openai/v1/realtime",
        openai_credential,
        _open_openai,
        subprotocol=_SUBPROTOCOL,
        unauthorized_after_upgrade=unauthorized_after_upgrade,
    ),
)
AZURE_REALTIME_ROUTES = tuple(
    RealtimeRoute(rule, azure_credential, _open_azure, subprotocol=_SUBPROTOCOL)
    for rule in ("/azure-openai/openai/realtime", "/azure-openai/openai/v1/realtime")
)
