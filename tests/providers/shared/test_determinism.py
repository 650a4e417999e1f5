"""Seeded wire ids and the fixed clock (``determinism``), through every provider's official SDK.

Each provider flow makes a JSON text call and a JSON tool call (provider ordinals 1 and 2), resets the
session, and makes the same two calls streamed: the streamed answers carry exactly the ids and
timestamps of the JSON ones. Two sessions with the same seed observe the same values (two runs), and the
raw bodies are byte-identical.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any

import openai
import pytest
from google.genai import types

from llmts import LlmTestServer, SessionClient
from tests.support.in_process import send_raw

pytestmark = pytest.mark.sdk

GPT, CLAUDE, GEMINI = "gpt-4.1-mini", "claude-test-1", "gemini-2.5-flash"
FIXED = "2026-01-01T00:00:00Z"
FIXED_EPOCH = 1767225600
# Fixtures leave the tool call id unset: it is derived from the seed too.
RESPONSES = [
    {"text": "Hello there.", "chunks": ["Hello", " there."]},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
]
CHAT_TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
RESPONSES_TOOLS = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]
ANTHROPIC_TOOLS = [{"name": "get_weather", "input_schema": {"type": "object"}}]
GEMINI_TOOLS = [
    types.Tool(
        function_declarations=[types.FunctionDeclaration(name="get_weather", parameters_json_schema={})]
    )
]
HI = [{"role": "user", "content": "Hi"}]


def _config(
    seed: str | None = "run-42", fixed: str | None = FIXED, responses: list[Any] = RESPONSES
) -> dict[str, Any]:
    config: dict[str, Any] = {
        "models": [GPT, CLAUDE, GEMINI],
        "azure_deployments": {"dep": GPT},
        "scenarios": [
            {
                "id": f"s-{provider}",
                "provider": provider,
                "terminal_policy": "restart",
                "responses": responses,
            }
            for provider in ("openai", "azure-openai", "anthropic", "gemini", "ollama")
        ],
    }
    if seed is not None:
        config["determinism"] = {"seed": seed, **({"fixed_utc": fixed} if fixed else {})}
    return config


# --- per-provider flows: (call, streamed?) -> the ids and timestamps the SDK saw ---------------------


def _chat(session: SessionClient, tools: bool, stream: bool) -> dict[str, Any]:
    client = session.openai_client(_strict_response_validation=True, max_retries=0)
    kwargs: dict[str, Any] = {"model": GPT, "messages": HI, "tools": CHAT_TOOLS if tools else None}
    kwargs = {k: v for k, v in kwargs.items() if v is not None}
    if not stream:
        completion = client.chat.completions.create(**kwargs)
        calls = completion.choices[0].message.tool_calls or []
        return {"id": completion.id, "created": completion.created, "calls": [c.id for c in calls]}
    chunks = list(client.chat.completions.create(stream=True, **kwargs))
    assert len({c.id for c in chunks}) == 1 and len({c.created for c in chunks}) == 1
    calls = [call.id for c in chunks for call in (c.choices[0].delta.tool_calls or []) if call.id]
    return {"id": chunks[0].id, "created": chunks[0].created, "calls": calls}


def _azure_chat(session: SessionClient, tools: bool, stream: bool) -> dict[str, Any]:
    client = session.azure_openai_client(_strict_response_validation=True, max_retries=0)
    kwargs: dict[str, Any] = {"model": "dep", "messages": HI}
    if tools:
        kwargs["tools"] = CHAT_TOOLS
    if not stream:
        completion = client.chat.completions.create(**kwargs)
        calls = completion.choices[0].message.tool_calls or []
        return {"id": completion.id, "created": completion.created, "calls": [c.id for c in calls]}
    chunks = [c for c in client.chat.completions.create(stream=True, **kwargs) if c.choices]
    calls = [call.id for c in chunks for call in (c.choices[0].delta.tool_calls or []) if call.id]
    return {"id": chunks[0].id, "created": chunks[0].created, "calls": calls}


def _responses(session: SessionClient, tools: bool, stream: bool) -> dict[str, Any]:
    client = session.openai_client(_strict_response_validation=True, max_retries=0)
    kwargs: dict[str, Any] = {"model": GPT, "input": "Hi"}
    if tools:
        kwargs["tools"] = RESPONSES_TOOLS
    if stream:
        events = list(client.responses.create(stream=True, **kwargs))
        assert events[0].response.id == events[-1].response.id
        response = events[-1].response
        added = [e.item.id for e in events if e.type == "response.output_item.added"]
        assert added == [item.id for item in response.output]
    else:
        response = client.responses.create(**kwargs)
    items = [(item.id, getattr(item, "call_id", None)) for item in response.output]
    return {"id": response.id, "created": response.created_at, "items": items}


def _anthropic(session: SessionClient, tools: bool, stream: bool) -> dict[str, Any]:
    client = session.anthropic_client(_strict_response_validation=True, max_retries=0)
    kwargs: dict[str, Any] = {"model": CLAUDE, "max_tokens": 64, "messages": HI}
    if tools:
        kwargs["tools"] = ANTHROPIC_TOOLS
    if stream:
        with client.messages.stream(**kwargs) as events:
            message = events.get_final_message()
    else:
        message = client.messages.create(**kwargs)
    return {"id": message.id, "calls": [block.id for block in message.content if block.type == "tool_use"]}


def _gemini(session: SessionClient, tools: bool, stream: bool) -> dict[str, Any]:
    client = session.gemini_client()
    config = types.GenerateContentConfig(tools=GEMINI_TOOLS) if tools else None
    if stream:
        chunks = list(client.models.generate_content_stream(model=GEMINI, contents="Hi", config=config))
        assert len({chunk.response_id for chunk in chunks}) == 1
        calls = [call.id for chunk in chunks for call in (chunk.function_calls or [])]
        return {"id": chunks[0].response_id, "calls": calls}
    response = client.models.generate_content(model=GEMINI, contents="Hi", config=config)
    return {"id": response.response_id, "calls": [call.id for call in response.function_calls or []]}


Flow = Callable[[SessionClient, bool, bool], dict[str, Any]]
FLOWS: dict[str, Flow] = {
    "openai-chat": _chat,
    "openai-responses": _responses,
    "azure-openai-chat": _azure_chat,
    "anthropic": _anthropic,
    "gemini": _gemini,
}


def _run(session: SessionClient, flow: Flow) -> list[dict[str, Any]]:
    """Ordinals 1 and 2 as JSON, then (after a reset) the same ordinals streamed: identical metadata."""
    as_json = [flow(session, False, False), flow(session, True, False)]
    session.reset()
    streamed = [flow(session, False, True), flow(session, True, True)]
    assert streamed == as_json
    return as_json


@pytest.mark.parametrize("name", list(FLOWS))
def test_same_seed_gives_identical_ids_and_timestamps_across_runs_and_json_and_streams(
    llmts_app_server: LlmTestServer, name: str
) -> None:
    flow = FLOWS[name]
    first, second, other_seed = (llmts_app_server.create_session() for _ in range(3))
    try:
        first.configure(_config())
        second.configure(_config())
        other_seed.configure(_config(seed="run-43"))

        observed = _run(first, flow)
        assert _run(second, flow) == observed
        assert observed[0]["id"] != observed[1]["id"]
        assert all(value.get("created", FIXED_EPOCH) == FIXED_EPOCH for value in observed)
        call_ids = observed[1].get("calls") or [call for _, call in observed[1]["items"]]
        assert len(call_ids) == 1 and call_ids[0].startswith("call_")

        different = _run(other_seed, flow)
        assert different[0]["id"] != observed[0]["id"]
        assert (different[1].get("calls") or different[1]["items"]) != (
            observed[1].get("calls") or observed[1]["items"]
        )
    finally:
        for session in (first, second, other_seed):
            session.delete()


RAW_CALLS = {
    "openai-chat": ("/openai/v1/chat/completions", {"model": GPT, "messages": HI}),
    "openai-responses": ("/openai/v1/responses", {"model": GPT, "input": "Hi"}),
    "azure-openai-chat": (
        "/azure-openai/openai/deployments/dep/chat/completions?api-version=2024-10-21",
        {"messages": HI},
    ),
    "anthropic": ("/anthropic/v1/messages", {"model": CLAUDE, "max_tokens": 64, "messages": HI}),
    "gemini": (
        f"/gemini/v1beta/models/{GEMINI}:generateContent",
        {"contents": [{"parts": [{"text": "Hi"}]}]},
    ),
    "ollama-chat": ("/ollama/api/chat", {"model": GPT, "messages": HI, "stream": False}),
    "ollama-generate": ("/ollama/api/generate", {"model": GPT, "prompt": "Hi", "stream": False}),
    "ollama-openai-chat": ("/ollama/v1/chat/completions", {"model": GPT, "messages": HI}),
}


@pytest.mark.parametrize("name", list(RAW_CALLS))
def test_raw_bodies_and_date_header_are_byte_identical_across_runs(
    llmts_app_server: LlmTestServer, name: str
) -> None:
    path, body = RAW_CALLS[name]
    stream_path = path.replace(":generateContent", ":streamGenerateContent?alt=sse")
    stream_body = body if "gemini" in name else {**body, "stream": True}
    sessions = [llmts_app_server.create_session() for _ in range(2)]
    try:
        answers = []
        for session in sessions:
            session.configure(_config(responses=RESPONSES[:1]))
            json_answer = send_raw(session, "POST", path, body)
            stream_answer = send_raw(session, "POST", stream_path, stream_body)
            assert (json_answer.status, stream_answer.status) == (200, 200)
            answers.append((json_answer, stream_answer))
        (json_a, stream_a), (json_b, stream_b) = answers
        assert json_a.body == json_b.body
        assert stream_a.body == stream_b.body
        for answer in (json_a, stream_a, json_b, stream_b):
            assert parsedate_to_datetime(answer.headers["date"]) == datetime(2026, 1, 1, tzinfo=timezone.utc)
        assert json_a.headers["x-request-id" if name != "anthropic" else "request-id"] != json_b.headers.get(
            "x-request-id" if name != "anthropic" else "request-id"
        )  # attempt ids stay unique
    finally:
        for session in sessions:
            session.delete()


def test_sessions_and_providers_keep_independent_counters(llmts_app_server: LlmTestServer) -> None:
    busy, fresh, plain = (llmts_app_server.create_session() for _ in range(3))
    try:
        for session in (busy, fresh, plain):
            session.configure(_config())
        # busy: openai, anthropic, openai; fresh: openai only. Other sessions and other providers do not
        # advance a provider's ordinal.
        busy_first = _chat(busy, False, False)
        _anthropic(busy, False, False)
        busy_second = _chat(busy, True, False)
        fresh_first = _chat(fresh, False, False)
        fresh_second = _chat(fresh, True, False)
        assert (busy_first, busy_second) == (fresh_first, fresh_second)
        # Failed attempts consume ordinals too: an unknown model is rejected as ordinal 1.
        plain.configure({**_config(), "scenarios": [{"provider": "openai", "responses": RESPONSES}]})
        client = plain.openai_client(max_retries=0)
        with pytest.raises(openai.NotFoundError, match="does not exist"):
            client.chat.completions.create(model="gpt-unknown", messages=HI)
        assert _chat(plain, False, False)["id"] == fresh_second["id"]
        entries = plain.requests(order="asc")
        assert [e["wire_sequence"] for e in entries] == [1, 2]
        assert [e["wire_clock_mode"] for e in entries] == ["fixed", "fixed"]
        assert entries[1]["wire_created_at"] == FIXED_EPOCH
    finally:
        for session in (busy, fresh, plain):
            session.delete()


def test_live_mode_has_random_ids_and_real_time(llmts_session: SessionClient) -> None:
    llmts_session.configure(_config(seed=None))
    client = llmts_session.openai_client(max_retries=0)
    before = int(datetime.now(timezone.utc).timestamp())
    first = client.chat.completions.with_raw_response.create(model=GPT, messages=HI)
    llmts_session.reset()
    second = client.chat.completions.create(model=GPT, messages=HI)

    assert first.parse().id != second.id
    assert before - 1 <= second.created <= before + 60
    date = parsedate_to_datetime(first.headers["date"])
    assert abs(date.timestamp() - before) < 60
    (entry,) = llmts_session.requests()
    assert (entry["wire_clock_mode"], entry["wire_sequence"]) == ("live", 1)


def test_seed_without_fixed_clock_seeds_ids_but_keeps_live_time(llmts_server: LlmTestServer) -> None:
    sessions = [llmts_server.create_session() for _ in range(2)]
    try:
        seen = []
        for session in sessions:
            session.configure(_config(fixed=None))
            raw = session.openai_client(max_retries=0).chat.completions.with_raw_response.create(
                model=GPT, messages=HI
            )
            seen.append(raw.parse())
            assert abs(parsedate_to_datetime(raw.headers["date"]).timestamp() - seen[-1].created) < 60
        assert seen[0].id == seen[1].id
        assert seen[0].created != FIXED_EPOCH
        assert sessions[0].requests()[0]["wire_clock_mode"] == "live"
    finally:
        for session in sessions:
            session.delete()


def test_stored_responses_keep_their_metadata(app_session: SessionClient) -> None:
    app_session.configure(_config())
    client = app_session.openai_client(_strict_response_validation=True, max_retries=0)
    created = client.responses.create(model=GPT, input="Hi")
    retrieved = client.responses.retrieve(created.id)
    replayed = list(client.responses.retrieve(created.id, stream=True))

    assert retrieved.model_dump() == created.model_dump()
    assert replayed[-1].response.id == created.id and replayed[-1].response.created_at == FIXED_EPOCH
    # Retrieving consumed ordinals (2, 3) but kept the stored identity.
    assert [e["wire_sequence"] for e in app_session.requests(order="asc")] == [1, 2, 3]
