"""The ``pacing`` and ``rate_limits`` sections: where they are allowed, their bounds, and the JSON they
serialize back to (docs/configuration.md)."""

from __future__ import annotations

from typing import Any

import pytest

from llmts.errors import ConfigurationInvalid
from llmts.schema import parse_session_config
from llmts.schema.fixtures import LIMITS


def test_pacing_and_rate_limits_round_trip() -> None:
    data = {
        "models": ["gpt-4.1-mini"],
        "provider_credentials": {},
        "pacing": {"ttft_ms": 200, "tokens_per_second": 40.0, "jitter": 0.2},
        "rate_limits": {"requests_per_minute": 60, "tokens_per_minute": 10000, "window_seconds": 60.0},
        "scenarios": [
            {
                "terminal_policy": "reject",
                "pacing": {"ttft_ms": 0, "tokens_per_second": 10.0, "jitter": 0.0},
                "responses": [{"text": "a", "pacing": {"ttft_ms": 50, "jitter": 0.0}}, {"text": "b"}],
            }
        ],
        "conversations": [],
    }
    config = parse_session_config(data)
    dumped = config.model_dump(mode="json")
    assert dumped["pacing"] == data["pacing"] and dumped["rate_limits"] == data["rate_limits"]
    assert dumped["scenarios"][0]["pacing"] == data["scenarios"][0]["pacing"]
    assert dumped["scenarios"][0]["responses"][0]["pacing"] == {"ttft_ms": 50, "jitter": 0.0}
    assert parse_session_config(dumped) == config
    plain = parse_session_config({}).model_dump(mode="json")
    assert "pacing" not in plain and "rate_limits" not in plain


@pytest.mark.parametrize(
    ("config", "path", "message"),
    [
        ({"pacing": {}}, "pacing", "ttft_ms > 0 or tokens_per_second"),
        ({"pacing": {"ttft_ms": -1}}, "pacing.ttft_ms", "greater than or equal"),
        ({"pacing": {"ttft_ms": LIMITS["pacing_ttft_ms"] + 1}}, "pacing.ttft_ms", "less than or equal"),
        ({"pacing": {"tokens_per_second": 0}}, "pacing.tokens_per_second", "greater than"),
        (
            {"pacing": {"tokens_per_second": LIMITS["pacing_tokens_per_second"] + 1}},
            "pacing.tokens_per_second",
            "less than or equal",
        ),
        ({"pacing": {"ttft_ms": 1, "jitter": 1.5}}, "pacing.jitter", "less than or equal"),
        ({"pacing": {"ttft_ms": 1, "speed": 2}}, "pacing.speed", "Extra inputs"),
        ({"rate_limits": {}}, "rate_limits", "rate_limits needs one of requests_per_minute"),
        ({"rate_limits": {"requests_per_minute": 0}}, "rate_limits.requests_per_minute", "greater than"),
        (
            {"rate_limits": {"tokens_per_minute": LIMITS["rate_limit_tokens_per_minute"] + 1}},
            "rate_limits.tokens_per_minute",
            "less than or equal",
        ),
        (
            {"rate_limits": {"requests_per_minute": 1, "window_seconds": 3601}},
            "rate_limits.window_seconds",
            "less than or equal",
        ),
        (
            {
                "scenarios": [
                    {
                        "responses": [
                            {"error": {"status": 500, "code": "x", "message": "m"}, "pacing": {"ttft_ms": 5}}
                        ]
                    }
                ]
            },
            "scenarios[0].responses[0]",
            "pacing cannot be combined with an error",
        ),
        (
            {
                "scenarios": [
                    {
                        "responses": [
                            {
                                "text": "a",
                                "stream_delivery": {
                                    "mode": "stall",
                                    "after_content_frames": 1,
                                    "delay_ms": 5,
                                },
                                "pacing": {"ttft_ms": 5},
                            }
                        ]
                    }
                ]
            },
            "scenarios[0].responses[0]",
            "pacing cannot be combined with stream_delivery stall",
        ),
    ],
)
def test_invalid_values_are_400_naming_the_field(config: dict[str, Any], path: str, message: str) -> None:
    with pytest.raises(ConfigurationInvalid) as caught:
        parse_session_config(config)
    details = caught.value.details
    assert any(d["path"] == path and message in d["message"] for d in details), details


def test_builder_sets_session_pacing_and_rate_limits() -> None:
    from llmts.schema import ConfigBuilder

    config = (
        ConfigBuilder()
        .pacing(ttft_ms=200, tokens_per_second=50, jitter=0.1)
        .rate_limits(requests_per_minute=10, window_seconds=5)
        .scenario()
        .text("hi")
        .build()
    )
    dumped = config.model_dump(mode="json")
    assert dumped["pacing"] == {"ttft_ms": 200, "tokens_per_second": 50.0, "jitter": 0.1}
    assert dumped["rate_limits"] == {"requests_per_minute": 10, "window_seconds": 5.0}
    with pytest.raises(ConfigurationInvalid):
        ConfigBuilder().rate_limits().build()
