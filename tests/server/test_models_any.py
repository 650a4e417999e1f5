"""``models`` left out of a configuration serves any model name; listed, it restricts. Model listings show
the listed models, else the ones the configuration names, else a small default set per provider."""

from __future__ import annotations

from typing import Any

import anthropic
import openai
import pytest

from llmts import ConfigBuilder, SessionClient
from tests.helpers import USER_HI

pytestmark = pytest.mark.sdk


def test_a_configured_session_without_models_serves_every_provider_any_model(
    app_session: SessionClient, app_openai: Any
) -> None:
    app_session.configure(ConfigBuilder().scenario(terminal_policy="repeat_last_response").text("ok"))
    claude = app_session.anthropic_client(max_retries=0, _strict_response_validation=True)
    gemini = app_session.gemini_client()

    assert app_openai.chat.completions.create(model="o9-anything", messages=USER_HI).model == "o9-anything"
    assert claude.messages.create(model="claude-x", max_tokens=8, messages=USER_HI).content[0].text == "ok"
    assert gemini.models.generate_content(model="gemini-future", contents="Hi").text == "ok"
    assert app_openai.models.retrieve("whatever-model").id == "whatever-model"
    assert "models" not in app_session.configuration()


def test_listing_models_still_restricts(app_session: SessionClient, app_openai: Any) -> None:
    app_session.configure(ConfigBuilder().models("gpt-4.1-mini").scenario().text("ok"))
    claude = app_session.anthropic_client(max_retries=0)

    with pytest.raises(openai.NotFoundError) as caught:
        app_openai.chat.completions.create(model="gpt-4o", messages=USER_HI)
    assert caught.value.code == "model_not_found"
    with pytest.raises(anthropic.NotFoundError):
        claude.messages.create(model="claude-x", max_tokens=8, messages=USER_HI)
    assert [m.id for m in app_openai.models.list()] == ["gpt-4.1-mini"]
    assert [m.id for m in claude.models.list()] == ["gpt-4.1-mini"]
    assert app_session.requests(order="asc")[0]["status"] == 404


def test_listings_show_the_named_models_without_models(app_session: SessionClient, app_openai: Any) -> None:
    app_session.configure(
        {
            "scenarios": [
                {"model": "gpt-4o", "responses": [{"text": "a"}]},
                {"model": "claude-haiku-4-5", "responses": [{"text": "b"}]},
                {"responses": [{"text": "c"}]},
            ],
            "azure_deployments": {"prod": "gpt-4o", "mini": "gpt-4.1-mini"},
        }
    )

    assert [m.id for m in app_openai.models.list()] == ["gpt-4o", "claude-haiku-4-5", "gpt-4.1-mini"]


def test_unnamed_models_list_a_default_set_per_provider(app_session: SessionClient, app_openai: Any) -> None:
    app_session.configure(ConfigBuilder().scenario().text("ok"))

    openai_ids = [m.id for m in app_openai.models.list()]
    anthropic_ids = [m.id for m in app_session.anthropic_client(max_retries=0).models.list()]
    gemini = app_session.gemini_client()  # kept: a collected genai client closes its connections
    gemini_ids = [m.name for m in gemini.models.list()]

    assert openai_ids[0] == "gpt-4.1-mini" and all(m.startswith("gpt-") for m in openai_ids)
    assert anthropic_ids and all(m.startswith("claude-") for m in anthropic_ids)
    assert gemini_ids and all(m.startswith("models/gemini-") for m in gemini_ids)
