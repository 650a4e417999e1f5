"""Configuration over the control API: atomic replace, validation with field paths, reset."""

from __future__ import annotations

from typing import Any

import pytest

from llmts import ConfigBuilder, ServerError, SessionClient
from tests.helpers import USER_HI, raw_request
from tests.support.in_process import send_raw

pytestmark = pytest.mark.sdk


def _ask(client: Any) -> str:
    return client.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI).choices[0].message.content


@pytest.mark.parametrize(
    ("config", "path"),
    [
        (
            {"scenarios": [{"responses": [{"text": "a"}, {"text": "b", "json": {}}]}]},
            "scenarios[0].responses[1]",
        ),
        ({"scenarios": [{"responses": [{"text": "ab", "chunks": ["a", "c"]}]}]}, "scenarios[0].responses[0]"),
        ({"scenarios": [{"responses": []}]}, "scenarios[0].responses"),
        (
            {"scenarios": [{"responses": [{"error": {"status": 200, "code": "x", "message": "m"}}]}]},
            "scenarios[0].responses[0].error.status",
        ),
        (
            {"scenarios": [{"terminal_policy": "forever", "responses": [{"text": "a"}]}]},
            "scenarios[0].terminal_policy",
        ),
        (
            {"scenarios": [{"responses": [{"text": "a", "delay_ms": -1}]}]},
            "scenarios[0].responses[0].delay_ms",
        ),
        (
            {"scenarios": [{"responses": [{"text": "a", "delay_ms": 10_000_000}]}]},
            "scenarios[0].responses[0].delay_ms",
        ),
        ({"models": []}, "models"),
        ({"provider_credentials": {"openia": "k"}}, "provider_credentials"),
        ({"unknown_section": 1}, "unknown_section"),
        ({"conversations": [{"id": "g", "steps": []}]}, "conversations[0].steps"),
        ({"determinism": {"seed": " "}}, "determinism.seed"),
        ({"determinism": {"seed": "x" * 257}}, "determinism.seed"),
        ({"determinism": {"seed": "x", "fixed_utc": "2026-01-01T00:00:00"}}, "determinism.fixed_utc"),
        ({"determinism": {"fixed_utc": "2026-01-01T00:00:00Z"}}, "determinism.seed"),
        ({"journal": {"max_entries": 0}}, "journal.max_entries"),
        ({"journal": {"max_bytes": 10}}, "journal.max_bytes"),
        ({"journal": {"preview_bytes": 2_000_000}}, "journal.preview_bytes"),
        ({"journal": {"max_entries": 5, "keep": True}}, "journal.keep"),
        ({"models": ["gpt-4.1-mini"], "azure_deployments": {"prod": "gpt-unknown"}}, ""),
        ({"azure_deployments": {"a/b": "gpt-4.1-mini"}}, "azure_deployments"),
        (
            {
                "scenarios": [
                    {
                        "responses": [
                            {
                                "text": "a",
                                "stream_delivery": {"mode": "abort_connection", "after_content_frames": 2},
                            }
                        ]
                    }
                ]
            },
            "scenarios[0].responses[0]",
        ),
        ({"scenarios": [{"responses": [{"items": []}]}]}, "scenarios[0].responses[0].items"),
        (
            {
                "scenarios": [
                    {"id": "x", "responses": [{"text": "a"}]},
                    {"id": "x", "responses": [{"text": "b"}]},
                ]
            },
            "",
        ),
        (
            {
                "models": ["gpt-4.1-mini"],
                "scenarios": [{"model": "not-served", "responses": [{"text": "a"}]}],
            },
            "",
        ),
        (
            {
                "scenarios": [
                    {
                        "responses": [
                            {"tool_calls": [{"name": "f", "arguments": {"a": 1}, "arguments_chunks": ["{"]}]}
                        ]
                    }
                ]
            },
            "scenarios[0].responses[0].tool_calls[0]",
        ),
    ],
)
def test_invalid_configuration_is_rejected_atomically(
    app_session: SessionClient, config: dict[str, Any], path: str
) -> None:
    app_session.configure(ConfigBuilder().scenario().text("kept").build())
    before = app_session.configuration()

    response = send_raw(
        app_session.server,
        "POST",
        "/admin-api/configure",
        config,
        {"X-Llm-Test-Server-Session": app_session.id},
    )

    assert response.status == 400
    error = response.json()["error"]
    assert error["code"] == "invalid_configuration"
    assert error["message"]
    assert error["details"] and all(set(d) == {"path", "message"} for d in error["details"])
    assert path in [d["path"] for d in error["details"]]
    assert app_session.configuration() == before
    assert _ask(app_session.openai_client(max_retries=0)) == "kept"


def test_malformed_configuration_json(app_session: SessionClient) -> None:
    response = send_raw(
        app_session.server,
        "POST",
        "/admin-api/configure",
        b"{oops",
        {"X-Llm-Test-Server-Session": app_session.id},
    )
    assert response.status == 400
    assert response.json()["error"]["code"] == "invalid_configuration"


def test_client_raises_server_error_with_details(app_session: SessionClient) -> None:
    with pytest.raises(ServerError) as caught:
        app_session.configure({"scenarios": [{"responses": [{}]}]})
    assert caught.value.status == 400
    assert caught.value.details[0]["path"] == "scenarios[0].responses[0]"


def test_configuration_round_trips(app_session: SessionClient) -> None:
    config = {
        "models": ["gpt-4.1-mini", "gpt-4.1"],
        "provider_credentials": {"openai": "sk-test"},
        "scenarios": [
            {
                "id": "greet",
                "model": "gpt-4.1-mini",
                "terminal_policy": "reject",
                "responses": [
                    {"text": "Hello there.", "chunks": ["Hello", " there."]},
                    {"tool_calls": [{"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}]},
                    {"json": {"answer": 42}},
                    {"json": None},
                    {
                        "error": {
                            "status": 429,
                            "code": "rate_limit_exceeded",
                            "message": "Slow down",
                            "retry_after": 2,
                        }
                    },
                    {"text": "Late.", "delay_ms": 200},
                ],
            }
        ],
    }

    effective = app_session.configure(config)

    assert effective == config
    assert app_session.configuration() == config


def test_unconfigured_configuration_is_empty_and_flagged(app_session: SessionClient) -> None:
    response = send_raw(
        app_session.server,
        "GET",
        "/admin-api/configuration",
        headers={"X-Llm-Test-Server-Session": app_session.id},
    )
    assert response.json() == {}
    assert response.headers["x-llm-test-server-configured"] == "false"


def test_reset_restarts_queues_and_keeps_configuration(app_session: SessionClient) -> None:
    app_session.configure(ConfigBuilder().scenario().text("one").text("two").build())
    client = app_session.openai_client(max_retries=0)
    assert _ask(client) == "one"

    app_session.reset()

    assert _ask(client) == "one"
    assert _ask(client) == "two"


def test_reconfigure_replaces_everything(app_session: SessionClient) -> None:
    app_session.configure(ConfigBuilder().scenario().text("old-1").text("old-2").build())
    client = app_session.openai_client(max_retries=0)
    assert _ask(client) == "old-1"

    app_session.configure(ConfigBuilder().scenario().text("new").build())

    assert _ask(client) == "new"


def test_configure_accepts_models_builder_and_dict(app_session: SessionClient) -> None:
    from llmts.schema import ResponseFixture, Scenario, SessionConfig

    typed = SessionConfig(scenarios=[Scenario(responses=[ResponseFixture(text="typed")])])
    builder = ConfigBuilder().scenario().text("built")
    for config, expected in (
        (typed, "typed"),
        (builder, "built"),
        ({"scenarios": [{"responses": [{"text": "dict"}]}]}, "dict"),
    ):
        app_session.configure(config)
        assert _ask(app_session.openai_client(max_retries=0)) == expected


def test_request_body_limit_gives_413_in_provider_envelope(own_server_factory: Any) -> None:
    server = own_server_factory(extra_args=["--max-body-bytes", "1000"])
    big = {"model": "gpt-4.1-mini", "messages": [{"role": "user", "content": "x" * 2000}]}

    response = raw_request(
        server.url, "POST", "/openai/v1/chat/completions", big, {"Authorization": "Bearer k"}
    )

    assert response.status == 413
    assert response.json()["error"]["code"] == "request_too_large"
    assert set(response.json()["error"]) == {"message", "type", "param", "code"}
    control = raw_request(
        server.url, "POST", "/admin-api/configure", {"scenarios": [{"responses": [{"text": "x" * 2000}]}]}
    )
    assert control.status == 413
    assert control.json()["error"]["code"] == "request_too_large"
