"""Configuration of the operations other than chat: the scenario ``operation`` filter and the fixture
kinds that answer them, validated and bounded at configure time (docs/configuration.md, "Operations")."""

from __future__ import annotations

from typing import Any

import pytest

from llmts.errors import ConfigurationInvalid
from llmts.schema import LIMITS, parse_session_config


def _error(config: dict[str, Any]) -> dict[str, Any]:
    with pytest.raises(ConfigurationInvalid) as caught:
        parse_session_config(config)
    detail: dict[str, Any] = caught.value.details[0]
    return detail


def _scenario(**fields: Any) -> dict[str, Any]:
    return {"scenarios": [fields]}


def test_a_scenario_serves_the_operation_its_fixtures_imply() -> None:
    config = parse_session_config(
        {
            "scenarios": [
                {"responses": [{"text": "a"}]},
                {
                    "responses": [
                        {"embeddings": [[1.0]]},
                        {"error": {"status": 429, "code": "c", "message": "m"}},
                    ]
                },
                {"responses": [{"error": {"status": 500, "code": "c", "message": "m"}}]},
                {
                    "operation": "moderation",
                    "responses": [{"error": {"status": 500, "code": "c", "message": "m"}}],
                },
                {"responses": [{"rerank": [{"index": 0, "relevance_score": 0.5}]}]},
            ]
        }
    )
    assert [s.served_operation() for s in config.scenarios] == [
        "chat",
        "embeddings",
        "chat",
        "moderation",
        "rerank",
    ]
    # Only an explicit operation is serialized back.
    dumped = config.model_dump(mode="json", by_alias=True)
    assert [s.get("operation") for s in dumped["scenarios"]] == [None, None, None, "moderation", None]


@pytest.mark.parametrize(
    ("scenario", "message"),
    [
        ({"operation": "embeddings", "responses": [{"text": "a"}]}, "does not answer embeddings requests"),
        ({"responses": [{"text": "a"}, {"embeddings": [[1.0]]}]}, "answer different operations"),
        ({"operation": "chat", "responses": [{"moderation": {}}]}, "does not answer chat requests"),
        ({"operation": "poems", "responses": [{"text": "a"}]}, "Input should be"),
    ],
)
def test_operation_and_fixture_kinds_must_agree(scenario: dict[str, Any], message: str) -> None:
    detail = _error({"scenarios": [scenario]})
    assert detail["path"].startswith("scenarios[0]") and message in detail["message"]


@pytest.mark.parametrize(
    ("response", "message"),
    [
        ({"embeddings": []}, "at least 1"),
        ({"embeddings": [[]]}, "must have 1.."),
        ({"embeddings": [[1.0], [1.0, 2.0]]}, "same dimension"),
        ({"embeddings": [[0.0] * (LIMITS["embedding_dimensions"] + 1)]}, "must have 1.."),
        ({"embeddings": [[0.0] * 4096] * 65}, "embedding_values_per_response"),
        ({"embeddings": [[1.0]], "reasoning": {"text": "x"}}, "belong to chat answers"),
        ({"embeddings": [[1.0]], "chunks": ["a"]}, "chunks are only allowed with text"),
        ({"embeddings": [[1.0]], "text": "a"}, "exactly one of"),
        ({"moderation": {"categories": {"rudeness": True}}}, "unknown moderation category"),
        ({"moderation": {"category_scores": {"hate": 1.5}}}, "between 0 and 1"),
        (
            {"rerank": [{"index": 0, "relevance_score": 0.5}, {"index": 0, "relevance_score": 0.1}]},
            "at most once",
        ),
        ({"rerank": [{"index": -1, "relevance_score": 0.5}]}, "greater than or equal to 0"),
        (
            {
                "embeddings": [[1.0]],
                "stream_delivery": {"mode": "early_clean_end", "after_content_frames": 1},
            },
            "plain-text responses",
        ),
    ],
)
def test_operation_fixtures_are_validated_and_bounded(response: dict[str, Any], message: str) -> None:
    detail = _error(_scenario(responses=[response]))
    assert detail["path"].startswith("scenarios[0].responses[0]") and message in detail["message"]


def test_a_non_finite_vector_value_is_refused() -> None:
    detail = _error(_scenario(responses=[{"embeddings": [[float("nan")]]}]))
    assert "finite" in detail["message"]


def test_conversation_steps_answer_chat_only() -> None:
    detail = _error(
        {
            "conversations": [
                {
                    "id": "g",
                    "start_at": "a",
                    "steps": [{"id": "a", "response": {"embeddings": [[1.0]]}, "complete": True}],
                }
            ]
        }
    )
    assert "conversation graphs answer chat requests only" in detail["message"]


def test_connection_faults_and_delays_fit_operation_fixtures() -> None:
    config = parse_session_config(
        _scenario(
            responses=[
                {"embeddings": [[1.0]], "delay_ms": 5, "stream_delivery": {"mode": "reset_before_headers"}}
            ]
        )
    )
    assert config.scenarios[0].responses[0].delay_ms == 5


def test_builder_methods_write_the_fixtures() -> None:
    from llmts.schema import ConfigBuilder

    config = (
        ConfigBuilder()
        .scenario("vec")
        .embeddings([0.6, 0.8], [1.0, 0.0], delay_ms=5)
        .scenario("mod")
        .moderation("violence", scores={"violence": 0.97})
        .moderation()
        .scenario("rank", operation="rerank")
        .rerank((2, 0.9), (0, 0.1))
        .build()
    )
    assert [s.served_operation() for s in config.scenarios] == ["embeddings", "moderation", "rerank"]
    dumped = config.model_dump(mode="json", by_alias=True)["scenarios"]
    assert dumped[0]["responses"] == [{"embeddings": [[0.6, 0.8], [1.0, 0.0]], "delay_ms": 5}]
    assert dumped[1]["responses"][0]["moderation"] == {
        "categories": {"violence": True},
        "category_scores": {"violence": 0.97},
    }
    assert dumped[1]["responses"][1]["moderation"] == {"categories": {}}
    assert dumped[2]["responses"][0]["rerank"] == [
        {"index": 2, "relevance_score": 0.9},
        {"index": 0, "relevance_score": 0.1},
    ]
