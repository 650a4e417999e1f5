"""``POST /admin-api/verify`` over a real server, driven by the official SDKs: counts, order, unexpected
calls, tool history and result predicates, terminal markers, retries (Retry-After honoured or not),
conversation graphs, incomplete evidence, malformed requests, and that verifying changes nothing."""

from __future__ import annotations

import threading
import time
from functools import partial
from typing import Any

import anthropic
import openai
import pytest

from llmts import LlmTestServer, ServerError, SessionClient
from llmts.schema.journal import JournalQuery
from llmts.schema.verify import RequestExpectation, ToolExpectation, VerificationRequest
from tests.helpers import APPROVAL_STEPS, USER_HI, WEATHER_TOOL
from tests.support.configure import script
from tests.support.in_process import send_raw

pytestmark = pytest.mark.sdk

GPT, BIG, CLAUDE = "gpt-4.1-mini", "gpt-4o", "claude-test-1"
REPEAT = "repeat_last_response"
OK = {"text": "ok"}


_configure = partial(script, models=[GPT, BIG, CLAUDE], scenario={"terminal_policy": REPEAT})


def _chat(session: SessionClient, model: str = GPT, **kwargs: Any) -> Any:
    return session.openai_client(max_retries=0).chat.completions.create(
        model=model, messages=kwargs.pop("messages", USER_HI), **kwargs
    )


def _kinds(result: Any) -> list[str]:
    return [failure.kind for failure in result.failures]


# --- counts, order, unexpected calls ---------------------------------------------------------------


def test_counts_pass_and_fail(app_session: SessionClient) -> None:
    _configure(app_session, OK)
    _chat(app_session)
    _chat(app_session)
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
    _configure(app_session, OK)
    _chat(app_session, GPT)
    _chat(app_session, BIG)
    small = {"name": "small", "query": {"model": GPT}}
    big = {"name": "big", "query": {"model": BIG}}

    assert app_session.verify(requests=[small, big], in_order=True).passed
    assert app_session.verify(requests=[big, small]).passed  # order only matters when asked
    reversed_order = app_session.verify(requests=[big, small], in_order=True)
    assert _kinds(reversed_order) == ["order"]
    assert reversed_order.failures[0].expectation == "requests[1] (small)"
    assert "sequence 1" in reversed_order.failures[0].message


def test_no_unexpected_calls(app_session: SessionClient) -> None:
    _configure(app_session, OK)
    _chat(app_session)
    assert app_session.verify(
        no_unexpected_calls=True, requests=[{"name": "chat", "query": {"provider": "openai"}}]
    ).passed

    app_session.anthropic_client(max_retries=0).messages.create(model=CLAUDE, max_tokens=8, messages=USER_HI)
    (claude,) = app_session.requests(provider="anthropic")
    result = app_session.verify(
        no_unexpected_calls=True, requests=[{"name": "chat", "query": {"provider": "openai"}}]
    )
    assert _kinds(result) == ["unexpected_call"]
    assert result.failures[0].request_ids == [claude["request_id"]]
    assert "anthropic messages -> 200" in result.failures[0].message
    # Nothing at all was expected: every call is unexpected.
    assert _kinds(app_session.verify(no_unexpected_calls=True)) == ["unexpected_call"]
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
    first = _chat(session, tools=[WEATHER_TOOL])
    _chat(
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
        assert _kinds(result) == ["tool_count"], (tool, result.report())
        failure = result.failures[0]
        assert failure.expectation == "requests[0] (t).tools[0]"
        assert "get_weather(call_w)" in failure.message


def test_streaming_terminal_marker_requirement(llmts_session: SessionClient) -> None:
    _configure(
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
    assert _kinds(result) == ["terminal_marker"]
    assert "early_end" in result.failures[0].message

    _chat(llmts_session, stream=False)
    result = llmts_session.verify(requests=[{**expectation, "query": {"streaming": False}}])
    assert _kinds(result) == ["terminal_marker"]  # a non-streamed answer has no streaming terminal marker


# --- retries ------------------------------------------------------------------------------------

RATE_LIMITED = {
    "error": {"status": 429, "code": "rate_limit_exceeded", "message": "Slow down", "retry_after": 0.6}
}


def test_sdk_honouring_retry_after_passes_the_retry_expectation(app_session: SessionClient) -> None:
    _configure(app_session, RATE_LIMITED, {"text": "Done."})
    client = app_session.openai_client(
        max_retries=2, default_headers={"X-Llm-Test-Server-Retry-Group": "ask-1"}
    )
    assert client.chat.completions.create(model=GPT, messages=USER_HI).choices[0].message.content == "Done."

    retry = {
        "group": "ask-1",
        "minimum_attempts": 2,
        "maximum_attempts": 2,
        "status_sequence": [429, 200],
        "minimum_retry_after_seconds": 0.5,
        "respect_retry_after": True,
    }
    result = app_session.verify(retries=[retry], no_unexpected_calls=True)
    assert result.passed, result.report()
    assert len(result.matched_request_ids) == 2
    first, second = app_session.requests(order="asc")
    assert second["started_monotonic_seconds"] - first["completed_monotonic_seconds"] >= 0.6


def test_anthropic_sdk_honours_retry_after_too(app_session: SessionClient) -> None:
    _configure(app_session, RATE_LIMITED, {"text": "Done."})
    client = app_session.anthropic_client(
        max_retries=1, default_headers={"X-Llm-Test-Server-Retry-Group": "c"}
    )
    client.messages.create(model=CLAUDE, max_tokens=8, messages=USER_HI)
    result = app_session.verify(
        retries=[{"group": "c", "status_sequence": [429, 200], "respect_retry_after": True}]
    )
    assert result.passed, result.report()


def test_retrying_too_soon_fails_the_retry_expectation(app_session: SessionClient) -> None:
    _configure(
        app_session,
        {**RATE_LIMITED, "error": {**RATE_LIMITED["error"], "retry_after": 2}},
        {"text": "Done."},
    )
    client = app_session.openai_client(
        max_retries=0, default_headers={"X-Llm-Test-Server-Retry-Group": "eager"}
    )
    with pytest.raises(openai.RateLimitError):
        client.chat.completions.create(model=GPT, messages=USER_HI)
    client.chat.completions.create(model=GPT, messages=USER_HI)  # the application ignores Retry-After

    result = app_session.verify(retries=[{"group": "eager", "respect_retry_after": True}])
    assert _kinds(result) == ["retry_spacing"]
    failure = result.failures[0]
    assert failure.expected == 2 and 0 <= failure.actual < 2
    assert "Retry-After asked for 2 s" in failure.message

    stricter = app_session.verify(
        retries=[
            {
                "group": "eager",
                "minimum_retry_after_seconds": 5,
                "status_sequence": [429, 429],
                "maximum_attempts": 1,
            }
        ]
    )
    assert sorted(_kinds(stricter)) == ["retry_after_too_short", "retry_attempts", "retry_status_sequence"]
    assert stricter.evidence_complete


def test_retry_without_advertised_delay_and_unknown_group(app_session: SessionClient) -> None:
    _configure(
        app_session, {"error": {"status": 503, "code": "overloaded", "message": "busy"}}, {"text": "ok"}
    )
    headers = {"X-Llm-Test-Server-Retry-Group": "g"}
    client = app_session.openai_client(max_retries=0, default_headers=headers)
    with pytest.raises(openai.InternalServerError):
        client.chat.completions.create(model=GPT, messages=USER_HI)
    client.chat.completions.create(model=GPT, messages=USER_HI)

    result = app_session.verify(retries=[{"group": "g", "respect_retry_after": True}])
    assert _kinds(result) == ["retry_after_missing"]
    assert _kinds(app_session.verify(retries=[{"group": "other"}])) == ["retry_attempts"]


# --- conversations ------------------------------------------------------------------------------

APPROVAL = {
    "id": "approval",
    "steps": APPROVAL_STEPS,
}


def test_conversation_visited_steps_and_terminal_state(app_session: SessionClient) -> None:
    app_session.configure({"conversations": [APPROVAL]})
    client = app_session.for_conversation("c-1").openai_client(max_retries=0)
    history = [{"role": "user", "content": "Start"}]
    first = client.chat.completions.create(model=GPT, messages=history)
    client.chat.completions.create(
        model=GPT,
        messages=[
            *history,
            {"role": "assistant", "content": first.choices[0].message.content},
            {"role": "user", "content": "Approve"},
        ],
    )

    done = {
        "scenario": "approval",
        "conversation": "c-1",
        "visited_steps": ["ask", "approve"],
        "terminal": True,
    }
    assert app_session.verify(conversations=[done]).passed
    assert app_session.verify(conversations=[{**done, "provider": "openai"}]).passed

    result = app_session.verify(
        conversations=[{**done, "visited_steps": ["ask", "cancel"], "terminal": False}]
    )
    assert _kinds(result) == ["conversation_steps", "conversation_terminal"]
    assert "['cancel']" in result.failures[0].message
    assert _kinds(app_session.verify(conversations=[{**done, "conversation": "c-2"}])) == [
        "conversation_missing"
    ]
    assert _kinds(app_session.verify(conversations=[{**done, "provider": "anthropic"}])) == [
        "conversation_missing"
    ]

    # The journal carries the graph's step ids, so request expectations can name steps too.
    by_step = app_session.verify(
        requests=[
            {"name": "ask", "query": {"step": "ask"}},
            {"name": "approve", "query": {"step": "approve"}},
        ],
        in_order=True,
        no_unexpected_calls=True,
    )
    assert by_step.passed, by_step.report()


def test_conversation_header_scopes_verification(app_session: SessionClient) -> None:
    app_session.configure({"conversations": [APPROVAL]})
    for conversation in ("c-1", "c-2"):
        app_session.for_conversation(conversation).openai_client(max_retries=0).chat.completions.create(
            model=GPT, messages=[{"role": "user", "content": "Start"}]
        )
    assert not app_session.verify(requests=[{"name": "start", "query": {"step": "ask"}}]).passed  # two
    scoped = app_session.verify(requests=[{"name": "start", "query": {"step": "ask"}}], conversation="c-2")
    assert scoped.passed, scoped.report()
    (entry,) = app_session.requests(conversation="c-2")
    assert scoped.matched_request_ids == [entry["request_id"]]
    # The conversation header also selects the state a conversation expectation reads.
    c1 = app_session.for_conversation("c-1")
    assert c1.verify(
        conversations=[{"scenario": "approval", "visited_steps": ["ask"], "terminal": False}]
    ).passed
    assert not c1.verify(
        conversations=[{"scenario": "approval", "conversation": "c-3", "terminal": False}]
    ).passed


# --- incomplete evidence ------------------------------------------------------------------------


def test_eviction_makes_verification_fail_conservatively(app_session: SessionClient) -> None:
    _configure(app_session, OK, journal={"max_entries": 2})
    for model in (BIG, GPT, GPT):
        _chat(app_session, model)
    # The retained entries would satisfy this, but the evicted one is unknown.
    result = app_session.verify(
        requests=[{"name": "small", "query": {"model": GPT}, "maximum_count": 2, "minimum_count": 2}]
    )
    assert (result.passed, result.evidence_complete) == (False, False)
    assert _kinds(result) == ["evidence_evicted"]
    assert result.evidence["evicted_count"] == 1
    assert "evidence incomplete" in result.report()


def test_truncation_makes_verification_fail_conservatively(app_session: SessionClient) -> None:
    _configure(app_session, OK, journal={"preview_bytes": 16})
    _chat(app_session)
    result = app_session.verify(requests=[{"name": "chat", "query": {}}])
    assert (result.passed, result.evidence_complete, _kinds(result)) == (False, False, ["evidence_truncated"])


def test_pending_requests_and_pages_make_evidence_incomplete(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"text": "fast"}, {"text": "slow", "delay_ms": 1500})
    _chat(llmts_session)
    assert _kinds(llmts_session.verify(scope={"limit": 1}, requests=[{"name": "x", "query": {}}])) == []
    worker = threading.Thread(target=_chat, args=(llmts_session,))
    worker.start()
    try:
        deadline = time.monotonic() + 5
        while len(llmts_session.requests()) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        pending = llmts_session.verify(requests=[{"name": "first", "query": {"completed": True}}])
        assert _kinds(pending) == ["evidence_pending"] and not pending.evidence_complete
        assert pending.failures[0].request_ids == [llmts_session.requests()[0]["request_id"]]
    finally:
        worker.join()
    paged = llmts_session.verify(scope={"limit": 1}, requests=[{"name": "any", "query": {}}])
    assert _kinds(paged) == ["evidence_paginated"] and paged.failures[0].expectation == "scope"
    paged = llmts_session.verify(requests=[{"name": "any", "query": {"limit": 1}, "maximum_count": None}])
    assert _kinds(paged) == ["evidence_paginated"]
    assert llmts_session.verify(
        requests=[{"name": "both", "query": {}, "maximum_count": 2, "minimum_count": 2}]
    ).passed


# --- the request itself ---------------------------------------------------------------------------


def _many(count: int, item: Any) -> list[Any]:
    return [item] * count


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({}, ""),
        ({"requests": []}, ""),
        ({"requests": [{"query": {}}]}, "requests[0].name"),
        ({"requests": [{"name": "a", "minimum_count": 2, "maximum_count": 1}]}, "requests[0]"),
        ({"requests": [{"name": "a", "minimum_count": -1}]}, "requests[0].minimum_count"),
        ({"requests": [{"name": "a"}, {"name": "a"}]}, ""),
        ({"requests": [{"name": "a", "query": {"status": 99}}]}, "requests[0].query.status"),
        ({"requests": [{"name": "a", "query": {"limit": 0}}]}, "requests[0].query.limit"),
        ({"requests": [{"name": "a", "query": {"colour": "red"}}]}, "requests[0].query.colour"),
        ({"requests": [{"name": "a", "tools": [{"kind": "call"}]}]}, "requests[0].tools[0].kind"),
        (
            {"requests": [{"name": "a", "tools": [{"kind": "result", "arguments": {}}]}]},
            "requests[0].tools[0]",
        ),
        (
            {"requests": [{"name": "a", "tools": [{"kind": "request_call", "result": 1}]}]},
            "requests[0].tools[0]",
        ),
        (
            {
                "requests": [
                    {
                        "name": "a",
                        "tools": [{"kind": "result", "fields": [{"path": "$..x", "expected_json": 1}]}],
                    }
                ]
            },
            "requests[0].tools[0].fields[0].path",
        ),
        (
            {"requests": [{"name": "a", "tools": [{"kind": "result", "fields": [{"path": "$.x"}]}]}]},
            "requests[0].tools[0].fields[0]",
        ),
        ({"requests": [{"name": "a", "tools": _many(65, {"kind": "result"})}]}, "requests[0].tools"),
        (
            {
                "requests": [
                    {
                        "name": "a",
                        "tools": [{"kind": "result", "fields": _many(65, {"path": "$", "expected_json": 1})}],
                    }
                ]
            },
            "requests[0].tools[0].fields",
        ),
        ({"requests": [{"name": f"r{i}"} for i in range(257)]}, ""),
        ({"scope": {"from": "2026-01-02T00:00:00Z", "to": "2026-01-01T00:00:00Z"}}, "scope"),
        ({"conversations": [{"scenario": "g"}]}, "conversations[0]"),
        (
            {"conversations": [{"scenario": "g", "visited_steps": _many(257, "s")}]},
            "conversations[0].visited_steps",
        ),
        ({"retries": [{"group": " "}]}, "retries[0].group"),
        ({"retries": [{"group": "g", "status_sequence": [700]}]}, "retries[0].status_sequence"),
        ({"retries": [{"group": "g", "minimum_attempts": 3, "maximum_attempts": 2}]}, "retries[0]"),
        (
            {"retries": [{"group": "g", "minimum_retry_after_seconds": -1}]},
            "retries[0].minimum_retry_after_seconds",
        ),
        ({"no_unexpected_calls": True, "surprise": 1}, "surprise"),
    ],
)
def test_malformed_verification_requests_are_400(
    app_session: SessionClient, body: dict[str, Any], path: str
) -> None:
    response = send_raw(
        app_session.server,
        "POST",
        "/admin-api/verify",
        body,
        {"X-Llm-Test-Server-Session": app_session.id},
    )
    assert response.status == 400, response.body
    error = response.json()["error"]
    assert error["code"] == "invalid_verification"
    assert path in [detail["path"] for detail in error["details"]], error


@pytest.mark.parametrize("body", [b"", b"{", b"[]", b'"x"'])
def test_verification_body_must_be_a_json_object(app_session: SessionClient, body: bytes) -> None:
    response = send_raw(
        app_session.server,
        "POST",
        "/admin-api/verify",
        body,
        {"X-Llm-Test-Server-Session": app_session.id},
    )
    assert (response.status, response.json()["error"]["code"]) == (400, "invalid_verification")


def test_bad_conversation_header_is_400(app_session: SessionClient) -> None:
    with pytest.raises(ServerError) as caught:
        app_session.verify(no_unexpected_calls=True, conversation=" ")
    assert caught.value.status == 400


def test_verifying_changes_nothing(app_session: SessionClient) -> None:
    _configure(app_session, {"text": "one"}, {"text": "two"})
    assert _chat(app_session).choices[0].message.content == "one"
    before = app_session.export()
    for _ in range(3):
        app_session.verify(requests=[{"name": "x", "query": {}}], no_unexpected_calls=True)
    assert app_session.export() == before
    assert _chat(app_session).choices[0].message.content == "two"


def test_other_sessions_are_out_of_scope(llmts_app_server: LlmTestServer) -> None:
    mine, theirs = llmts_app_server.create_session(), llmts_app_server.create_session()
    try:
        _chat(theirs)
        _chat(theirs)
        result = mine.verify(
            requests=[{"name": "none", "query": {}, "minimum_count": 0, "maximum_count": 0}],
            no_unexpected_calls=True,
        )
        assert result.passed and result.evidence["total_observed"] == 0
    finally:
        mine.delete()
        theirs.delete()


def test_failures_are_a_result_and_assert_passed_reports_them(app_session: SessionClient) -> None:
    _configure(app_session, OK)
    with pytest.raises(anthropic.NotFoundError):
        app_session.anthropic_client(max_retries=0).messages.create(
            model="nope", max_tokens=8, messages=USER_HI
        )
    result = app_session.verify(
        requests=[{"name": "chat", "query": {"provider": "openai"}}], no_unexpected_calls=True
    )
    with pytest.raises(AssertionError) as caught:
        result.assert_passed()
    report = str(caught.value)
    assert report.startswith("verification failed: 2 problem(s)")
    assert "- [count] requests[0] (chat): expected exactly 1 matching request(s), found 0" in report
    assert "- [unexpected_call]" in report and "anthropic messages -> 404" in report
