"""The Realtime WebSocket routes of the ``openai`` and ``azure-openai`` adapters: rules, credentials,
models, and how a refused key is told (llmts/providers/openai/realtime/routes.py)."""

from __future__ import annotations

import orjson
import pytest

from llmts.errors import InvalidRequest, ProviderUnauthorized
from llmts.providers.chat_completions.parse import chat_request_from_body
from llmts.providers.openai.adapter import AZURE_OPENAI, OPENAI
from llmts.providers.openai.realtime.protocol import OpenAIRealtimeProtocol
from llmts.providers.openai.realtime.routes import CALL_MODEL, azure_credential, openai_credential
from tests.providers.openai.realtime_support import check_event, opening


def _missing_model_error() -> InvalidRequest:
    """What the REST routes raise for a request without a model."""
    with pytest.raises(InvalidRequest) as raised:
        chat_request_from_body({"messages": [{"role": "user", "content": "x"}]})
    return raised.value


def test_the_adapters_declare_the_routes() -> None:
    [route] = OPENAI.realtime_routes
    assert route.rule == "/openai/v1/realtime" and route.subprotocol == "realtime"
    assert route.unauthorized_after_upgrade is not None
    assert [r.rule for r in AZURE_OPENAI.realtime_routes] == [
        "/azure-openai/openai/realtime",
        "/azure-openai/openai/v1/realtime",
    ]
    assert all(
        r.subprotocol == "realtime" and r.unauthorized_after_upgrade is None
        for r in AZURE_OPENAI.realtime_routes
    )


@pytest.mark.parametrize(
    ("headers", "query", "key"),
    [
        ({"Authorization": "Bearer sk-python"}, "", "sk-python"),
        ({"Sec-WebSocket-Protocol": "realtime, openai-insecure-api-key.sk-browser"}, "", "sk-browser"),
        ({"Sec-WebSocket-Protocol": "realtime"}, "", None),
        ({"Sec-WebSocket-Protocol": "openai-insecure-api-key."}, "", None),
        ({"Authorization": "Basic abc"}, "", None),
        ({"api-key": "azure-key"}, "", None),  # not OpenAI's
        ({}, "", None),
    ],
)
def test_openai_reads_the_key_from_bearer_or_the_subprotocol(
    headers: dict[str, str], query: str, key: str | None
) -> None:
    assert openai_credential(opening(headers=headers, query=query).request) == key


@pytest.mark.parametrize(
    ("headers", "query", "key"),
    [
        ({"api-key": "header-key"}, "", "header-key"),
        ({}, "api-version=2025-04-01-preview&deployment=d&api-key=query-key", "query-key"),
        ({"Authorization": "Bearer entra-token"}, "", "entra-token"),
        ({"Sec-WebSocket-Protocol": "realtime, openai-insecure-api-key.sk-js"}, "", "sk-js"),
        ({"api-key": "  "}, "", None),
        ({}, "", None),
    ],
)
def test_azure_reads_the_key_from_api_key_header_query_or_bearer(
    headers: dict[str, str], query: str, key: str | None
) -> None:
    assert azure_credential(opening(headers=headers, query=query).request) == key


def _model(protocol: object) -> str:
    assert isinstance(protocol, OpenAIRealtimeProtocol)
    [created] = protocol.opening()
    return str(check_event(created)["session"]["model"])


def test_openai_takes_the_model_from_the_query_or_serves_a_call() -> None:
    [route] = OPENAI.realtime_routes
    assert _model(route.open(opening(query="model=gpt-realtime-2"))) == "gpt-realtime-2"
    assert _model(route.open(opening(query="call_id=rtc_123"))) == CALL_MODEL
    with pytest.raises(InvalidRequest) as raised:
        route.open(opening(query=""))
    expected = _missing_model_error()
    assert (raised.value.http_status, raised.value.code, raised.value.param, raised.value.message) == (
        400,
        expected.code,
        expected.param,
        expected.message,
    )


@pytest.mark.parametrize(
    ("query", "model"),
    [
        ("api-version=2025-04-01-preview&deployment=voice", "gpt-realtime"),  # AzureOpenAI's realtime client
        ("model=voice", "gpt-realtime"),  # the GA recipe: OpenAI(base_url=.../openai/v1)
        ("deployment=voice&model=other", "gpt-realtime"),
        ("deployment=unmapped-name", "unmapped-name"),  # as a body model on the REST routes
    ],
)
def test_azure_maps_the_deployment_to_its_model(query: str, model: str) -> None:
    for route in AZURE_OPENAI.realtime_routes:
        protocol = route.open(
            opening(provider="azure-openai", query=query, deployments={"voice": "gpt-realtime"})
        )
        assert _model(protocol) == model


def test_azure_without_a_deployment_is_refused_like_the_rest_routes() -> None:
    expected = _missing_model_error()
    for route in AZURE_OPENAI.realtime_routes:
        with pytest.raises(InvalidRequest) as raised:
            route.open(opening(provider="azure-openai", query="api-version=2025-04-01-preview"))
        assert (raised.value.code, raised.value.message, raised.value.http_status) == (
            expected.code,
            expected.message,
            400,
        )


def test_a_refused_openai_key_is_an_error_event_then_close_3000() -> None:
    [route] = OPENAI.realtime_routes
    assert route.unauthorized_after_upgrade is not None
    reaction = route.unauthorized_after_upgrade(
        ProviderUnauthorized("Incorrect API key provided: sk-wr***ng.")
    )
    [event] = reaction.events
    checked = check_event(event)
    assert checked["error"] == {
        "type": "invalid_request_error",
        "code": "invalid_api_key",
        "message": "Incorrect API key provided: sk-wr***ng.",
        "param": None,
        "event_id": None,
    }
    assert reaction.close == (3000, "invalid_request_error.invalid_api_key")
    assert reaction.turn is None and reaction.cancel is None
    assert orjson.loads(event)["type"] == "error"
