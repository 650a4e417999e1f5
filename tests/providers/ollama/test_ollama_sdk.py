"""Ollama's native API through the official ``ollama`` client (``session.ollama_client()``) against a real
gunicorn+gevent server: chat and generate, JSON and NDJSON streams, tools, ``format``, ``think``, model
routes, errors, every stream delivery mode, the journal, verification and a conversation graph.

The ``ollama`` client has no strict response validation switch: its pydantic types validate field types
and ignore extra keys, so the assertions below check the values themselves.
``tox -e ollama04`` runs this module with ollama 0.4."""

from __future__ import annotations

import asyncio
import functools
import json
import time
from typing import Any

import httpx
import ollama
import pydantic
import pytest

from llmts import SessionClient
from tests.support.configure import script
from tests.support.in_process import send_raw
from tests.support.journal import completed_entry

pytestmark = pytest.mark.sdk

MODEL = "llama3.2:3b"
HI = [{"role": "user", "content": "Hi"}]
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
FIXED = {"seed": "run-1", "fixed_utc": "2026-01-01T00:00:00Z"}


_configure = functools.partial(script, models=[MODEL])


def _entry(session: SessionClient, **filters: Any) -> dict[str, Any]:
    """The newest completed journal entry matching ``filters`` (a stream's entry completes after delivery)."""
    return completed_entry(session, provider="ollama", **filters)


# --- text -------------------------------------------------------------------------------------------


def test_chat_text_reports_counts_durations_and_done_reason(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"text": "Hello there."}, determinism=FIXED)
    response = llmts_session.ollama_client().chat(model=MODEL, messages=HI, stream=False)

    assert response.message.role == "assistant" and response.message.content == "Hello there."
    assert response.done is True and response.done_reason == "stop"
    assert response.model == MODEL and response.created_at == "2026-01-01T00:00:00Z"
    assert response.prompt_eval_count and response.prompt_eval_count > 0
    assert response.eval_count and response.eval_count > 0
    assert response.total_duration == (
        response.load_duration + response.prompt_eval_duration + response.eval_duration
    )
    entry = _entry(llmts_session)
    assert entry["operation"] == "chat" and entry["path"] == "/ollama/api/chat"
    assert entry["usage"]["input_tokens"] == response.prompt_eval_count
    assert entry["usage"]["output_tokens"] == response.eval_count


def test_chat_stream_yields_chunks_then_the_done_line(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"text": "Hello there.", "chunks": ["Hello", " there."]})
    parts = list(llmts_session.ollama_client().chat(model=MODEL, messages=HI, stream=True))

    assert [p.message.content for p in parts] == ["Hello", " there.", ""]
    assert [p.done for p in parts] == [False, False, True]
    assert parts[-1].done_reason == "stop" and parts[-1].eval_count and parts[-1].prompt_eval_count
    assert parts[0].eval_count is None
    entry = _entry(llmts_session)
    assert entry["streaming"] is True and entry["terminal_marker_observed"] is True
    assert entry["emitted_content_frames"] == 2 and entry["transport_outcome"] == "completed"


def test_generate_json_and_stream(app_session: SessionClient) -> None:
    _configure(
        app_session,
        {"text": "Blue.", "chunks": ["Bl", "ue."]},
        {"text": "Blue.", "chunks": ["Bl", "ue."]},
    )
    client = app_session.ollama_client()

    whole = client.generate(model=MODEL, prompt="Sky colour?", system="Be brief.")
    parts = list(client.generate(model=MODEL, prompt="Sky colour?", stream=True))

    assert whole.response == "Blue." and whole.done and whole.done_reason == "stop" and whole.context
    assert [p.response for p in parts] == ["Bl", "ue.", ""] and parts[-1].done is True
    entry = _entry(app_session, operation="generate", streaming=False)
    assert entry["path"] == "/ollama/api/generate"


def test_a_request_without_a_prompt_loads_the_model_and_consumes_nothing(
    app_session: SessionClient,
) -> None:
    _configure(app_session, {"text": "Only answer."})
    client = app_session.ollama_client()

    loaded = client.generate(model=MODEL)
    chat_loaded = client.chat(model=MODEL, messages=[])

    assert loaded.done is True and loaded.done_reason == "load" and loaded.response == ""
    assert chat_loaded.done_reason == "load"
    assert client.chat(model=MODEL, messages=HI).message.content == "Only answer."


# --- tools, format, think ------------------------------------------------------------------------------


def test_tool_round_trip_through_a_conversation_graph(app_session: SessionClient) -> None:
    app_session.configure(
        {
            "models": [MODEL],
            "conversations": [
                {
                    "id": "weather",
                    "start_at": "ask",
                    "steps": [
                        {
                            "id": "ask",
                            "when": {"latest_user_contains": "weather"},
                            "response": {
                                "tool_calls": [
                                    {"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}
                                ]
                            },
                            "then": ["answer"],
                        },
                        {
                            "id": "answer",
                            "when": {
                                "tool_result": {"name": "get_weather"},
                                "tool_arguments_json": {"city": "Paris"},
                            },
                            "response": {"text": "Sunny in Paris."},
                            "complete": True,
                        },
                    ],
                }
            ],
        }
    )
    client = app_session.for_conversation("c1").ollama_client()
    messages: list[Any] = [{"role": "user", "content": "What is the weather in Paris?"}]

    first = client.chat(model=MODEL, messages=messages, tools=[WEATHER])
    calls = first.message.tool_calls or []
    assert [(c.function.name, dict(c.function.arguments)) for c in calls] == [
        ("get_weather", {"city": "Paris"})
    ]
    assert first.message.content == "" and first.done_reason == "stop"
    messages += [first.message, {"role": "tool", "content": "22C, sunny", "tool_name": "get_weather"}]
    second = client.chat(model=MODEL, messages=messages, tools=[WEATHER])

    assert second.message.content == "Sunny in Paris."
    states = app_session.for_conversation("c1").conversations()
    assert (states[0]["state"], states[0]["executed_steps"]) == ("completed", ["ask", "answer"])
    entry = _entry(app_session)
    assert entry["step"] == "answer" and entry["tool_results"]


def test_streamed_tool_calls_come_whole_in_one_line(app_session: SessionClient) -> None:
    _configure(
        app_session, {"tool_calls": [{"id": "c", "name": "get_weather", "arguments": {"city": "Oslo"}}]}
    )
    parts = list(app_session.ollama_client().chat(model=MODEL, messages=HI, tools=[WEATHER], stream=True))

    assert len(parts) == 2 and parts[-1].done is True
    calls = parts[0].message.tool_calls or []
    assert [(c.function.name, dict(c.function.arguments)) for c in calls] == [
        ("get_weather", {"city": "Oslo"})
    ]


@pytest.mark.parametrize(
    "fmt",
    ["json", {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}],
)
def test_format_json_and_schema_answer_json(app_session: SessionClient, fmt: Any) -> None:
    _configure(app_session, {"json": {"answer": 42}})
    response = app_session.ollama_client().chat(model=MODEL, messages=HI, format=fmt)

    assert json.loads(response.message.content or "") == {"answer": 42}


# ``think`` arrived in ollama 0.5 (``tox -e ollama04`` runs this module with 0.4).
_THINK = "think" in ollama._types.ChatRequest.model_fields


@pytest.mark.skipif(not _THINK, reason="this ollama client has no think parameter")
def test_think_is_accepted_and_a_bad_think_value_is_refused(app_session: SessionClient) -> None:
    _configure(app_session, {"text": "Thought about it."})
    client = app_session.ollama_client()

    assert client.chat(model=MODEL, messages=HI, think=True).message.content == "Thought about it."
    # ollama 0.5 refuses a bad ``think`` itself (pydantic); later clients send it: the server refuses it.
    body = {"model": MODEL, "messages": HI, "think": "extreme", "stream": False}
    answer = send_raw(app_session, "POST", "/ollama/api/chat", body)
    assert answer.status == 400 and "think" in answer.json()["error"]
    try:
        client.chat(model=MODEL, messages=HI, think="extreme")  # type: ignore[arg-type]
    except pydantic.ValidationError:
        pass  # refused before sending (ollama 0.5)
    except ollama.ResponseError as caught:
        assert caught.status_code == 400 and "think" in caught.error
    else:
        raise AssertionError("a bad think value was answered")


def test_a_tool_result_without_tool_name_answers_the_oldest_open_call(app_session: SessionClient) -> None:
    """ollama clients before 0.5 drop ``tool_name`` from tool messages; the result still pairs up."""
    app_session.configure(
        {
            "models": [MODEL],
            "conversations": [
                {
                    "id": "g",
                    "start_at": "done",
                    "steps": [
                        {
                            "id": "done",
                            "when": {"tool_result": {"name": "get_weather"}},
                            "response": {"text": "Paired."},
                            "complete": True,
                        }
                    ],
                }
            ],
        }
    )
    call = {"function": {"name": "get_weather", "arguments": {"city": "Rome"}}}
    messages = [
        *HI,
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "content": "9C"},
    ]

    answer = app_session.ollama_client().chat(model=MODEL, messages=messages, tools=[WEATHER])

    assert answer.message.content == "Paired."


# --- model routes ----------------------------------------------------------------------------------------


def test_list_show_ps_and_version(app_session: SessionClient) -> None:
    _configure(app_session, {"text": "x"})
    client = app_session.ollama_client()

    assert [m.model for m in client.list().models] == [MODEL]
    shown = client.show(MODEL)
    assert shown.capabilities and "tools" in shown.capabilities and shown.details
    assert [m.model for m in client.ps().models] == [MODEL]
    with pytest.raises(ollama.ResponseError) as caught:
        client.show("missing:latest")
    assert caught.value.status_code == 404 and "missing:latest" in caught.value.error
    version = client._request_raw("GET", "/api/version").json()  # the client has no version() method
    assert isinstance(version["version"], str)


# --- errors ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [400, 401, 403, 404, 429, 500, 503])
def test_scripted_errors_raise_response_error_with_the_status(
    app_session: SessionClient, status: int
) -> None:
    _configure(
        app_session,
        {"error": {"status": status, "code": "scripted", "message": f"scripted {status}"}},
        {"error": {"status": status, "code": "scripted", "message": f"scripted {status}"}},
    )
    client = app_session.ollama_client()

    for stream in (False, True):
        with pytest.raises(ollama.ResponseError) as caught:
            result = client.chat(model=MODEL, messages=HI, stream=stream)
            list(result) if stream else None  # type: ignore[call-overload]
        assert caught.value.status_code == status and caught.value.error == f"scripted {status}"


def test_unknown_model_and_wrong_credential(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"text": "x"}, provider_credentials={"ollama": "secret-key"})

    with pytest.raises(ollama.ResponseError) as caught:
        llmts_session.ollama_client().chat(model="other", messages=HI)
    assert caught.value.status_code == 404 and "other" in caught.value.error
    with pytest.raises(ollama.ResponseError) as caught:
        ollama.Client(host=llmts_session.provider_base + "/ollama").chat(model=MODEL, messages=HI)
    assert caught.value.status_code == 401
    assert llmts_session.ollama_client().chat(model=MODEL, messages=HI).message.content == "x"


def test_invalid_requests_are_refused_and_consume_nothing(app_session: SessionClient) -> None:
    _configure(app_session, {"text": "kept"})
    client = app_session.ollama_client()

    with pytest.raises(ollama.ResponseError) as caught:
        client.chat(model=MODEL, messages=[{"role": "robot", "content": "x"}])
    assert caught.value.status_code == 400 and "role" in caught.value.error
    assert client.chat(model=MODEL, messages=HI).message.content == "kept"


# --- stream delivery ----------------------------------------------------------------------------------------


def _fault(session: SessionClient, plan: dict[str, Any]) -> None:
    _configure(
        session,
        {"text": "One two three.", "chunks": ["One ", "two ", "three."], "stream_delivery": plan},
        {"text": "Next."},
    )


def _stream(session: SessionClient, received: list[Any]) -> None:
    for part in session.ollama_client(timeout=10).chat(model=MODEL, messages=HI, stream=True):
        received.append(part)


def test_early_clean_end_ends_silently_without_the_done_line(llmts_session: SessionClient) -> None:
    _fault(llmts_session, {"mode": "early_clean_end", "after_content_frames": 2})
    received: list[Any] = []
    _stream(llmts_session, received)

    assert [p.message.content for p in received] == ["One ", "two "]
    assert not any(p.done for p in received)  # the client raises nothing: only the missing done line tells
    entry = _entry(llmts_session, streaming=True)
    assert entry["transport_outcome"] == "early_end" and entry["terminal_marker_observed"] is False
    verdict = llmts_session.verify(
        requests=[
            {"name": "streams", "query": {"streaming": True}, "require_streaming_terminal_marker": True}
        ]
    )
    assert verdict.passed is False
    assert [f.kind for f in verdict.failures] == ["terminal_marker"]


@pytest.mark.parametrize("mode", ["delay_then_continue", "slow_drip"])
def test_harmless_modes_deliver_the_whole_stream(llmts_session: SessionClient, mode: str) -> None:
    plan: dict[str, Any] = {"mode": mode}
    plan |= {"delay_ms": 50, "after_content_frames": 1} if mode == "delay_then_continue" else {}
    plan |= {"bytes_per_second": 20_000} if mode == "slow_drip" else {}
    _fault(llmts_session, plan)
    received: list[Any] = []
    _stream(llmts_session, received)

    assert "".join(p.message.content for p in received) == "One two three." and received[-1].done
    entry = _entry(llmts_session, streaming=True)
    assert entry["transport_outcome"] == "completed" and entry["terminal_marker_observed"] is True
    assert entry["success"] is True
    assert llmts_session.verify(
        requests=[{"name": "s", "query": {"streaming": True}, "require_streaming_terminal_marker": True}]
    ).passed


def test_abort_connection_raises_a_transport_error_after_the_first_line(
    llmts_session: SessionClient,
) -> None:
    _fault(llmts_session, {"mode": "abort_connection", "after_content_frames": 1})
    received: list[Any] = []
    with pytest.raises(httpx.ReadError):
        _stream(llmts_session, received)

    assert [p.message.content for p in received] == ["One "]
    entry = _entry(llmts_session, streaming=True)
    assert entry["transport_outcome"] == "aborted" and entry["terminal_marker_observed"] is False


@pytest.mark.parametrize(
    "plan",
    [
        {"mode": "malformed_frame", "after_content_frames": 1},
        {"mode": "truncate_bytes", "after_content_frames": 1, "cut_bytes": 20},
    ],
    ids=["malformed_frame", "truncate_bytes"],
)
def test_a_broken_line_raises_json_decode_error(llmts_session: SessionClient, plan: dict[str, Any]) -> None:
    _fault(llmts_session, plan)
    received: list[Any] = []
    with pytest.raises(json.JSONDecodeError):
        _stream(llmts_session, received)

    assert [p.message.content for p in received] == ["One "]
    entry = _entry(llmts_session, streaming=True)
    assert entry["stream_delivery_applied"] is True and entry["success"] is False


def test_stall_holds_then_ends_without_the_done_line(llmts_session: SessionClient) -> None:
    _fault(llmts_session, {"mode": "stall", "after_content_frames": 1, "delay_ms": 300})
    received: list[Any] = []
    started = time.monotonic()
    _stream(llmts_session, received)

    assert time.monotonic() - started >= 0.25
    assert [p.message.content for p in received] == ["One "]
    entry = _entry(llmts_session, streaming=True)
    assert entry["transport_outcome"] == "early_end" and entry["terminal_marker_observed"] is False


def test_stall_beyond_the_client_timeout_raises_read_timeout(llmts_session: SessionClient) -> None:
    _fault(llmts_session, {"mode": "stall", "after_content_frames": 1, "delay_ms": 5000})
    received: list[Any] = []
    with pytest.raises(httpx.ReadTimeout):
        for part in llmts_session.ollama_client(timeout=0.3).chat(model=MODEL, messages=HI, stream=True):
            received.append(part)

    assert [p.message.content for p in received] == ["One "]
    entry = _entry(llmts_session, streaming=True)
    assert entry["transport_outcome"] == "client_gone" and entry["terminal_marker_observed"] is False


@pytest.mark.parametrize(
    ("mode", "error"),
    [("reset_before_headers", httpx.ReadError), ("empty_response", httpx.RemoteProtocolError)],
)
def test_connection_modes_raise_a_transport_error(
    llmts_session: SessionClient, mode: str, error: type[Exception]
) -> None:
    _fault(llmts_session, {"mode": mode})
    with pytest.raises(error):
        _stream(llmts_session, [])
    # The ollama client never retries: the next scripted answer is still there.
    assert llmts_session.ollama_client().chat(model=MODEL, messages=HI).message.content == "Next."


def test_http_error_page_raises_response_error_with_the_status(llmts_session: SessionClient) -> None:
    _fault(llmts_session, {"mode": "http_error_page", "status": 503})
    with pytest.raises(ollama.ResponseError) as caught:
        _stream(llmts_session, [])
    assert caught.value.status_code == 503 and "<html>" in caught.value.error


def test_generate_streams_carry_in_stream_plans(llmts_session: SessionClient) -> None:
    _fault(llmts_session, {"mode": "early_clean_end", "after_content_frames": 1})
    parts = list(llmts_session.ollama_client().generate(model=MODEL, prompt="Hi", stream=True))

    assert [p.response for p in parts] == ["One "]
    entry = _entry(llmts_session, operation="generate")
    assert entry["transport_outcome"] == "early_end" and entry["emitted_content_frames"] == 1


# --- determinism --------------------------------------------------------------------------------------------


def test_two_sessions_with_one_seed_answer_the_same(llmts_app_server: Any) -> None:
    answers = []
    for _ in range(2):
        session = llmts_app_server.create_session()
        try:
            _configure(
                session, {"text": "Same.", "chunks": ["Sa", "me."]}, {"text": "Same."}, determinism=FIXED
            )
            client = session.ollama_client()
            streamed = [p.model_dump() for p in client.chat(model=MODEL, messages=HI, stream=True)]
            answers.append((streamed, client.generate(model=MODEL, prompt="Hi").model_dump()))
        finally:
            session.delete()
    assert answers[0] == answers[1]


def test_async_client_streams_too(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"text": "Async hi.", "chunks": ["Async", " hi."]})

    async def run() -> list[str]:
        client = llmts_session.async_ollama_client()
        return [p.message.content async for p in await client.chat(model=MODEL, messages=HI, stream=True)]

    assert asyncio.run(run()) == ["Async", " hi.", ""]


# --- realistic answers (docs/realistic-answers.md) ----------------------------------------------------------


@pytest.mark.skipif(not _THINK, reason="this ollama client has no thinking field (0.5 added it)")
def test_reasoning_is_the_thinking_field_json_and_streamed(app_session: SessionClient) -> None:
    answer = {"text": "42.", "chunks": ["4", "2."], "reasoning": {"text": "Six times seven."}}
    _configure(app_session, answer, answer, answer)
    client = app_session.ollama_client()

    whole = client.chat(model=MODEL, messages=HI)
    parts = list(client.chat(model=MODEL, messages=HI, stream=True))
    generated = client.generate(model=MODEL, prompt="Hi")

    assert (whole.message.thinking, whole.message.content) == ("Six times seven.", "42.")
    assert [(p.message.thinking, p.message.content) for p in parts] == [
        ("Six times seven.", ""),
        (None, "4"),
        (None, "2."),
        (None, ""),
    ]
    assert (generated.thinking, generated.response) == ("Six times seven.", "42.")


def test_length_finish_reason_is_done_reason_length(app_session: SessionClient) -> None:
    _configure(app_session, {"text": "Cut", "finish_reason": "length"})
    assert app_session.ollama_client().chat(model=MODEL, messages=HI).done_reason == "length"


def test_a_mixed_answer_streams_its_text_before_the_calls(app_session: SessionClient) -> None:
    mixed = {
        "text": "Let me check.",
        "tool_calls": [{"id": "c", "name": "get_weather", "arguments": {"city": "Oslo"}}],
    }
    _configure(app_session, mixed, mixed)
    client = app_session.ollama_client()

    whole = client.chat(model=MODEL, messages=HI, tools=[WEATHER])
    parts = list(client.chat(model=MODEL, messages=HI, tools=[WEATHER], stream=True))

    assert whole.message.content == "Let me check." and len(whole.message.tool_calls or []) == 1
    assert [p.message.content for p in parts] == ["Let me check.", "", ""]
    assert parts[1].message.tool_calls and parts[1].message.tool_calls[0].function.name == "get_weather"


def test_a_refusal_is_the_content(app_session: SessionClient) -> None:
    _configure(app_session, {"refusal": "I can't help with that."})
    answer = app_session.ollama_client().chat(model=MODEL, messages=HI)

    assert (answer.message.content, answer.done_reason) == ("I can't help with that.", "stop")
