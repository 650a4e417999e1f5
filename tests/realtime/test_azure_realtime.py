"""Azure OpenAI's realtime routes through the official ``AzureOpenAI`` client (docs/realtime.md, "Azure"):
the preview-style ``/openai/realtime?api-version&deployment`` route with the ``api-key`` header, and the
GA ``/openai/v1/realtime?model=`` route with a bearer key, both speaking the GA events."""

from __future__ import annotations

from typing import Any

import openai

from llmts.client import SessionClient
from tests.realtime.support import check_openai_event, events_until, text_of


def _configure(session: SessionClient) -> None:
    session.configure(
        {
            "models": ["gpt-realtime"],
            "azure_deployments": {"voice-prod": "gpt-realtime"},
            "provider_credentials": {"azure-openai": "az-key"},
            "scenarios": [
                {"operation": "realtime", "model": "gpt-realtime", "responses": [{"text": "Azure says hi."}]}
            ],
        }
    )


def _turn(connection: Any) -> list[dict[str, Any]]:
    assert check_openai_event(connection.recv())["type"] == "session.created"
    connection.conversation.item.create(
        item={"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hello"}]}
    )
    connection.response.create(response={"output_modalities": ["text"]})
    return list(events_until(connection))


def test_azure_openai_realtime_with_a_deployment_and_the_api_key_header(llmts_session: SessionClient) -> None:
    _configure(llmts_session)
    root = llmts_session.provider_base + "/azure-openai"
    client = openai.AzureOpenAI(
        api_key="az-key",
        api_version="2025-04-01-preview",
        azure_endpoint=root,
        websocket_base_url=root.replace("http://", "ws://") + "/openai",
        max_retries=0,
    )
    with client.realtime.connect(model="voice-prod") as connection:
        events = _turn(connection)
    assert text_of(events) == "Azure says hi."
    [entry] = llmts_session.requests(operation="realtime")
    assert entry["provider"] == "azure-openai" and entry["model"] == "gpt-realtime"
    assert entry["path"].endswith("/openai/realtime")


def test_the_ga_v1_route_with_the_openai_client(llmts_session: SessionClient) -> None:
    _configure(llmts_session)
    client = openai.OpenAI(
        api_key="az-key", base_url=llmts_session.provider_base + "/azure-openai/openai/v1", max_retries=0
    )
    with client.realtime.connect(model="voice-prod") as connection:
        events = _turn(connection)
    assert text_of(events) == "Azure says hi."
