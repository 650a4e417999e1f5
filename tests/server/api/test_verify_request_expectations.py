"""``POST /admin-api/verify``'s request expectations over a real server, driven by the official SDKs:
counts, order, unexpected calls, tool history and result predicates, and the streaming terminal marker
(docs/journal.md, "Verification")."""

from __future__ import annotations

import pytest

from llmts import SessionClient
from llmts.schema.journal import JournalQuery
from llmts.schema.verify import RequestExpectation, ToolExpectation, VerificationRequest
from tests.helpers import USER_HI, WEATHER_TOOL
from tests.server.api.verify_support import BIG, CLAUDE, GPT, OK, chat, configure, failure_kinds

pytestmark = pytest.mark.sdk


# --- counts, order, unexpected calls ---------------------------------------------------------------


def test_counts_pass_and_fail(app_session: SessionClient) -> None:
    configure(app_session, OK)
    chat(app_session)
    chat(app_session)
    ids = [e["request_id"] for e in app_session.requests(order="asc")]

    passed = app_session.verify(
        requests=[
            {
                "name": "chats",
                "query": {"provider": "openai", "success": True},
                "minimum_count": 2,
                "maximum_count": 2,
            }
        ]
    )
    assert (passed.passed, passed.evidence_complete, passed.failures) == (True, True, [])
    assert passed.matched_request_ids == ids

    failed = app_session.verify(requests=[{"name": "one chat", "query": {"provider": "openai"}}])
    assert (failed.passed, failed.evidence_complete) == (False, True)
    (failure,) = failed.failures
    assert (failure.kind, failure.expectation, failure.actual) == (
        "count",
        "requests[0] (one chat)",
        {"found": 2},
    )
    assert failure.expected == {"minimum": 1, "maximum": 1} and failure.request_ids == ids
    assert "expected exactly 1 matching request(s), found 2" in failed.report()

    unbounded = app_session.verify(
        requests=[RequestExpectation(name="any", query=JournalQuery(model=GPT), maximum_count=None)]
    )
    assert unbounded.passed
    none_expected = app_session.verify(
        requests=[
            {"name": "no claude", "query": {"provider": "anthropic"}, "minimum_count": 0, "maximum_count": 0}
        ]
    )
    assert none_expected.passed and none_expected.matched_request_ids == []


def test_in_order(app_session: SessionClient) -> None:
    configure(app_session, OK)
    chat(app_session, GPT)
    chat(app_session, BIG)
    small = {"name": "small", "query": {"model": GPT}}
    big = {"name": "big", "query": {"model": BIG}}

    assert app_session.verify(requests=[small, big], in_order=True).passed
    assert app_session.verify(requests=[big, small]).passed  # order only matters when asked
    reversed_order = app_session.verify(requests=[big, small], in_order=True)
    assert failure_kinds(reversed_order) == ["order"]
    assert reversed_order.failures[0].expectation == "requests[1] (small)"
    assert "sequence 1" in reversed_order.failures[0].message


def test_no_unexpected_calls(app_session: SessionClient) -> None:
    configure(app_session, OK)
    chat(app_session)
    assert app_session.verify(
        no_unexpected_calls=True, requests=[{"name": "chat", "query": {"provider": "openai"}}]
    ).passed

    app_session.anthropic_client(max_retries=0).messages.create(model=CLAUDE, max_tokens=8, messages=USER_HI)
    (claude,) = app_session.requests(provider="anthropic")
    result = app_session.verify(
        no_unexpected_calls=True, requests=[{"name": "chat", "query": {"provider": "openai"}}]
    )
    assert failure_kinds(result) == ["unexpected_call"]
    assert result.failures[0].request_ids == [claude["request_id"]]
    assert "anthropic messages -> 200" in result.failures[0].message
    # Nothing at all was expected: every call is unexpected.
    assert failure_kinds(app_session.verify(no_unexpected_calls=True)) == ["unexpected_call"]
    # The scope narrows what must be accounted for.
    assert app_session.verify(
        scope={"provider": "openai"}, no_unexpected_calls=True, requests=[{"name": "chat", "query": {}}]
    ).passed


# --- tools --------------------------------------------------------------------------------------


def _tool_flow(session: SessionClient) -> None:
    """gpt-4.1-mini calls get_weather; the gpt-4o request sends the call and its result back."""
    session.configure(
        {
            "models": [GPT, BIG],
            "scenarios": [
                {
                    "responses": [
                        {
                            "tool_calls": [
                                {
                                    "id": "call_w",
                                    "name": "get_weather",
                                    "arguments": {"city": "Paris", "days": 2},
                                }
                            ]
                        },
                        {"text": "Sunny."},
                    ]
                }
            ],
        }
    )
    first = chat(session, tools=[WEATHER_TOOL])
    chat(
        session,
        BIG,
        tools=[WEATHER_TOOL],
        messages=[
            *USER_HI,
            first.choices[0].message.model_dump(exclude_none=True),
            {
                "role": "tool",
                "tool_call_id": "call_w",
                "content": '{"sky": "clear", "temp": 21.0, "wind": [3, 5]}',
            },
        ],
    )


def test_tool_history_and_result_predicates(app_session: SessionClient) -> None:
    _tool_flow(app_session)
    request = VerificationRequest(
        requests=[
            RequestExpectation(
                name="asks for the weather",
                query=JournalQuery(model=GPT),
                tools=[
                    # Structural equality: key order and 2 == 2.0 do not matter.
                    ToolExpectation(
                        kind="response_call", name="get_weather", arguments={"days": 2.0, "city": "Paris"}
                    ),
                    ToolExpectation(kind="request_call", minimum_count=0, maximum_count=0),
                ],
            ),
            RequestExpectation(
                name="answers with the result",
                query=JournalQuery(model=BIG),
                tools=[
                    ToolExpectation(kind="request_call", name="get_weather", call_id="call_w"),
                    ToolExpectation(
                        kind="result",
                        name="get_weather",
                        call_id="call_w",
                        result={"temp": 21, "sky": "clear", "wind": [3, 5]},
                        fields=[
                            {"path": "$.temp", "expected_json": 21},
                            {"path": "/wind/1", "expected_json": 5},
                            {"path": "$.wind[0]", "expected_json": 3},
                        ],
                    ),
                    ToolExpectation(kind="response_call", maximum_count=0, minimum_count=0),
                ],
            ),
        ],
        in_order=True,
    )
    result = app_session.verify(request)
    assert result.passed, result.report()


def test_tool_predicates_that_do_not_hold_fail_with_what_was_seen(app_session: SessionClient) -> None:
    _tool_flow(app_session)
    cases = [
        {"kind": "response_call", "name": "get_weather", "arguments": {"city": "Rome", "days": 2}},
        {"kind": "request_call", "name": "get_time"},
        {"kind": "result", "call_id": "call_x"},
        {"kind": "result", "fields": [{"path": "$.temp", "expected_json": 22}]},
        {"kind": "result", "fields": [{"path": "$.missing", "expected_json": None}]},
        {"kind": "result", "result": {"sky": "clear"}},
        {"kind": "request_call", "name": "get_weather", "minimum_count": 2, "maximum_count": None},
    ]
    for tool in cases:
        query = {"model": BIG if tool["kind"] != "response_call" else GPT}
        result = app_session.verify(requests=[{"name": "t", "query": query, "tools": [tool]}])
        assert failure_kinds(result) == ["tool_count"], (tool, result.report())
        failure = result.failures[0]
        assert failure.expectation == "requests[0] (t).tools[0]"
        assert "get_weather(call_w)" in failure.message


def test_streaming_terminal_marker_requirement(llmts_session: SessionClient) -> None:
    configure(
        llmts_session,
        {"text": "Hello there.", "chunks": ["Hello", " there."]},
        {
            "text": "Hello there.",
            "chunks": ["Hello", " there."],
            "stream_delivery": {"mode": "early_clean_end", "after_content_frames": 1},
        },
        {"text": "Hello there."},
    )
    client = llmts_session.openai_client(max_retries=0)
    list(client.chat.completions.create(model=GPT, messages=USER_HI, stream=True))
    expectation = {
        "name": "streamed",
        "query": {"streaming": True},
        "require_streaming_terminal_marker": True,
    }
    assert llmts_session.verify(requests=[expectation]).passed

    list(client.chat.completions.create(model=GPT, messages=USER_HI, stream=True))  # cut before [DONE]
    result = llmts_session.verify(requests=[{**expectation, "maximum_count": None}])
    assert failure_kinds(result) == ["terminal_marker"]
    assert "early_end" in result.failures[0].message

    chat(llmts_session, stream=False)
    result = llmts_session.verify(requests=[{**expectation, "query": {"streaming": False}}])
    assert failure_kinds(result) == [
        "terminal_marker"
    ]  # a non-streamed answer has no streaming terminal marker
