"""Realistic answers on Gemini through the official ``google-genai`` SDK (pydantic-validated types):
thought parts with ``thoughtSignature`` and ``thoughtsTokenCount``, text before function calls,
``MAX_TOKENS`` / ``SAFETY`` (with safety ratings), JSON, streamed (SSE and the JSON-array stream) and
in a chat (docs/realistic-answers.md)."""

from __future__ import annotations

import base64
from functools import partial
from typing import Any

import pytest
from google.genai import types

from llmts import SessionClient
from tests.support.configure import script

pytestmark = pytest.mark.sdk

MODEL = "gemini-2.5-flash"
WEATHER = types.FunctionDeclaration(
    name="get_weather",
    parameters_json_schema={
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
)
TOOLS: list[Any] = [types.Tool(function_declarations=[WEATHER])]
CALL = {"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}
SIGNATURE = base64.b64encode(b"thought-signature").decode()
THOUGHT = {"summary": ["Need the weather."], "signature": SIGNATURE, "tokens": 30}
THINKING_CONFIG = types.ThinkingConfig(thinking_budget=512, include_thoughts=True)


@pytest.fixture
def gemini(app_session: SessionClient) -> Any:
    return app_session.gemini_client()


_configure = partial(script, models=[MODEL], scenario={"model": MODEL})


def test_thought_text_and_call(app_session: SessionClient, gemini: Any) -> None:
    _configure(app_session, {"reasoning": THOUGHT, "text": "Checking.", "tool_calls": [CALL]})

    response = gemini.models.generate_content(
        model=MODEL,
        contents="Weather?",
        config=types.GenerateContentConfig(tools=TOOLS, thinking_config=THINKING_CONFIG),
    )

    parts = response.candidates[0].content.parts
    assert [(p.thought, p.text, p.function_call is not None) for p in parts] == [
        (True, "Need the weather.", False),
        (None, "Checking.", False),
        (None, None, True),
    ]
    assert parts[0].thought_signature == b"thought-signature"
    assert parts[2].function_call.args == {"city": "Paris"}
    assert response.usage_metadata.thoughts_token_count == 30
    assert response.candidates[0].finish_reason == types.FinishReason.STOP
    (entry,) = app_session.requests()
    # Journaled as sent (google-genai sends the config's snake_case names).
    assert entry["reasoning_settings"] == {"thinking_budget": 512, "include_thoughts": True}


def test_thought_streamed_first(app_session: SessionClient, gemini: Any) -> None:
    _configure(
        app_session,
        {"reasoning": THOUGHT, "text": "Checking.", "chunks": ["Check", "ing."], "tool_calls": [CALL]},
    )

    chunks = list(
        gemini.models.generate_content_stream(
            model=MODEL, contents="Weather?", config=types.GenerateContentConfig(tools=TOOLS)
        )
    )

    parts = [part for chunk in chunks for part in chunk.candidates[0].content.parts]
    assert parts[0].thought is True and parts[0].thought_signature == b"thought-signature"
    assert [p.text for p in parts[1:3]] == ["Check", "ing."]
    assert parts[3].function_call.name == "get_weather"
    assert chunks[-1].usage_metadata.thoughts_token_count == 30
    assert chunks[-1].candidates[0].finish_reason == types.FinishReason.STOP


def test_non_base64_signature_is_encoded_and_redacted_goes_on_the_answer(
    app_session: SessionClient, gemini: Any
) -> None:
    _configure(app_session, {"reasoning": {"redacted": True, "signature": "plain sig"}, "text": "Hi."})

    response = gemini.models.generate_content(model=MODEL, contents="Hi")

    (part,) = response.candidates[0].content.parts
    assert (part.text, part.thought, part.thought_signature) == ("Hi.", None, b"plain sig")


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        ("length", types.FinishReason.MAX_TOKENS),
        ("content_filter", types.FinishReason.SAFETY),
        ("refusal", types.FinishReason.SAFETY),
    ],
)
def test_finish_reasons(app_session: SessionClient, gemini: Any, reason: str, expected: Any) -> None:
    _configure(
        app_session,
        {"text": "Partial", "finish_reason": reason},
        {"text": "Partial", "finish_reason": reason},
    )

    candidate = gemini.models.generate_content(model=MODEL, contents="Hi").candidates[0]
    chunks = list(gemini.models.generate_content_stream(model=MODEL, contents="Hi"))

    assert candidate.finish_reason == expected
    assert chunks[-1].candidates[0].finish_reason == expected
    if expected == types.FinishReason.SAFETY:
        blocked = [r for r in candidate.safety_ratings if r.blocked]
        assert [(r.category, r.probability) for r in blocked] == [
            (types.HarmCategory.HARM_CATEGORY_DANGEROUS_CONTENT, types.HarmProbability.HIGH)
        ]
    else:
        assert candidate.safety_ratings is None


def test_refusal_is_safety_with_its_text(app_session: SessionClient, gemini: Any) -> None:
    _configure(app_session, {"refusal": "I can't help with that."})

    response = gemini.models.generate_content(model=MODEL, contents="Hi")

    assert response.candidates[0].finish_reason == types.FinishReason.SAFETY
    assert response.text == "I can't help with that."


def test_chat_keeps_thought_parts(app_session: SessionClient, gemini: Any) -> None:
    _configure(app_session, {"reasoning": THOUGHT, "text": "One."}, {"text": "Two."})

    chat = gemini.chats.create(model=MODEL)
    first = chat.send_message("Hi")
    second = chat.send_message("Again")

    assert first.text == "One."  # the SDK's text skips thought parts
    assert second.text == "Two."
    history = chat.get_history()
    assert history[1].parts[0].thought is True
