"""OpenAI Chat ``n``: k choices from the next k scripted responses, JSON and streamed (interleaved choice
indexes), through the official SDK with strict validation and on the raw wire."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from llmts import ConfigBuilder, SessionClient
from tests.helpers import USER_HI, WEATHER_TOOL
from tests.support.in_process import send_raw
from tests.support.openai_tokens import o200k, prompt_tokens
from tests.support.sse import data_events

pytestmark = pytest.mark.sdk

MODEL = "gpt-4.1-mini"


def _three_answers(session: SessionClient) -> None:
    session.configure(
        ConfigBuilder()
        .scenario("samples")
        .text("Red.", chunks=["Re", "d."])
        .text("Green.", chunks=["Gr", "ee", "n."])
        .text("Blue.")
        .text("Fourth.")
        .build()
    )


def test_n_answers_k_choices_in_order_and_consumes_k_responses(
    app_session: SessionClient, app_openai: Any
) -> None:
    _three_answers(app_session)

    completion = app_openai.chat.completions.create(model=MODEL, messages=USER_HI, n=3)

    assert [c.index for c in completion.choices] == [0, 1, 2]
    assert [c.message.content for c in completion.choices] == ["Red.", "Green.", "Blue."]
    assert all(c.finish_reason == "stop" for c in completion.choices)
    # Prompt counted once, completions summed, each in the model's own encoding.
    assert completion.usage.prompt_tokens == prompt_tokens(("user", "Hi"))
    assert completion.usage.completion_tokens == o200k("Red.") + o200k("Green.") + o200k("Blue.")
    follow_up = app_openai.chat.completions.create(model=MODEL, messages=USER_HI)
    assert [c.message.content for c in follow_up.choices] == ["Fourth."]


def test_streamed_choices_interleave_and_the_sdk_reassembles_each(
    app_session: SessionClient, app_openai: Any
) -> None:
    _three_answers(app_session)

    chunks = list(
        app_openai.chat.completions.create(
            model=MODEL, messages=USER_HI, n=2, stream=True, stream_options={"include_usage": True}
        )
    )

    assert all(len(c.choices) == 1 for c in chunks[:-1]), "each chunk carries one choice"
    indexes = [c.choices[0].index for c in chunks[:-1]]
    assert indexes[:4] == [0, 1, 0, 1], "the choices advance side by side"
    texts = {0: "", 1: ""}
    finish = {}
    for chunk in chunks[:-1]:
        choice = chunk.choices[0]
        texts[choice.index] += choice.delta.content or ""
        if choice.finish_reason is not None:
            finish[choice.index] = choice.finish_reason
    assert texts == {0: "Red.", 1: "Green."}
    assert finish == {0: "stop", 1: "stop"}
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == o200k("Red.") + o200k("Green.")


def test_stream_helper_accumulates_every_choice(app_session: SessionClient, app_openai: Any) -> None:
    _three_answers(app_session)

    with app_openai.chat.completions.stream(model=MODEL, messages=USER_HI, n=3) as stream:
        final = stream.get_final_completion()

    assert [c.message.content for c in final.choices] == ["Red.", "Green.", "Blue."]


def test_raw_stream_frames_one_choice_each_in_round_robin(app_session: SessionClient) -> None:
    _three_answers(app_session)
    body = {"model": MODEL, "messages": USER_HI, "n": 2, "stream": True}

    response = send_raw(app_session, "POST", "/openai/v1/chat/completions", body)

    choices = [chunk["choices"] for chunk in data_events(response.body, done=True)]
    assert [(c[0]["index"], c[0]["delta"], c[0]["finish_reason"]) for c in choices] == [
        (0, {"role": "assistant", "content": "", "refusal": None}, None),
        (1, {"role": "assistant", "content": "", "refusal": None}, None),
        (0, {"content": "Re"}, None),
        (1, {"content": "Gr"}, None),
        (0, {"content": "d."}, None),
        (1, {"content": "ee"}, None),
        (0, {}, "stop"),
        (1, {"content": "n."}, None),
        (1, {}, "stop"),
    ]


def test_tool_call_and_text_choices_mix(app_session: SessionClient, app_openai: Any) -> None:
    app_session.configure(
        ConfigBuilder()
        .scenario()
        .tool_call("get_weather", {"city": "Paris"}, id="call_a")
        .text("No tool needed.")
        .build()
    )

    completion = app_openai.chat.completions.create(model=MODEL, messages=USER_HI, tools=[WEATHER_TOOL], n=2)

    first, second = completion.choices
    assert first.finish_reason == "tool_calls" and first.message.tool_calls[0].id == "call_a"
    assert second.finish_reason == "stop" and second.message.content == "No tool needed."


def test_unconfigured_session_echoes_into_every_choice(app_openai: Any) -> None:
    completion = app_openai.chat.completions.create(model="any-model", messages=USER_HI, n=2)

    assert [c.message.content for c in completion.choices] == ["Hi", "Hi"]


def test_a_conversation_step_answers_all_choices(app_session: SessionClient, app_openai: Any) -> None:
    app_session.configure(ConfigBuilder().conversation("c").step("hello").text("Hello.").complete())

    completion = app_openai.chat.completions.create(model=MODEL, messages=USER_HI, n=3)

    assert [c.message.content for c in completion.choices] == ["Hello."] * 3


def test_a_first_scripted_error_answers_alone(app_session: SessionClient, app_openai: Any) -> None:
    app_session.configure(
        ConfigBuilder().scenario().error(429, "rate_limit_exceeded", "Slow down").text("A").text("B").build()
    )

    with pytest.raises(openai.RateLimitError):
        app_openai.chat.completions.create(model=MODEL, messages=USER_HI, n=2)
    completion = app_openai.chat.completions.create(model=MODEL, messages=USER_HI, n=2)
    assert [c.message.content for c in completion.choices] == ["A", "B"]


def test_an_error_among_later_choices_or_too_few_left_is_a_409_that_consumes_nothing(
    app_session: SessionClient, app_openai: Any
) -> None:
    app_session.configure(
        ConfigBuilder().scenario().text("A").error(500, "server_error", "Boom").text("B").build()
    )

    with pytest.raises(openai.ConflictError) as caught:
        app_openai.chat.completions.create(model=MODEL, messages=USER_HI, n=2)
    assert caught.value.code == "llm_test_server_fixture_mismatch"
    single = app_openai.chat.completions.create(model=MODEL, messages=USER_HI)
    assert single.choices[0].message.content == "A"
    with pytest.raises(openai.InternalServerError):
        app_openai.chat.completions.create(model=MODEL, messages=USER_HI)
    with pytest.raises(openai.ConflictError) as exhausted:
        app_openai.chat.completions.create(model=MODEL, messages=USER_HI, n=2)
    assert exhausted.value.code == "llm_test_server_scenario_exhausted"
    assert app_openai.chat.completions.create(model=MODEL, messages=USER_HI).choices[0].message.content == "B"


@pytest.mark.parametrize(
    ("n", "code"),
    [
        (0, "integer_below_min_value"),  # the API's own range (1-128) and code
        (129, "integer_above_max_value"),
        (9, "invalid_value"),  # within the API's range, above llmts's limit of 8
        ("2", "invalid_type"),
        (True, "invalid_type"),
        (1.5, "invalid_type"),
    ],
)
def test_n_outside_1_to_8_is_a_400(app_session: SessionClient, n: Any, code: str) -> None:
    app_session.configure(ConfigBuilder().scenario().text("A").build())
    body = {"model": MODEL, "messages": USER_HI, "n": n}

    response = send_raw(app_session, "POST", "/openai/v1/chat/completions", body)

    assert response.status == 400
    error = response.json()["error"]
    assert (error["param"], error["code"]) == ("n", code)
    if n == 0:
        assert error["message"] == (
            "Invalid 'n': integer below minimum value. Expected a value >= 1, but got 0 instead."
        )
    assert len(app_session.requests()) == 1
    retry = send_raw(app_session, "POST", "/openai/v1/chat/completions", {**body, "n": 1})
    assert retry.json()["choices"][0]["message"]["content"] == "A", "the 400 consumed nothing"


def test_explanation_agrees_with_admission_for_several_choices(
    app_session: SessionClient, app_openai: Any
) -> None:
    """``match/explain`` judges the same next ``n`` responses admission takes (docs/architecture.md,
    "Selection"): answered, a later error (mismatch), too few left (exhausted), and the cursor after each."""
    app_session.configure(
        ConfigBuilder()
        .scenario("s")
        .text("A")
        .text("B")
        .text("C")
        .error(500, "server_error", "Boom")
        .text("D")
        .build()
    )
    hi = [{"role": "user", "text": "Hi"}]

    def explain(n: int) -> dict[str, Any]:
        explained = app_session.explain({"model": MODEL, "messages": hi, "n": n})
        (candidate,) = explained["candidates"]
        return {
            "outcome": explained["outcome"],
            "code": explained["error_code"],
            "message": explained["error_message"],
            "next": candidate["next_response_index"],
        }

    def send(n: int) -> tuple[str | None, str | None, list[str | None]]:
        try:
            completion = app_openai.chat.completions.create(model=MODEL, messages=USER_HI, n=n)
        except openai.APIStatusError as exc:
            body = exc.body if isinstance(exc.body, dict) else {}
            return body.get("code"), body.get("message"), []
        return None, None, [c.message.content for c in completion.choices]

    assert explain(2) == {"outcome": "scenario", "code": None, "message": None, "next": 0}
    assert send(2) == (None, None, ["A", "B"])
    # Responses 2 and 3 (an error) for n=2: a mismatch, exactly the message admission answers with.
    explained = explain(2)
    assert (explained["outcome"], explained["code"]) == ("rejected", "llm_test_server_fixture_mismatch")
    assert send(2) == (explained["code"], explained["message"], [])
    assert explain(1) == {"outcome": "scenario", "code": None, "message": None, "next": 2}
    assert send(1) == (None, None, ["C"])
    with pytest.raises(openai.InternalServerError):
        app_openai.chat.completions.create(model=MODEL, messages=USER_HI)
    # One response left, two asked for: exhausted, and nothing was consumed.
    explained = explain(2)
    assert (explained["outcome"], explained["code"]) == ("rejected", "llm_test_server_scenario_exhausted")
    assert send(2) == (explained["code"], explained["message"], [])
    assert explain(1) == {"outcome": "scenario", "code": None, "message": None, "next": 4}
    assert send(1) == (None, None, ["D"])
