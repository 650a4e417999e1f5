"""OpenAI Chat Completions through the official ``openai`` SDK (strict response validation) against a real
gunicorn+gevent server."""

from __future__ import annotations

import json
import time
from typing import Any

import openai
import pydantic
import pytest

from llmts import ConfigBuilder, SessionClient
from tests.helpers import TIME_TOOL, USER_HI, WEATHER_TOOL

pytestmark = pytest.mark.sdk


def test_text_answer_with_usage(llmts_session: SessionClient, openai_client: Any) -> None:
    llmts_session.configure(ConfigBuilder().scenario("greet").text("Hello there.").build())

    completion = openai_client.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI)

    assert completion.object == "chat.completion"
    assert completion.id.startswith("chatcmpl-")
    assert completion.model == "gpt-4.1-mini"
    choice = completion.choices[0]
    assert choice.message.role == "assistant"
    assert choice.message.content == "Hello there."
    assert choice.finish_reason == "stop"
    # Exact (o200k_base, docs/tokens.md): 3 for the reply + (3 + "user" + "Hi"); output "Hello there.".
    assert completion.usage.prompt_tokens == 3 + 4 + 1
    assert completion.usage.completion_tokens == 3
    assert completion.usage.total_tokens == 11


def test_stream_sends_configured_chunks_and_usage_chunk_last(
    llmts_session: SessionClient, openai_client: Any
) -> None:
    llmts_session.configure(ConfigBuilder().scenario().text("Hello there.", chunks=["Hel", "lo", " there."]))

    stream = openai_client.chat.completions.create(
        model="gpt-4.1-mini", messages=USER_HI, stream=True, stream_options={"include_usage": True}
    )
    chunks = list(stream)

    contents = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert contents == ["Hel", "lo", " there."]
    assert chunks[0].choices[0].delta.role == "assistant"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert len({c.id for c in chunks}) == 1
    usage_chunk = chunks[-1]
    assert usage_chunk.choices == []
    assert usage_chunk.usage is not None and usage_chunk.usage.completion_tokens == 3
    assert all(c.usage is None for c in chunks[:-1])


def test_stream_without_include_usage_has_no_usage_chunk(app_session: SessionClient, app_openai: Any) -> None:
    app_session.configure(ConfigBuilder().scenario().text("ab", chunks=["a", "b"]))

    chunks = list(app_openai.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI, stream=True))

    assert all(c.choices for c in chunks)
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "ab"


def test_stream_helper_accumulates_text(app_session: SessionClient, app_openai: Any) -> None:
    app_session.configure(ConfigBuilder().scenario().text("One two three", chunks=["One", " two", " three"]))

    with app_openai.chat.completions.stream(model="gpt-4.1-mini", messages=USER_HI) as stream:
        deltas = [e.delta for e in stream if e.type == "content.delta" and e.delta]
        final = stream.get_final_completion()

    assert deltas == ["One", " two", " three"]
    assert final.choices[0].message.content == "One two three"


def test_tool_call_json(app_session: SessionClient, app_openai: Any) -> None:
    app_session.configure(
        ConfigBuilder().scenario().tool_call("get_weather", {"city": "Paris"}, id="call_1").build()
    )

    completion = app_openai.chat.completions.create(
        model="gpt-4.1-mini", messages=USER_HI, tools=[WEATHER_TOOL]
    )

    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content is None
    (call,) = choice.message.tool_calls
    assert call.id == "call_1"
    assert call.type == "function"
    assert call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == {"city": "Paris"}


def test_parallel_tool_calls_json_and_generated_ids_are_stable(
    app_session: SessionClient, app_openai: Any
) -> None:
    calls = (
        {"name": "get_weather", "arguments": {"city": "Paris"}},
        {"name": "get_time", "arguments": {"tz": "CET"}},
    )
    app_session.configure(
        ConfigBuilder().scenario("tools", terminal_policy="repeat_last_response").tool_calls(*calls).build()
    )

    first = app_openai.chat.completions.create(
        model="gpt-4.1-mini", messages=USER_HI, tools=[WEATHER_TOOL, TIME_TOOL]
    )
    second = app_openai.chat.completions.create(
        model="gpt-4.1-mini", messages=USER_HI, tools=[WEATHER_TOOL, TIME_TOOL]
    )

    got = [(c.function.name, json.loads(c.function.arguments)) for c in first.choices[0].message.tool_calls]
    assert got == [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "CET"})]
    ids = [c.id for c in first.choices[0].message.tool_calls]
    assert all(i.startswith("call_") for i in ids) and len(set(ids)) == 2
    assert ids == [c.id for c in second.choices[0].message.tool_calls]  # derived from the script, not random


def test_streamed_parallel_tool_calls_reassemble(app_session: SessionClient, app_openai: Any) -> None:
    long_args = {"city": "Paris", "units": "metric", "days": 3, "note": "a fairly long argument value"}
    app_session.configure(
        {
            "scenarios": [
                {
                    "responses": [
                        {
                            "tool_calls": [
                                {"id": "call_a", "name": "get_weather", "arguments": long_args},
                                {"id": "call_b", "name": "get_time", "arguments": {"tz": "CET"}},
                            ]
                        }
                    ]
                }
            ]
        }
    )

    with app_openai.chat.completions.stream(
        model="gpt-4.1-mini", messages=USER_HI, tools=[WEATHER_TOOL, TIME_TOOL]
    ) as stream:
        events = list(stream)
        final = stream.get_final_completion()

    argument_deltas = [e for e in events if e.type == "tool_calls.function.arguments.delta"]
    assert len(argument_deltas) > 2  # arguments really arrive in pieces
    calls = final.choices[0].message.tool_calls
    assert [(c.id, c.function.name) for c in calls] == [("call_a", "get_weather"), ("call_b", "get_time")]
    assert json.loads(calls[0].function.arguments) == long_args
    assert json.loads(calls[1].function.arguments) == {"tz": "CET"}
    assert final.choices[0].finish_reason == "tool_calls"


def test_streamed_tool_call_uses_configured_argument_chunks(
    app_session: SessionClient, app_openai: Any
) -> None:
    app_session.configure(
        {
            "scenarios": [
                {
                    "responses": [
                        {
                            "tool_calls": [
                                {
                                    "name": "get_weather",
                                    "arguments": {"city": "Paris"},
                                    "arguments_chunks": ['{"ci', 'ty":"Pa', 'ris"}'],
                                }
                            ]
                        }
                    ]
                }
            ]
        }
    )

    chunks = list(
        app_openai.chat.completions.create(
            model="gpt-4.1-mini", messages=USER_HI, tools=[WEATHER_TOOL], stream=True
        )
    )

    pieces = [
        c.choices[0].delta.tool_calls[0].function.arguments
        for c in chunks
        if c.choices and c.choices[0].delta.tool_calls
    ]
    assert pieces == ["", '{"ci', 'ty":"Pa', 'ris"}']


def test_json_object_mode(app_session: SessionClient, app_openai: Any) -> None:
    app_session.configure(ConfigBuilder().scenario().json({"answer": 42, "items": ["a"]}).build())

    completion = app_openai.chat.completions.create(
        model="gpt-4.1-mini", messages=USER_HI, response_format={"type": "json_object"}
    )

    assert json.loads(completion.choices[0].message.content) == {"answer": 42, "items": ["a"]}


def test_json_schema_parse_helper(app_session: SessionClient, app_openai: Any) -> None:
    class Answer(pydantic.BaseModel):
        answer: int
        reason: str

    app_session.configure(ConfigBuilder().scenario().json({"answer": 42, "reason": "because"}).build())

    completion = app_openai.chat.completions.parse(
        model="gpt-4.1-mini", messages=USER_HI, response_format=Answer
    )

    assert completion.choices[0].message.parsed == Answer(answer=42, reason="because")


def test_json_mode_streamed(app_session: SessionClient, app_openai: Any) -> None:
    app_session.configure(ConfigBuilder().scenario().json({"ok": True}).build())

    chunks = list(
        app_openai.chat.completions.create(
            model="gpt-4.1-mini", messages=USER_HI, response_format={"type": "json_object"}, stream=True
        )
    )

    assert json.loads("".join(c.choices[0].delta.content or "" for c in chunks if c.choices)) == {"ok": True}


def test_text_fixture_for_json_mode_request_is_a_fixture_mismatch(
    app_session: SessionClient, app_openai: Any
) -> None:
    app_session.configure(ConfigBuilder().scenario().text("not json").text("second").build())

    with pytest.raises(openai.ConflictError) as caught:
        app_openai.chat.completions.create(
            model="gpt-4.1-mini", messages=USER_HI, response_format={"type": "json_object"}
        )
    assert caught.value.code == "llm_test_server_fixture_mismatch"
    # A rejected fixture is not consumed: a plain request still gets it.
    completion = app_openai.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI)
    assert completion.choices[0].message.content == "not json"


@pytest.mark.parametrize(
    ("tool_choice", "fixture", "tools"),
    [
        ("none", "tool", [WEATHER_TOOL]),
        ("required", "text", [WEATHER_TOOL]),
        ({"type": "function", "function": {"name": "get_time"}}, "tool", [WEATHER_TOOL, TIME_TOOL]),
        ("auto", "tool", [TIME_TOOL]),  # calls a tool the request never declared
    ],
)
def test_tool_choice_constraints_are_enforced(
    app_session: SessionClient, app_openai: Any, tool_choice: Any, fixture: str, tools: list[Any]
) -> None:
    builder = ConfigBuilder().scenario()
    if fixture == "tool":
        builder.tool_call("get_weather", {"city": "Paris"})
    else:
        builder.text("plain")
    app_session.configure(builder.build())

    with pytest.raises(openai.ConflictError) as caught:
        app_openai.chat.completions.create(
            model="gpt-4.1-mini", messages=USER_HI, tools=tools, tool_choice=tool_choice
        )
    assert caught.value.code == "llm_test_server_fixture_mismatch"


def test_forced_tool_choice_is_answered(app_session: SessionClient, app_openai: Any) -> None:
    app_session.configure(ConfigBuilder().scenario().tool_call("get_time", {"tz": "UTC"}).build())

    completion = app_openai.chat.completions.create(
        model="gpt-4.1-mini",
        messages=USER_HI,
        tools=[WEATHER_TOOL, TIME_TOOL],
        tool_choice={"type": "function", "function": {"name": "get_time"}},
    )

    assert completion.choices[0].message.tool_calls[0].function.name == "get_time"


def test_tool_result_round_trip(app_session: SessionClient, app_openai: Any) -> None:
    app_session.configure(
        ConfigBuilder()
        .scenario()
        .tool_call("get_weather", {"city": "Paris"}, id="call_9")
        .text("It is sunny in Paris.")
        .build()
    )

    first = app_openai.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI, tools=[WEATHER_TOOL])
    call = first.choices[0].message.tool_calls[0]
    history = [
        *USER_HI,
        first.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": '{"sky": "clear"}'},
    ]
    second = app_openai.chat.completions.create(model="gpt-4.1-mini", messages=history, tools=[WEATHER_TOOL])

    assert second.choices[0].message.content == "It is sunny in Paris."
    assert second.usage.prompt_tokens > first.usage.prompt_tokens


def test_scripted_429_is_retried_into_next_answer(app_session: SessionClient) -> None:
    app_session.configure(
        ConfigBuilder()
        .scenario()
        .error(429, "rate_limit_exceeded", "Slow down", retry_after=0.25)
        .text("After the retry.")
        .build()
    )
    client = app_session.openai_client(_strict_response_validation=True, max_retries=2)

    started = time.monotonic()
    raw = client.chat.completions.with_raw_response.create(model="gpt-4.1-mini", messages=USER_HI)
    elapsed = time.monotonic() - started

    assert raw.parse().choices[0].message.content == "After the retry."
    assert raw.retries_taken == 1
    assert elapsed >= 0.25  # the SDK honoured retry-after-ms


def test_scripted_429_headers_and_error_without_retries(app_session: SessionClient, app_openai: Any) -> None:
    app_session.configure(
        ConfigBuilder().scenario().error(429, "rate_limit_exceeded", "Slow down", retry_after=2).build()
    )

    with pytest.raises(openai.RateLimitError) as caught:
        app_openai.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI)

    error = caught.value
    assert error.status_code == 429
    assert error.code == "rate_limit_exceeded"
    assert error.message == "Error code: 429 - Slow down" or "Slow down" in error.message
    assert error.response.headers["retry-after"] == "2"
    assert error.response.headers["retry-after-ms"] == "2000"
    assert error.request_id and error.request_id.startswith("req_")


def test_scripted_400_with_its_code_and_type(app_session: SessionClient, app_openai: Any) -> None:
    app_session.configure(
        {
            "scenarios": [
                {
                    "responses": [
                        {
                            "error": {
                                "status": 400,
                                "code": "context_length_exceeded",
                                "message": "Too long",
                                "type": "invalid_request_error",
                            }
                        }
                    ]
                }
            ]
        }
    )

    with pytest.raises(openai.BadRequestError) as caught:
        app_openai.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI)

    assert caught.value.code == "context_length_exceeded"
    assert caught.value.type == "invalid_request_error"
    assert caught.value.body["message"] == "Too long"


def test_scripted_500_is_an_internal_server_error(app_session: SessionClient, app_openai: Any) -> None:
    app_session.configure(ConfigBuilder().scenario().error(503, "overloaded", "Busy").build())

    with pytest.raises(openai.InternalServerError) as caught:
        app_openai.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI)
    assert caught.value.status_code == 503
    assert caught.value.type == "server_error"


def test_wrong_credentials_get_401(app_session: SessionClient) -> None:
    app_session.configure(ConfigBuilder().credentials(openai="sk-right").scenario().text("ok").build())
    wrong = app_session.openai_client(api_key="sk-wrong-key-123", max_retries=0)
    right = app_session.openai_client(_strict_response_validation=True, max_retries=0)

    with pytest.raises(openai.AuthenticationError) as caught:
        wrong.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI)
    assert caught.value.code == "invalid_api_key"
    assert "sk-right" not in caught.value.message
    # The failed attempt did not consume the queue.
    assert (
        right.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI).choices[0].message.content
        == "ok"
    )


def test_unknown_model_is_404(app_session: SessionClient, app_openai: Any) -> None:
    app_session.configure(ConfigBuilder().models("gpt-4.1-mini").scenario().text("ok").build())

    with pytest.raises(openai.NotFoundError) as caught:
        app_openai.chat.completions.create(model="gpt-9-imaginary", messages=USER_HI)
    assert caught.value.code == "model_not_found"
    assert caught.value.param == "model"


def test_exhausted_queue_is_409_and_not_retried(app_session: SessionClient) -> None:
    app_session.configure(ConfigBuilder().scenario("only").text("once").build())
    client = app_session.openai_client(_strict_response_validation=True, max_retries=2)
    client.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI)

    started = time.monotonic()
    with pytest.raises(openai.ConflictError) as caught:
        client.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI)

    assert caught.value.code == "llm_test_server_scenario_exhausted"
    assert "'only'" in caught.value.message
    assert time.monotonic() - started < 0.4  # x-should-retry: false, no backoff


def test_terminal_policies(app_session: SessionClient, app_openai: Any) -> None:
    app_session.configure(
        {
            "models": ["repeat-model", "restart-model"],
            "scenarios": [
                {
                    "model": "repeat-model",
                    "terminal_policy": "repeat_last_response",
                    "responses": [{"text": "r1"}, {"text": "r2"}],
                },
                {
                    "model": "restart-model",
                    "terminal_policy": "restart",
                    "responses": [{"text": "s1"}, {"text": "s2"}],
                },
            ],
        }
    )

    def ask(model: str) -> str:
        return app_openai.chat.completions.create(model=model, messages=USER_HI).choices[0].message.content

    assert [ask("repeat-model") for _ in range(4)] == ["r1", "r2", "r2", "r2"]
    assert [ask("restart-model") for _ in range(5)] == ["s1", "s2", "s1", "s2", "s1"]


def test_scenarios_selected_by_model_in_declared_order(app_session: SessionClient, app_openai: Any) -> None:
    app_session.configure(
        {
            "models": ["gpt-4.1-mini", "gpt-4.1"],
            "scenarios": [
                {"id": "big", "model": "gpt-4.1", "responses": [{"text": "big"}]},
                {"id": "any", "responses": [{"text": "any-1"}, {"text": "any-2"}]},
            ],
        }
    )

    def ask(model: str) -> str:
        return app_openai.chat.completions.create(model=model, messages=USER_HI).choices[0].message.content

    assert ask("gpt-4.1-mini") == "any-1"
    assert ask("gpt-4.1") == "big"
    assert ask("gpt-4.1-mini") == "any-2"


def test_usage_override(app_session: SessionClient, app_openai: Any) -> None:
    app_session.configure(
        ConfigBuilder().scenario().text("x", usage={"input_tokens": 1000, "cached_tokens": 600}).build()
    )

    usage = app_openai.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI).usage

    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (1000, 1, 1001)
    assert usage.prompt_tokens_details.cached_tokens == 600


def test_models_list_and_retrieve(app_session: SessionClient, app_openai: Any) -> None:
    app_session.configure({"models": ["gpt-4.1-mini", "ft:gpt-4.1:acme/custom"]})

    assert [m.id for m in app_openai.models.list()] == ["gpt-4.1-mini", "ft:gpt-4.1:acme/custom"]
    assert app_openai.models.retrieve("ft:gpt-4.1:acme/custom").id == "ft:gpt-4.1:acme/custom"
    with pytest.raises(openai.NotFoundError):
        app_openai.models.retrieve("gpt-3")


def test_unconfigured_session_echoes_latest_user_text(app_openai: Any) -> None:
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": [{"type": "text", "text": "echo "}, {"type": "text", "text": "this"}]},
    ]

    completion = app_openai.chat.completions.create(model="any-model", messages=messages)

    assert completion.choices[0].message.content == "echo this"


def test_configured_session_never_echoes(app_session: SessionClient, app_openai: Any) -> None:
    app_session.configure({})

    with pytest.raises(openai.ConflictError) as caught:
        app_openai.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI)
    assert caught.value.code == "llm_test_server_no_matching_scenario"


def test_async_client(llmts_session: SessionClient) -> None:
    import asyncio

    llmts_session.configure(
        ConfigBuilder().scenario().text("async hello", chunks=["async", " hello"]).build()
    )

    async def run() -> list[str]:
        client = llmts_session.async_openai_client(_strict_response_validation=True, max_retries=0)
        async with client:
            stream = await client.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI, stream=True)
            return [
                c.choices[0].delta.content async for c in stream if c.choices and c.choices[0].delta.content
            ]

    assert asyncio.run(run()) == ["async", " hello"]
