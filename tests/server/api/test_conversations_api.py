"""``GET /admin-api/conversations`` and ``POST /admin-api/match/explain`` read back exactly what happened and
change nothing; the conversation header is validated on provider and control routes."""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlsplit

import anthropic
import openai
import pytest

from llmts import ConfigBuilder, ServerError, SessionClient
from tests.support.in_process import send_raw

MODEL = "gpt-4.1-mini"
START = [{"role": "user", "content": "Start"}]
APPROVE = [
    *START,
    {"role": "assistant", "content": "Approve or cancel?"},
    {"role": "user", "content": "Approve"},
]


def configure(session: SessionClient, *, fallback: bool = True) -> None:
    builder = (
        ConfigBuilder()
        .conversation("approval")
        .step("ask")
        .when(latest_user_equals="Start", turn=1)
        .text("Approve or cancel?")
        .then("approve", "any")
        .step("approve")
        .when(latest_user_equals="Approve", turn=2)
        .text("Approved")
        .complete()
        .step("any")
        .when(turn=2)
        .text("Something")
        .complete()
        .config
    )
    if fallback:
        builder.scenario("fallback", terminal_policy="repeat_last_response").text("fallback")
    session.configure(builder)


def snapshot(session: SessionClient) -> tuple[Any, Any]:
    return session.conversations(), [(e["request_id"], e["status"]) for e in session.requests()]


@pytest.mark.sdk
def test_explain_predicts_selection_and_changes_nothing(app_session: SessionClient) -> None:
    configure(app_session)
    chat = app_session.openai_client(max_retries=0)

    fresh = app_session.explain({"model": MODEL, "messages": START})
    assert (fresh["outcome"], fresh["selected_scenario"], fresh["selected_step"]) == (
        "start",
        "approval",
        "ask",
    )
    assert fresh["matched_candidates"] == ["approval", "fallback"] and fresh["shadowed_candidates"] == [
        "fallback"
    ]
    assert fresh["logical_turn"] == 1 and fresh["conversation_id"] == "default"
    other = app_session.explain({"messages": [{"role": "user", "content": "Hello"}]})
    graph, scenario = other["candidates"]
    assert (other["outcome"], other["selected_scenario"]) == ("scenario", "fallback")
    assert (graph["claims"], graph["steps"][0]["failed"]) == (False, ["latest_user_equals"])
    assert (scenario["selected"], scenario["next_response_index"]) == (True, 0)
    assert snapshot(app_session) == ([], [])  # nothing ran, nothing was recorded

    assert (
        chat.chat.completions.create(model=MODEL, messages=START).choices[0].message.content
        == "Approve or cancel?"
    )
    before = snapshot(app_session)
    branch = app_session.explain({"messages": APPROVE})
    replay = app_session.explain({"messages": START})
    stale = app_session.explain({"messages": [{"role": "user", "content": "Start again"}]})
    assert snapshot(app_session) == before

    assert (branch["outcome"], branch["selected_step"], branch["logical_turn"]) == ("execute", "approve", 2)
    steps = branch["candidates"][0]["steps"]
    # Both alternatives match; "approve" comes first in then-order and shadows "any".
    assert [(s["step"], s["matched"], s["selected"], s["shadowed"]) for s in steps] == [
        ("approve", True, True, False),
        ("any", True, False, True),
    ]
    assert branch["shadowed_candidates"] == ["fallback"]
    assert (replay["outcome"], replay["selected_step"]) == ("replay", "ask")
    assert (stale["outcome"], stale["error_code"]) == ("rejected", "conversation_turn_not_advanced")

    assert (
        chat.chat.completions.create(model=MODEL, messages=APPROVE).choices[0].message.content == "Approved"
    )
    done = app_session.explain({"messages": [{"role": "user", "content": "more"}]})
    assert (done["outcome"], done["error_code"]) == ("rejected", "conversation_completed")


@pytest.mark.sdk
def test_status_reads_back_each_identity(app_session: SessionClient) -> None:
    configure(app_session, fallback=False)
    one = app_session.for_conversation("one").openai_client(max_retries=0)
    two = app_session.for_conversation("two").openai_client(max_retries=0)
    one.chat.completions.create(model=MODEL, messages=START)
    one.chat.completions.create(model=MODEL, messages=APPROVE)
    two.chat.completions.create(model=MODEL, messages=START)
    with pytest.raises(openai.ConflictError):
        two.chat.completions.create(model=MODEL, messages=[*APPROVE, {"role": "assistant", "content": "x"}])

    listing = app_session.conversations()
    assert [s["conversation_id"] for s in listing] == ["one", "two"]
    assert app_session.for_conversation("two").conversations() == [listing[1]]
    first, second = listing
    assert first == {
        **first,
        "scenario": "approval",
        "provider": "openai",
        "state": "completed",
        "busy": False,
        "terminal": True,
        "terminal_policy": "reject",
        "run": 1,
        "executions": 2,
        "max_steps": 64,
        "executed_steps": ["ask", "approve"],
        "last_step": "approve",
        "last_turn": 2,
        "last_successful_turn": 2,
        "in_flight_step": None,
        "next_steps": [],
        "unvisited_steps": ["any"],
        "replays": 0,
        "replayable": True,
    }
    assert (second["executed_steps"], second["next_steps"], second["last_turn"]) == (
        ["ask"],
        ["approve", "any"],
        1,
    )
    # Reading status and explanations changed nothing.
    assert app_session.conversations() == listing


def test_explain_uses_the_conversation_header_and_credential(app_session: SessionClient) -> None:
    configure(app_session, fallback=False)
    conversation = app_session.for_conversation("mine")
    chat = conversation.openai_client(max_retries=0)
    chat.chat.completions.create(model=MODEL, messages=START)

    assert conversation.explain({"messages": APPROVE})["outcome"] == "execute"
    assert app_session.explain({"messages": APPROVE})["error_code"] == "conversation_step_mismatch"
    other_key = conversation.explain({"messages": APPROVE}, credential="sk-someone-else")
    assert other_key["error_code"] == "conversation_step_mismatch"
    assert conversation.explain({"messages": APPROVE}, "anthropic")["candidates"][0]["state"] is None


def test_explain_rejects_bad_bodies(app_session: SessionClient) -> None:
    configure(app_session)
    for body, path in [
        ({}, "request"),
        ({"request": {"messages": []}}, "request.messages"),
        ({"request": {"messages": [{"role": "robot", "text": "x"}]}}, "request.messages[0].role"),
        ({"provider_namespace": "acme", "request": {"messages": START}}, "provider_namespace"),
    ]:
        with pytest.raises(ServerError) as caught:
            app_session.server.request("POST", "/admin-api/match/explain", body, session_id=app_session.id)
        assert caught.value.status == 400 and caught.value.details[0]["path"] == path


def test_explain_reports_model_and_fixture_problems(app_session: SessionClient) -> None:
    app_session.configure(
        ConfigBuilder()
        .models("gpt-4.1-mini")
        .conversation("t")
        .step("call")
        .tool_call("get_weather", {"city": "Paris"})
        .complete()
    )
    unknown = app_session.explain({"model": "gpt-9", "messages": START})
    assert (unknown["outcome"], unknown["error_code"]) == ("rejected", "model_not_found")
    no_tools = app_session.explain({"messages": START})
    assert (no_tools["outcome"], no_tools["error_code"]) == ("rejected", "llm_test_server_fixture_mismatch")
    with_tools = app_session.explain({"messages": START, "tool_names": ["get_weather"]})
    assert (with_tools["outcome"], with_tools["selected_step"]) == ("start", "call")


@pytest.mark.parametrize(
    "value",
    ["", "x" * 129, "a,b"],
    ids=["empty", "too-long", "comma"],
)
def test_invalid_conversation_header_is_a_400_in_the_provider_envelope(
    app_session: SessionClient, value: str
) -> None:
    configure(app_session)
    headers = {"X-Llm-Test-Server-Conversation": value}
    with pytest.raises(openai.BadRequestError) as caught:
        app_session.openai_client(max_retries=0, default_headers=headers).chat.completions.create(
            model=MODEL, messages=START
        )
    assert caught.value.code == "invalid_conversation_id"
    with pytest.raises(anthropic.BadRequestError) as claude:
        app_session.anthropic_client(max_retries=0, default_headers=headers).messages.create(
            model=MODEL, max_tokens=8, messages=START
        )
    assert claude.value.body["error"]["code"] == "invalid_conversation_id"
    with pytest.raises(ServerError) as control:
        app_session.conversations(value)
    assert (control.value.status, control.value.code) == (400, "invalid_conversation_id")
    assert app_session.conversations() == []


def test_a_repeated_conversation_header_is_rejected(llmts_session: SessionClient) -> None:
    configure(llmts_session)
    body = {"model": MODEL, "messages": START}
    path = "/openai/v1/chat/completions"
    parts = urlsplit(llmts_session.provider_base)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        conn.putrequest("POST", parts.path + path)
        payload = json.dumps(body).encode()
        for name, value in [
            ("Content-Type", "application/json"),
            ("Content-Length", str(len(payload))),
            ("X-Llm-Test-Server-Conversation", "a"),
            ("X-Llm-Test-Server-Conversation", "b"),
        ]:
            conn.putheader(name, value)
        conn.endheaders(payload)
        response = conn.getresponse()
        status, error = response.status, json.loads(response.read())["error"]
    finally:
        conn.close()
    assert (status, error["code"]) == (400, "invalid_conversation_id")
    blank = send_raw(llmts_session, "POST", path, body, {"X-Llm-Test-Server-Conversation": " \t "})
    assert (blank.status, blank.json()["error"]["code"]) == (400, "invalid_conversation_id")
    ok = send_raw(llmts_session, "POST", path, body, {"X-Llm-Test-Server-Conversation": "a"})
    assert ok.status == 200 and ok.json()["choices"][0]["message"]["content"] == "Approve or cancel?"


@pytest.mark.sdk
def test_the_journal_records_the_conversation_id(app_session: SessionClient) -> None:
    app_session.configure(ConfigBuilder().scenario(terminal_policy="repeat_last_response").text("queued"))
    app_session.for_conversation("x").openai_client(max_retries=0).chat.completions.create(
        model=MODEL, messages=START
    )
    app_session.openai_client(max_retries=0).chat.completions.create(model=MODEL, messages=START)

    assert [(e["conversation"], e["step"]) for e in app_session.requests(order="asc")] == [
        ("x", None),
        (None, None),
    ]
    assert len(app_session.requests(conversation="x")) == 1
    assert app_session.conversations() == []  # scenarios keep no conversation state
