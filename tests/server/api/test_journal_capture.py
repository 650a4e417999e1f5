"""What a journal entry keeps: payload previews, structured tool calls and results, retention limits
(eviction, sticky truncation), and attempts that were rejected, failed or faulted."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import openai
import pytest
from google.genai import types

from llmts import SessionClient
from tests.helpers import USER_HI, WEATHER_TOOL
from tests.support.in_process import send_raw

pytestmark = pytest.mark.sdk

MODEL = "gpt-4.1-mini"


def _client(session: SessionClient) -> Any:
    return session.openai_client(max_retries=0)


def test_previews_hold_the_request_body_and_the_response(app_session: SessionClient) -> None:
    app_session.configure({"scenarios": [{"responses": [{"text": "Hello there."}]}]})
    body = {"model": MODEL, "messages": USER_HI}
    response = send_raw(app_session, "POST", "/openai/v1/chat/completions", body)

    (entry,) = app_session.requests()
    assert json.loads(entry["request_preview"]) == body
    assert entry["request_bytes"] == len(json.dumps(body))
    assert entry["response_preview"] == response.body.decode()
    assert entry["response_bytes"] == len(response.body)
    assert (entry["request_truncated"], entry["response_truncated"], entry["truncated"]) == (
        False,
        False,
        False,
    )


def test_stream_preview_is_the_frames_concatenated(app_session: SessionClient) -> None:
    app_session.configure({"scenarios": [{"responses": [{"text": "Hi you", "chunks": ["Hi", " you"]}]}]})
    response = send_raw(
        app_session,
        "POST",
        "/openai/v1/chat/completions",
        {"model": MODEL, "messages": USER_HI, "stream": True},
    )
    (entry,) = app_session.requests()
    assert entry["response_preview"] == response.body.decode()
    assert entry["response_preview"].endswith("data: [DONE]\n\n")
    assert entry["streaming"] and entry["terminal_marker_observed"]


def test_tool_calls_from_the_response_and_the_history_and_tool_results(app_session: SessionClient) -> None:
    app_session.configure(
        {
            "scenarios": [
                {
                    "responses": [
                        {
                            "tool_calls": [
                                {"id": "call_w", "name": "get_weather", "arguments": {"city": "Paris"}}
                            ]
                        },
                        {"text": "Sunny in Paris."},
                    ]
                }
            ]
        }
    )
    client = _client(app_session)
    first = client.chat.completions.create(model=MODEL, messages=USER_HI, tools=[WEATHER_TOOL])
    history = [
        *USER_HI,
        first.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": "call_w", "content": '{"sky": "clear", "temp": 21}'},
    ]
    client.chat.completions.create(model=MODEL, messages=history, tools=[WEATHER_TOOL])

    calling, answering = app_session.requests(order="asc")
    call = {"id": "call_w", "name": "get_weather", "arguments": '{"city":"Paris"}', "truncated": False}
    assert calling["response_tool_calls"] == [call]
    assert calling["request_tool_calls"] == calling["tool_results"] == []
    assert answering["response_tool_calls"] == []
    assert answering["request_tool_calls"] == [call]
    assert answering["tool_results"] == [
        {
            "call_id": "call_w",
            "name": "get_weather",
            "content": '{"sky": "clear", "temp": 21}',
            "truncated": False,
        }
    ]


def test_tool_results_of_anthropic_and_gemini_resolve_their_call_names(app_session: SessionClient) -> None:
    app_session.configure(
        {
            "models": ["claude-test-1", "gemini-2.5-flash"],
            "scenarios": [{"terminal_policy": "repeat_last_response", "responses": [{"text": "ok"}]}],
        }
    )
    app_session.anthropic_client(max_retries=0).messages.create(
        model="claude-test-1",
        max_tokens=16,
        messages=[
            {"role": "user", "content": "Weather?"},
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Oslo"}}
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "cold"}],
            },
        ],
    )
    gemini = app_session.gemini_client()
    gemini.models.generate_content(
        model="gemini-2.5-flash",
        contents=[
            types.Content(role="user", parts=[types.Part(text="Weather?")]),
            types.Content(
                role="model",
                parts=[
                    types.Part(function_call=types.FunctionCall(id="fc_1", name="get_weather", args={"c": 1}))
                ],
            ),
            types.Content(
                role="user",
                parts=[
                    types.Part(
                        function_response=types.FunctionResponse(
                            id="fc_1", name="get_weather", response={"t": 2}
                        )
                    )
                ],
            ),
        ],
    )
    claude, gem = app_session.requests(order="asc")
    assert claude["request_tool_calls"] == [
        {"id": "toolu_1", "name": "get_weather", "arguments": '{"city":"Oslo"}', "truncated": False}
    ]
    assert claude["tool_results"] == [
        {"call_id": "toolu_1", "name": "get_weather", "content": "cold", "truncated": False}
    ]
    assert gem["request_tool_calls"][0]["id"] == "fc_1"
    assert gem["tool_results"] == [
        {"call_id": "fc_1", "name": "get_weather", "content": '{"t":2}', "truncated": False}
    ]


def test_small_previews_truncate_and_truncation_is_sticky_until_reset(app_session: SessionClient) -> None:
    app_session.configure(
        {
            "journal": {"preview_bytes": 40},
            "scenarios": [
                {
                    "terminal_policy": "repeat_last_response",
                    "responses": [
                        {"tool_calls": [{"id": "c1", "name": "get_weather", "arguments": {"city": "P" * 80}}]}
                    ],
                }
            ],
        }
    )
    client = _client(app_session)
    client.chat.completions.create(model=MODEL, messages=USER_HI, tools=[WEATHER_TOOL])

    _, headers, (entry,) = app_session.server.request("GET", "/admin-api/requests", session_id=app_session.id)
    assert headers["X-Retention-Truncated"] == "true"
    assert entry["truncated"] and entry["request_truncated"] and entry["response_truncated"]
    assert len(entry["request_preview"]) == 40 and entry["request_bytes"] > 40
    assert len(entry["response_preview"]) == 40 and entry["response_bytes"] > 40
    (call,) = entry["response_tool_calls"]
    assert call["truncated"] and len(call["arguments"]) == 40

    # Sticky: later entries that fit do not clear it (even once the cut entry is evicted); reset does.
    app_session.configure(
        {"journal": {"preview_bytes": 200, "max_entries": 1}, "scenarios": [{"responses": [{"text": "ok"}]}]}
    )
    assert app_session.export()["evidence"]["retention_truncated"] is False
    send_raw(app_session, "POST", "/openai/v1/chat/completions", b"{" + b" " * 300 + b"}")
    send_raw(app_session, "POST", "/openai/v1/chat/completions", b"{}")
    (kept,) = app_session.requests()
    assert not kept["truncated"]
    assert app_session.export()["evidence"]["retention_truncated"] is True
    app_session.reset()
    assert app_session.export()["evidence"]["retention_truncated"] is False


def test_eviction_by_entries_and_by_bytes_is_counted(app_session: SessionClient) -> None:
    app_session.configure(
        {
            "journal": {"max_entries": 3},
            "scenarios": [{"terminal_policy": "repeat_last_response", "responses": [{"text": "x"}]}],
        }
    )
    client = _client(app_session)
    for _ in range(5):
        client.chat.completions.create(model=MODEL, messages=USER_HI)
    _, headers, entries = app_session.server.request(
        "GET", "/admin-api/requests?order=asc", session_id=app_session.id
    )
    assert [e["sequence"] for e in entries] == [3, 4, 5]
    assert (headers["X-Total-Observed"], headers["X-Evicted-Count"]) == ("5", "2")
    evidence = app_session.export()["evidence"]
    assert (evidence["first_retained_sequence"], evidence["last_retained_sequence"]) == (3, 5)

    # Bytes: each entry retains its previews; 4 KiB holds only a couple of these.
    app_session.configure(
        {
            "journal": {"max_bytes": 4096},
            "scenarios": [{"terminal_policy": "repeat_last_response", "responses": [{"text": "y" * 1000}]}],
        }
    )
    for _ in range(4):
        client.chat.completions.create(model=MODEL, messages=USER_HI)
    evidence = app_session.export()["evidence"]
    assert evidence["total_observed"] == 4 and evidence["evicted_count"] >= 2
    assert evidence["retained_byte_count"] <= 4096
    assert evidence["last_retained_sequence"] == 4


def test_rejected_failed_and_unmatched_attempts_are_recorded(app_session: SessionClient) -> None:
    app_session.configure(
        {
            "provider_credentials": {"anthropic": "sk-ant"},
            "models": [MODEL, "claude-test-1"],
            "scenarios": [
                {
                    "provider": "openai",
                    "responses": [{"error": {"status": 503, "code": "overloaded", "message": "busy"}}],
                }
            ],
        }
    )
    client = _client(app_session)
    with pytest.raises(openai.InternalServerError):
        client.chat.completions.create(model=MODEL, messages=USER_HI)  # scripted error
    with pytest.raises(openai.ConflictError):
        client.chat.completions.create(model=MODEL, messages=USER_HI)  # exhausted
    with pytest.raises(anthropic.AuthenticationError):
        app_session.anthropic_client(api_key="wrong", max_retries=0).messages.create(
            model="claude-test-1", max_tokens=8, messages=USER_HI
        )
    with pytest.raises(anthropic.ConflictError):
        app_session.anthropic_client(api_key="sk-ant", max_retries=0).messages.create(
            model="claude-test-1", max_tokens=8, messages=USER_HI
        )  # no scenario serves anthropic
    bad = send_raw(app_session, "POST", "/openai/v1/chat/completions", b"{not json")
    assert bad.status == 400

    entries = app_session.requests(order="asc")
    assert [(e["status"], e["error_code"], e["success"]) for e in entries] == [
        (503, "overloaded", False),
        (409, "llm_test_server_scenario_exhausted", False),
        (401, "invalid_api_key", False),
        (409, "llm_test_server_no_matching_scenario", False),
        (400, "invalid_json", False),
    ]
    assert all(e["completed"] and e["request_preview"] and e["response_preview"] for e in entries)
    assert entries[-1]["request_preview"] == "{not json"
    assert json.loads(entries[0]["response_preview"])["error"]["code"] == "overloaded"


def test_connection_faults_are_recorded_without_a_response(llmts_session: SessionClient) -> None:
    llmts_session.configure(
        {
            "scenarios": [
                {"responses": [{"text": "never", "stream_delivery": {"mode": "reset_before_headers"}}]}
            ]
        }
    )
    with pytest.raises(openai.APIConnectionError):
        _client(llmts_session).chat.completions.create(model=MODEL, messages=USER_HI)
    (entry,) = llmts_session.requests()
    assert (entry["status"], entry["success"], entry["transport_outcome"]) == (None, False, "aborted")
    assert entry["request_preview"] and entry["response_preview"] is None


@pytest.mark.parametrize(
    ("delivery", "outcome"),
    [
        ({"mode": "early_clean_end", "after_content_frames": 2}, "early_end"),
        ({"mode": "truncate_bytes", "after_content_frames": 2, "cut_bytes": 9}, "early_end"),
    ],
)
def test_a_stream_cut_short_keeps_only_what_was_written(
    llmts_session: SessionClient, delivery: dict[str, Any], outcome: str
) -> None:
    """The preview of a stream a fault cut short is what the client got, not the frames llmts rendered."""
    chunks = ["Once ", "upon ", "a time", " there was", " a robot."]
    response = {"text": "".join(chunks), "chunks": chunks, "stream_delivery": delivery}
    llmts_session.configure({"scenarios": [{"responses": [response]}]})
    received = b""
    client = _client(llmts_session)
    with client.chat.completions.with_streaming_response.create(
        model=MODEL, messages=USER_HI, stream=True
    ) as response:
        for data in response.iter_bytes():
            received += data

    (entry,) = llmts_session.requests()
    assert entry["transport_outcome"] == outcome
    assert entry["response_preview"] == received.decode()
    assert entry["response_bytes"] == len(received) and not entry["response_truncated"]
    assert "a time" not in entry["response_preview"] and "[DONE]" not in entry["response_preview"]
    assert entry["answer_text"] == "Once upon "  # the text of the two content frames written


def test_operation_chat_finds_every_chat_route_and_nothing_else(llmts_session: SessionClient) -> None:
    """The operation names (docs/journal.md) filter the journal and verification: ``chat`` is every chat
    route (each keeps its own ``operation``), not the model lists, token counts or embeddings around them."""
    llmts_session.configure(
        {"scenarios": [{"responses": [{"text": "Hi."}], "terminal_policy": "repeat_last_response"}]}
    )
    openai_client = llmts_session.openai_client(max_retries=0, _strict_response_validation=True)
    openai_client.chat.completions.create(model=MODEL, messages=USER_HI)
    openai_client.responses.create(model=MODEL, input="hi")
    openai_client.embeddings.create(model="text-embedding-3-small", input="hi", encoding_format="float")
    openai_client.models.list()
    claude = llmts_session.anthropic_client(max_retries=0, _strict_response_validation=True)
    claude.messages.create(model="claude-sonnet-4-5", max_tokens=16, messages=USER_HI)
    claude.messages.count_tokens(model="claude-sonnet-4-5", messages=USER_HI)
    gemini = llmts_session.gemini_client()  # kept: a dropped genai Client closes its connection pool
    gemini.models.generate_content(model="gemini-2.5-flash", contents="hi")

    families = {entry["operation"]: entry["operation_family"] for entry in llmts_session.requests()}
    assert families == {
        "chat.completions": "chat",
        "responses": "chat",
        "embeddings": "embeddings",
        "models.list": None,
        "messages": "chat",
        "messages.count_tokens": None,
        "generate_content": "chat",
    }
    chat = llmts_session.requests(operation="chat", order="asc")
    assert [entry["operation"] for entry in chat] == [
        "chat.completions",
        "responses",
        "messages",
        "generate_content",
    ]
    assert [entry["operation"] for entry in llmts_session.requests(operation="messages")] == ["messages"]
    assert len(llmts_session.requests(operation="embeddings")) == 1
    passed = llmts_session.verify(
        requests=[{"name": "chats", "query": {"operation": "chat"}, "minimum_count": 4, "maximum_count": 4}]
    )
    assert passed.passed, passed
    failed = llmts_session.verify(
        requests=[
            {
                "name": "claude",
                "query": {"operation": "chat", "provider": "anthropic"},
                "minimum_count": 2,
                "maximum_count": 2,
            }
        ]
    )
    assert not failed.passed
