"""OpenAI ``/moderations`` through the official SDK with strict response validation (docs/moderation.md):
generated "not flagged" verdicts, scripted verdicts, text and multi-modal inputs, errors, journal."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from llmts import SessionClient

pytestmark = pytest.mark.sdk

IMAGE = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}


def _client(session: SessionClient) -> Any:
    return session.openai_client(_strict_response_validation=True, max_retries=0)


def test_without_a_fixture_nothing_is_flagged(app_session: SessionClient) -> None:
    answer = _client(app_session).moderations.create(input=["hello", "world"])
    assert answer.model == "omni-moderation-latest" and answer.id.startswith("modr-")
    assert len(answer.results) == 2
    for result in answer.results:
        assert not result.flagged and not any(result.categories.model_dump().values())
        scores = result.category_scores.model_dump()
        assert len(scores) == 13 and all(0 < score < 0.001 for score in scores.values())
        assert result.category_applied_input_types.violence == ["text"]
    again = _client(app_session).moderations.create(input=["hello", "world"])
    assert again.results[0].category_scores == answer.results[0].category_scores  # deterministic


def test_multi_modal_input_is_one_result_with_image_types(app_session: SessionClient) -> None:
    answer = _client(app_session).moderations.create(
        model="omni-moderation-latest", input=[{"type": "text", "text": "look"}, IMAGE]
    )
    (result,) = answer.results
    applied = result.category_applied_input_types
    assert applied.violence == ["text", "image"] and applied.hate == ["text"]
    image_only = _client(app_session).moderations.create(model="omni-moderation-latest", input=[IMAGE])
    assert image_only.results[0].category_applied_input_types.hate == []
    assert image_only.results[0].category_applied_input_types.sexual == ["image"]


def test_fixtures_flag_categories_per_input(app_session: SessionClient) -> None:
    app_session.configure(
        {
            "scenarios": [
                {"id": "chat", "responses": [{"text": "ok"}]},
                {
                    "id": "mod",
                    "operation": "moderation",
                    "responses": [
                        {
                            "moderation": {
                                "categories": {"violence": True},
                                "category_scores": {"violence": 0.97},
                            }
                        },
                        {"moderation": [{"flagged": False}, {"categories": {"hate": True}}]},
                    ],
                },
            ]
        }
    )
    client = _client(app_session)
    first = client.moderations.create(input="I will hurt you")
    (result,) = first.results
    assert result.flagged and result.categories.violence and not result.categories.hate
    assert result.category_scores.violence == 0.97 and result.category_scores.hate == 0.0001
    second = client.moderations.create(input=["fine", "hateful"])
    assert [r.flagged for r in second.results] == [False, True] and second.results[1].categories.hate
    with pytest.raises(openai.ConflictError):
        client.moderations.create(input="x")
    assert (
        client.chat.completions.create(model="gpt-4.1-mini", messages=[{"role": "user", "content": "Hi"}])
        .choices[0]
        .message.content
        == "ok"
    )
    assert [e["scenario"] for e in app_session.requests(operation="moderation", success=True)] == [
        "mod",
        "mod",
    ]


def test_a_verdict_list_must_match_the_inputs(app_session: SessionClient) -> None:
    app_session.configure(
        {"scenarios": [{"responses": [{"moderation": [{"flagged": True}, {"flagged": False}]}]}]}
    )
    with pytest.raises(openai.ConflictError, match="2 moderation results but the request has 3"):
        _client(app_session).moderations.create(input=["a", "b", "c"])


def test_errors_and_strict_rules(app_session: SessionClient) -> None:
    app_session.configure(
        {
            "scenarios": [
                {
                    "operation": "moderation",
                    "terminal_policy": "repeat_last_response",
                    "responses": [{"error": {"status": 503, "code": "overloaded", "message": "Busy"}}],
                }
            ]
        }
    )
    client = _client(app_session)
    with pytest.raises(openai.InternalServerError) as caught:
        client.moderations.create(input="x")
    assert caught.value.status_code == 503 and caught.value.code == "overloaded"
    with pytest.raises(openai.BadRequestError, match="moderation_images_need_omni"):
        client.moderations.create(model="text-moderation-latest", input=[IMAGE])
    with pytest.raises(openai.BadRequestError, match="moderation_empty_input"):
        client.moderations.create(input=[])
    with pytest.raises(openai.BadRequestError) as malformed:
        client.moderations.create(input=[{"type": "audio"}])  # type: ignore[list-item]
    assert malformed.value.param == "input[0]"
    statuses = [e["status"] for e in app_session.requests(order="asc")]
    assert statuses == [503, 400, 400, 400]
