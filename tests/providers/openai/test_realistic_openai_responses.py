"""Realistic answers on OpenAI Responses through the official SDK with strict response validation:
reasoning items (summaries, raw text, ``encrypted_content`` when ``include`` asks), mixed answers,
``status: incomplete`` finish reasons and refusal parts, JSON, streamed, ``responses.stream()`` and
``parse()`` (docs/realistic-answers.md)."""

from __future__ import annotations

from functools import partial
from typing import Any

import pydantic
import pytest

from llmts import SessionClient
from tests.support.configure import script

pytestmark = pytest.mark.sdk

MODEL = "gpt-4.1-mini"
TOOL = {
    "type": "function",
    "name": "get_weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    "strict": False,
}
CALL = {"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}
REASONING = {"summary": ["Plan the lookup.", "Call the tool."], "tokens": 64, "signature": "enc_abc"}


class Answer(pydantic.BaseModel):
    answer: int


_configure = partial(script, models=[MODEL], scenario={"model": MODEL})


def test_reasoning_then_text_then_call(app_session: SessionClient, app_openai: Any) -> None:
    _configure(app_session, {"reasoning": REASONING, "text": "Checking.", "tool_calls": [CALL]})

    response = app_openai.responses.create(
        model=MODEL, input="Weather?", tools=[TOOL], reasoning={"effort": "low", "summary": "auto"}
    )

    assert [item.type for item in response.output] == ["reasoning", "message", "function_call"]
    reasoning = response.output[0]
    assert [part.text for part in reasoning.summary] == REASONING["summary"]
    assert reasoning.encrypted_content is None  # not asked for
    assert response.output_text == "Checking."
    assert response.output[2].arguments == '{"city":"Paris"}'
    assert response.usage.output_tokens_details.reasoning_tokens == 64
    assert response.status == "completed"
    (entry,) = app_session.requests()
    assert entry["reasoning_settings"] == {"effort": "low", "summary": "auto"}


def test_encrypted_content_when_included(app_session: SessionClient, app_openai: Any) -> None:
    _configure(app_session, {"reasoning": REASONING, "text": "Done."}, {"text": "Again."})

    response = app_openai.responses.create(
        model=MODEL, input="Hi", include=["reasoning.encrypted_content"], store=False
    )

    assert response.output[0].encrypted_content == "enc_abc"
    # The reasoning item goes back as input (stateless tool loops do this) and is accepted.
    again = app_openai.responses.create(
        model=MODEL,
        input=[
            *[item.model_dump(exclude_none=True) for item in response.output],
            {"role": "user", "content": "Go"},
        ],
        store=False,
    )
    assert again.output_text == "Again."


def test_raw_reasoning_text_as_content(app_session: SessionClient, app_openai: Any) -> None:
    _configure(app_session, {"reasoning": {"text": "Let me think."}, "text": "Done."})

    response = app_openai.responses.create(model=MODEL, input="Hi")

    reasoning = response.output[0]
    assert reasoning.summary == []
    assert [part.text for part in reasoning.content] == ["Let me think."]


def test_stream_helper_accumulates_reasoning_mixed_answer(
    app_session: SessionClient, app_openai: Any
) -> None:
    _configure(
        app_session,
        {"reasoning": REASONING, "text": "Checking.", "chunks": ["Check", "ing."], "tool_calls": [CALL]},
    )

    with app_openai.responses.stream(
        model=MODEL, input="Weather?", tools=[TOOL], include=["reasoning.encrypted_content"]
    ) as stream:
        events = [event.type for event in stream]
        final = stream.get_final_response()

    assert events.count("response.reasoning_summary_text.delta") == 2
    assert events.index("response.reasoning_summary_text.done") < events.index("response.output_text.delta")
    assert events.index("response.output_text.done") < events.index("response.function_call_arguments.delta")
    assert [item.type for item in final.output] == ["reasoning", "message", "function_call"]
    assert final.output[0].encrypted_content == "enc_abc"
    assert final.output_text == "Checking."
    assert final.usage.output_tokens_details.reasoning_tokens == 64


@pytest.mark.parametrize(
    ("reason", "detail"), [("length", "max_output_tokens"), ("content_filter", "content_filter")]
)
def test_incomplete(app_session: SessionClient, app_openai: Any, reason: str, detail: str) -> None:
    _configure(app_session, {"text": "Partial", "finish_reason": reason})

    response = app_openai.responses.create(model=MODEL, input="Hi")

    assert response.status == "incomplete"
    assert response.incomplete_details.reason == detail
    assert response.output_text == "Partial"
    assert response.output[0].status == "incomplete"


def test_incomplete_streamed(app_session: SessionClient, app_openai: Any) -> None:
    _configure(app_session, {"text": "Partial", "chunks": ["Par", "tial"], "finish_reason": "length"})

    events = list(app_openai.responses.create(model=MODEL, input="Hi", stream=True))

    assert events[-1].type == "response.incomplete"
    assert events[-1].response.incomplete_details.reason == "max_output_tokens"
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == "Partial"


def test_refusal_part(app_session: SessionClient, app_openai: Any) -> None:
    _configure(app_session, {"refusal": "I can't help with that."})

    response = app_openai.responses.create(model=MODEL, input="Hi")

    (part,) = response.output[0].content
    assert (part.type, part.refusal) == ("refusal", "I can't help with that.")
    assert response.status == "completed"
    assert response.output_text == ""


def test_refusal_streamed_and_parsed(app_session: SessionClient, app_openai: Any) -> None:
    _configure(app_session, {"refusal": "No."}, {"refusal": "Not that."})

    with app_openai.responses.stream(model=MODEL, input="Hi", text_format=Answer) as stream:
        events = [event.type for event in stream]
        final = stream.get_final_response()
    assert events.count("response.refusal.delta") == 1 and "response.refusal.done" in events
    assert final.output[0].content[0].refusal == "No."

    parsed = app_openai.responses.parse(model=MODEL, input="Hi", text_format=Answer)
    assert parsed.output_parsed is None
    assert parsed.output[0].content[0].refusal == "Not that."


def test_stored_response_replays_reasoning(app_session: SessionClient, app_openai: Any) -> None:
    _configure(app_session, {"reasoning": REASONING, "refusal": "No."})

    created = app_openai.responses.create(model=MODEL, input="Hi")
    replayed = list(app_openai.responses.retrieve(created.id, stream=True))

    assert replayed[-1].response.output[0].type == "reasoning"
    assert [e.delta for e in replayed if e.type == "response.refusal.delta"] == ["No."]


def test_redacted_reasoning_has_no_summary_but_its_encrypted_content(
    app_session: SessionClient, app_openai: Any
) -> None:
    _configure(app_session, {"reasoning": {"redacted": True, "signature": "opaque"}, "json": {"answer": 1}})

    response = app_openai.responses.parse(
        model=MODEL, input="Hi", text_format=Answer, include=["reasoning.encrypted_content"]
    )

    reasoning = response.output[0]
    assert (reasoning.type, reasoning.summary, reasoning.content) == ("reasoning", [], None)
    assert reasoning.encrypted_content == "opaque"
    assert response.output_parsed == Answer(answer=1)
