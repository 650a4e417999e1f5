"""Gemini through the official ``google-genai`` SDK against a real gunicorn+gevent server.

The SDK validates response types with pydantic, so every test here also checks the wire types. The
default client uses the SDK's default API version (``v1`` on 3.x, ``v1beta`` on 1.x/2.x); one test pins
``v1beta`` explicitly.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pydantic
import pytest
from google.genai import errors, types

from llmts import ConfigBuilder, SessionClient

pytestmark = pytest.mark.sdk

MODEL = "gemini-2.5-flash"
WEATHER = types.FunctionDeclaration(
    name="get_weather",
    description="Weather for a city",
    parameters_json_schema={
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
)
TIME = types.FunctionDeclaration(
    name="get_time", parameters_json_schema={"type": "object", "properties": {"tz": {"type": "string"}}}
)
TOOLS: list[Any] = [types.Tool(function_declarations=[WEATHER, TIME])]


def _builder(**scenario: Any) -> Any:
    return ConfigBuilder().models(MODEL, "gemini-2.5-pro").scenario(**scenario)


@pytest.fixture
def gemini(app_session: SessionClient) -> Any:
    return app_session.gemini_client()


# The same on the real server, for this module's smoke tests over real HTTP.
@pytest.fixture
def live_gemini(llmts_session: SessionClient) -> Any:
    return llmts_session.gemini_client()


def test_text_answer_with_usage(llmts_session: SessionClient, live_gemini: Any) -> None:
    llmts_session.configure(_builder().text("Hello there.").build())

    response = live_gemini.models.generate_content(model=MODEL, contents="Hi")

    assert response.text == "Hello there."
    candidate = response.candidates[0]
    assert candidate.finish_reason == types.FinishReason.STOP
    assert candidate.index == 0
    assert candidate.content.role == "model"
    # Documented estimate: 3 per request + (4 + ceil(2/4)) per message; output ceil(12/4).
    usage = response.usage_metadata
    assert (usage.prompt_token_count, usage.candidates_token_count, usage.total_token_count) == (8, 3, 11)
    assert usage.cached_content_token_count is None
    assert response.model_version == MODEL
    assert response.response_id


def test_v1beta_api_version(app_session: SessionClient) -> None:
    app_session.configure(_builder().text("beta").build())
    client = app_session.gemini_client(api_version="v1beta")

    assert client.models.generate_content(model=MODEL, contents="Hi").text == "beta"


def test_unconfigured_session_echoes_the_latest_user_text(gemini: Any) -> None:
    response = gemini.models.generate_content(model="any-model", contents="Echo me")
    assert response.text == "Echo me"


def test_stream_sends_configured_chunks_with_finish_and_usage_last(
    llmts_session: SessionClient, live_gemini: Any
) -> None:
    llmts_session.configure(_builder().text("Hello there.", chunks=["Hel", "lo", " there."]).build())

    chunks = list(live_gemini.models.generate_content_stream(model=MODEL, contents="Hi"))

    # One chunk per configured chunk, then the final chunk: empty text, finish reason and usage.
    assert [c.text for c in chunks] == ["Hel", "lo", " there.", ""]
    assert [c.candidates[0].finish_reason for c in chunks] == [None, None, None, types.FinishReason.STOP]
    assert [c.usage_metadata is not None for c in chunks] == [False, False, False, True]
    assert chunks[-1].usage_metadata.candidates_token_count == 3
    assert len({c.response_id for c in chunks}) == 1


def test_chat_stream_records_a_valid_turn(app_session: SessionClient, gemini: Any) -> None:
    """google-genai chats drop a streamed turn from history if any chunk has a part-less content."""
    app_session.configure(_builder().text("Streamed.", chunks=["Stream", "ed."]).text("Next.").build())

    chat = gemini.chats.create(model=MODEL)
    streamed = "".join(chunk.text or "" for chunk in chat.send_message_stream("One"))
    second = chat.send_message("Two")

    assert (streamed, second.text) == ("Streamed.", "Next.")
    history = chat.get_history(curated=True)  # the valid turns only
    assert [content.role for content in history] == ["user", "model", "model", "model", "user", "model"]
    assert "".join(part.text or "" for content in history[1:4] for part in content.parts or []) == "Streamed."


def test_function_call(app_session: SessionClient, gemini: Any) -> None:
    app_session.configure(_builder().tool_call("get_weather", {"city": "Paris"}, id="fc_1").build())

    response = gemini.models.generate_content(
        model=MODEL, contents="Weather?", config=types.GenerateContentConfig(tools=TOOLS)
    )

    (call,) = response.function_calls
    assert (call.id, call.name, call.args) == ("fc_1", "get_weather", {"city": "Paris"})
    assert response.candidates[0].finish_reason == types.FinishReason.STOP
    assert response.usage_metadata.candidates_token_count > 0


def test_parallel_function_calls_streamed_in_one_chunk(app_session: SessionClient, gemini: Any) -> None:
    calls = (
        {"name": "get_weather", "arguments": {"city": "Paris"}},
        {"name": "get_time", "arguments": {"tz": "CET"}},
    )
    app_session.configure(_builder().tool_calls(*calls).build())

    chunks = list(
        gemini.models.generate_content_stream(
            model=MODEL, contents="Weather and time?", config=types.GenerateContentConfig(tools=TOOLS)
        )
    )

    chunk, final = chunks
    assert final.candidates[0].finish_reason == types.FinishReason.STOP and final.function_calls is None
    assert [(c.name, c.args) for c in chunk.function_calls] == [
        ("get_weather", {"city": "Paris"}),
        ("get_time", {"tz": "CET"}),
    ]
    assert all(c.id and c.id.startswith("call_") for c in chunk.function_calls)


def test_function_response_round_trip_with_python_tools(app_session: SessionClient, gemini: Any) -> None:
    def get_weather(city: str) -> str:
        """Weather for a city."""
        return "sunny"

    app_session.configure(
        _builder().tool_call("get_weather", {"city": "Paris"}).text("It is sunny in Paris.").build()
    )
    config = types.GenerateContentConfig(
        tools=[get_weather], automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True)
    )
    question = types.Content(role="user", parts=[types.Part(text="Weather in Paris?")])

    first = gemini.models.generate_content(model=MODEL, contents=[question], config=config)
    call = first.function_calls[0]
    history = [
        question,
        first.candidates[0].content,
        types.Content(
            role="user",
            parts=[
                types.Part.from_function_response(
                    name=call.name, response={"result": get_weather(**call.args)}
                )
            ],
        ),
    ]
    second = gemini.models.generate_content(model=MODEL, contents=history, config=config)

    assert second.text == "It is sunny in Paris."
    assert second.usage_metadata.prompt_token_count > first.usage_metadata.prompt_token_count


def test_automatic_function_calling_runs_the_tool_and_continues(
    app_session: SessionClient, gemini: Any
) -> None:
    seen: list[str] = []

    def get_weather(city: str) -> str:
        """Weather for a city."""
        seen.append(city)
        return "sunny"

    # This module's postponed annotations are strings; some google-genai versions (2.33 on Python 3.10)
    # then silently skip automatic function calling, so hand them real types.
    get_weather.__annotations__ = {"city": str, "return": str}

    app_session.configure(
        _builder().tool_call("get_weather", {"city": "Oslo"}).text("Sunny in Oslo.").build()
    )

    response = gemini.models.generate_content(
        model=MODEL, contents="Weather in Oslo?", config=types.GenerateContentConfig(tools=[get_weather])
    )

    assert seen == ["Oslo"]
    assert response.text == "Sunny in Oslo."
    history = response.automatic_function_calling_history
    assert history[-1].parts[0].function_response.name == "get_weather"


def test_chat_keeps_history(app_session: SessionClient, gemini: Any) -> None:
    app_session.configure(_builder().text("First.").text("Second.").build())

    chat = gemini.chats.create(model=MODEL)
    first = chat.send_message("One")
    second = chat.send_message("Two")

    assert (first.text, second.text) == ("First.", "Second.")
    assert second.usage_metadata.prompt_token_count > first.usage_metadata.prompt_token_count


def test_json_output_parsed_with_a_pydantic_schema(app_session: SessionClient, gemini: Any) -> None:
    class Answer(pydantic.BaseModel):
        answer: int
        reason: str

    app_session.configure(_builder().json({"answer": 42, "reason": "because"}).build())

    response = gemini.models.generate_content(
        model=MODEL,
        contents="Answer?",
        config=types.GenerateContentConfig(response_mime_type="application/json", response_schema=Answer),
    )

    assert response.parsed == Answer(answer=42, reason="because")
    assert json.loads(response.text) == {"answer": 42, "reason": "because"}


def test_json_mode_with_a_text_fixture_is_a_fixture_mismatch(app_session: SessionClient, gemini: Any) -> None:
    app_session.configure(_builder().text("not json").build())

    with pytest.raises(errors.ClientError) as caught:
        gemini.models.generate_content(
            model=MODEL,
            contents="Hi",
            config=types.GenerateContentConfig(response_mime_type="application/json"),
        )

    assert caught.value.code == 409
    assert caught.value.status == "ABORTED"
    assert caught.value.details["error"]["details"][0]["reason"] == "llm_test_server_fixture_mismatch"
    # The rejected fixture was not consumed.
    assert gemini.models.generate_content(model=MODEL, contents="Hi").text == "not json"


@pytest.mark.parametrize(
    ("mode", "allowed", "fixture_tool", "ok"),
    [
        ("ANY", ["get_time"], "get_time", True),
        ("ANY", ["get_time"], "get_weather", False),
        ("NONE", None, "get_weather", False),
        ("AUTO", None, "get_weather", True),
    ],
)
def test_function_calling_config_constrains_the_fixture(
    app_session: SessionClient,
    gemini: Any,
    mode: str,
    allowed: list[str] | None,
    fixture_tool: str,
    ok: bool,
) -> None:
    app_session.configure(_builder().tool_call(fixture_tool, {}).build())
    config = types.GenerateContentConfig(
        tools=TOOLS,
        tool_config=types.ToolConfig(
            function_calling_config=types.FunctionCallingConfig(
                mode=types.FunctionCallingConfigMode(mode), allowed_function_names=allowed
            )
        ),
    )

    if ok:
        response = gemini.models.generate_content(model=MODEL, contents="Hi", config=config)
        assert response.function_calls[0].name == fixture_tool
    else:
        with pytest.raises(errors.ClientError) as caught:
            gemini.models.generate_content(model=MODEL, contents="Hi", config=config)
        assert caught.value.code == 409


def test_count_tokens_matches_the_prompt_token_count(app_session: SessionClient, gemini: Any) -> None:
    app_session.configure(_builder().text("ok").build())
    contents = "Count these words, please."

    counted = gemini.models.count_tokens(model=MODEL, contents=contents)
    answered = gemini.models.generate_content(model=MODEL, contents=contents)

    assert counted.total_tokens == answered.usage_metadata.prompt_token_count == 3 + 4 + 7


def test_system_instruction_counts_towards_prompt_tokens(app_session: SessionClient, gemini: Any) -> None:
    app_session.configure(_builder(terminal_policy="repeat_last_response").text("ok").build())

    plain = gemini.models.generate_content(model=MODEL, contents="Hi")
    instructed = gemini.models.generate_content(
        model=MODEL, contents="Hi", config=types.GenerateContentConfig(system_instruction="x" * 40)
    )

    assert instructed.usage_metadata.prompt_token_count == plain.usage_metadata.prompt_token_count + 10


def test_repeated_long_prompt_reports_implicitly_cached_tokens(
    app_session: SessionClient, gemini: Any
) -> None:
    app_session.configure(_builder(terminal_policy="repeat_last_response").text("ok").build())
    long_context = "The quick brown fox jumps over the lazy dog. " * 110  # ~4.9k chars, > 1024 tokens

    first = gemini.models.generate_content(model=MODEL, contents=long_context)
    second = gemini.models.generate_content(model=MODEL, contents=long_context)

    assert first.usage_metadata.cached_content_token_count is None
    cached = second.usage_metadata.cached_content_token_count
    assert cached is not None and cached >= 1024 and cached % 128 == 0
    assert cached <= second.usage_metadata.prompt_token_count


def test_models_list_and_get(app_session: SessionClient, gemini: Any) -> None:
    app_session.configure(_builder().text("ok").build())

    names = [model.name for model in gemini.models.list()]
    model = gemini.models.get(model=MODEL)

    assert names == [f"models/{MODEL}", "models/gemini-2.5-pro"]
    assert model.name == f"models/{MODEL}"
    assert model.input_token_limit and model.output_token_limit
    assert "generateContent" in model.supported_actions


def test_models_list_follows_pages(app_session: SessionClient, gemini: Any) -> None:
    app_session.configure(ConfigBuilder().models("m1", "m2", "m3").build())

    pager = gemini.models.list(config={"page_size": 2})

    assert [model.name for model in pager] == ["models/m1", "models/m2", "models/m3"]


def test_unknown_model_is_404_not_found(app_session: SessionClient, gemini: Any) -> None:
    app_session.configure(_builder().text("never").build())

    with pytest.raises(errors.ClientError) as caught:
        gemini.models.generate_content(model="gemini-unknown", contents="Hi")
    assert (caught.value.code, caught.value.status) == (404, "NOT_FOUND")

    with pytest.raises(errors.ClientError) as got:
        gemini.models.get(model="gemini-unknown")
    assert (got.value.code, got.value.status) == (404, "NOT_FOUND")
    assert "models/gemini-unknown is not found" in str(got.value.message)


def test_scripted_429_raises_without_retries(app_session: SessionClient, gemini: Any) -> None:
    app_session.configure(
        _builder().error(429, "rate_limit_exceeded", "Slow down", retry_after=2).text("never reached").build()
    )

    with pytest.raises(errors.ClientError) as caught:
        gemini.models.generate_content(model=MODEL, contents="Hi")

    error = caught.value
    assert (error.code, error.status, error.message) == (429, "RESOURCE_EXHAUSTED", "Slow down")
    details = error.details["error"]["details"]
    assert details[0]["reason"] == "rate_limit_exceeded" and details[0]["domain"] == "llmts"
    assert {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "2s"} in details
    assert error.response.headers["retry-after"] == "2"
    # google-genai does not retry by default: the next answer is still queued.
    assert gemini.models.generate_content(model=MODEL, contents="Hi").text == "never reached"


@pytest.mark.skipif(not hasattr(types, "HttpRetryOptions"), reason="this google-genai has no retry options")
def test_scripted_429_is_retried_with_retry_options(app_session: SessionClient) -> None:
    app_session.configure(
        _builder().error(429, "rate_limit_exceeded", "Slow down").text("After retry.").build()
    )
    client = app_session.gemini_client(
        http_options={"retry_options": {"attempts": 3, "initial_delay": 0.05, "max_delay": 0.1, "jitter": 0}}
    )

    started = time.monotonic()
    response = client.models.generate_content(model=MODEL, contents="Hi")

    assert response.text == "After retry."
    assert time.monotonic() - started >= 0.05


def test_scripted_server_error_and_custom_status(app_session: SessionClient, gemini: Any) -> None:
    app_session.configure(
        {
            "models": [MODEL],
            "scenarios": [
                {
                    "responses": [
                        {
                            "error": {
                                "status": 503,
                                "code": "overloaded",
                                "message": "The model is overloaded.",
                            }
                        },
                        {
                            "error": {
                                "status": 400,
                                "code": "bad_key",
                                "message": "Nope",
                                "type": "FAILED_PRECONDITION",
                            }
                        },
                    ]
                }
            ],
        }
    )

    with pytest.raises(errors.ServerError) as server:
        gemini.models.generate_content(model=MODEL, contents="Hi")
    assert (server.value.code, server.value.status) == (503, "UNAVAILABLE")

    with pytest.raises(errors.ClientError) as client:
        gemini.models.generate_content(model=MODEL, contents="Hi")
    assert (client.value.code, client.value.status, client.value.message) == (
        400,
        "FAILED_PRECONDITION",
        "Nope",
    )


def test_scripted_error_on_a_stream(app_session: SessionClient, gemini: Any) -> None:
    app_session.configure(_builder().error(500, "boom", "Internal error").build())

    with pytest.raises(errors.ServerError) as caught:
        list(gemini.models.generate_content_stream(model=MODEL, contents="Hi"))
    assert (caught.value.code, caught.value.status) == (500, "INTERNAL")


def test_wrong_api_key_is_google_401_unauthenticated(app_session: SessionClient) -> None:
    app_session.configure(_builder().text("ok").config.credentials(gemini="right-key").build())
    wrong = app_session.gemini_client(api_key="wrong-key-123")
    right = app_session.gemini_client()

    with pytest.raises(errors.ClientError) as caught:
        wrong.models.generate_content(model=MODEL, contents="Hi")

    error = caught.value
    assert (error.code, error.status) == (401, "UNAUTHENTICATED")
    assert str(error.message).startswith("API key not valid. Please pass a valid API key.")
    assert "right-key" not in json.dumps(error.details)
    assert error.details["error"]["details"][0]["reason"] == "invalid_api_key"
    # The failed attempt did not consume the queue.
    assert right.models.generate_content(model=MODEL, contents="Hi").text == "ok"


def test_async_client_text_and_stream(llmts_session: SessionClient, live_gemini: Any) -> None:
    llmts_session.configure(
        _builder().text("Async one.").text("Async two.", chunks=["Async", " two."]).build()
    )

    async def run() -> tuple[str, list[str]]:
        first = await live_gemini.aio.models.generate_content(model=MODEL, contents="Hi")
        stream = await live_gemini.aio.models.generate_content_stream(model=MODEL, contents="Hi")
        return first.text, [chunk.text async for chunk in stream]

    assert asyncio.run(run()) == ("Async one.", ["Async", " two.", ""])
