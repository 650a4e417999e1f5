"""Configuration models and the fluent builder serialize to the public JSON."""

from __future__ import annotations

import pytest

from llmts.errors import ConfigurationInvalid
from llmts.schema import ConfigBuilder, SessionConfig, parse_session_config


def test_builder_serializes_to_contract_json() -> None:
    config = (
        ConfigBuilder()
        .models("gpt-4.1-mini")
        .credentials(openai="sk-test", azure_openai="az")
        .scenario("greet", model="gpt-4.1-mini")
        .text("Hello there.", chunks=["Hello", " there."])
        .tool_call("get_weather", {"city": "Paris"}, id="call_1")
        .json({"answer": 42})
        .error(429, "rate_limit_exceeded", "Slow down", retry_after=2)
        .text("Late.", delay_ms=200)
        .build()
    )

    assert config.model_dump(mode="json") == {
        "models": ["gpt-4.1-mini"],
        "provider_credentials": {"openai": "sk-test", "azure-openai": "az"},
        "scenarios": [
            {
                "id": "greet",
                "model": "gpt-4.1-mini",
                "terminal_policy": "reject",
                "responses": [
                    {"text": "Hello there.", "chunks": ["Hello", " there."]},
                    {"tool_calls": [{"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}]},
                    {"json": {"answer": 42}},
                    {
                        "error": {
                            "status": 429,
                            "code": "rate_limit_exceeded",
                            "message": "Slow down",
                            "retry_after": 2.0,
                        }
                    },
                    {"text": "Late.", "delay_ms": 200},
                ],
            }
        ],
    }
    assert SessionConfig.model_validate(config.model_dump(mode="json")) == config


def test_json_null_is_a_response_but_absent_json_is_not() -> None:
    assert (
        parse_session_config({"scenarios": [{"responses": [{"json": None}]}]}).scenarios[0].responses[0].kind
        == "json"
    )
    with pytest.raises(ConfigurationInvalid) as caught:
        parse_session_config({"scenarios": [{"responses": [{"delay_ms": 5}]}]})
    assert caught.value.details[0]["path"] == "scenarios[0].responses[0]"
    assert "exactly one of" in caught.value.details[0]["message"]


def test_all_problems_are_reported_with_paths() -> None:
    with pytest.raises(ConfigurationInvalid) as caught:
        parse_session_config({"models": [], "scenarios": [{"responses": [{"text": 1}]}]})
    paths = {d["path"] for d in caught.value.details}
    assert {"models", "scenarios[0].responses[0].text"} <= paths
