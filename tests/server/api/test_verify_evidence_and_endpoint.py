"""``POST /admin-api/verify`` over a real server, driven by the official SDKs: incomplete evidence
(evicted, truncated, pending, paginated) fails conservatively, malformed requests are 400, verifying
changes nothing, other sessions are out of scope, and failures are a result that ``assert_passed``
reports (docs/journal.md, "Verification" and "Incomplete evidence fails")."""

from __future__ import annotations

import threading
import time
from typing import Any

import anthropic
import pytest

from llmts import LlmTestServer, ServerError, SessionClient
from tests.helpers import USER_HI, RawResponse
from tests.server.api.verify_support import BIG, GPT, OK, chat, configure, failure_kinds
from tests.support.in_process import InProcessSession, send_raw

pytestmark = pytest.mark.sdk


def _post_verify(session: InProcessSession, body: dict[str, Any] | bytes) -> RawResponse:
    """``POST /admin-api/verify`` of ``body`` as sent, for ``session``, through the in-process app."""
    return send_raw(
        session.server, "POST", "/admin-api/verify", body, {"X-Llm-Test-Server-Session": session.id}
    )


# --- incomplete evidence ------------------------------------------------------------------------


def test_eviction_makes_verification_fail_conservatively(app_session: SessionClient) -> None:
    configure(app_session, OK, journal={"max_entries": 2})
    for model in (BIG, GPT, GPT):
        chat(app_session, model)
    # The retained entries would satisfy this, but the evicted one is unknown.
    result = app_session.verify(
        requests=[{"name": "small", "query": {"model": GPT}, "maximum_count": 2, "minimum_count": 2}]
    )
    assert (result.passed, result.evidence_complete) == (False, False)
    assert failure_kinds(result) == ["evidence_evicted"]
    assert "(the journal's max_entries/max_bytes)" in result.failures[0].message  # its own limit
    assert result.evidence["evicted_count"] == 1
    assert "evidence incomplete" in result.report()


def test_truncation_makes_verification_fail_conservatively(app_session: SessionClient) -> None:
    configure(app_session, OK, journal={"preview_bytes": 16})
    chat(app_session)
    result = app_session.verify(requests=[{"name": "chat", "query": {}}])
    assert (result.passed, result.evidence_complete, failure_kinds(result)) == (
        False,
        False,
        ["evidence_truncated"],
    )


def test_pending_requests_and_pages_make_evidence_incomplete(llmts_session: SessionClient) -> None:
    configure(llmts_session, {"text": "fast"}, {"text": "slow", "delay_ms": 1500})
    chat(llmts_session)
    assert (
        failure_kinds(llmts_session.verify(scope={"limit": 1}, requests=[{"name": "x", "query": {}}])) == []
    )
    worker = threading.Thread(target=chat, args=(llmts_session,))
    worker.start()
    try:
        deadline = time.monotonic() + 5
        while len(llmts_session.requests()) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        pending = llmts_session.verify(requests=[{"name": "first", "query": {"completed": True}}])
        assert failure_kinds(pending) == ["evidence_pending"] and not pending.evidence_complete
        assert pending.failures[0].request_ids == [llmts_session.requests()[0]["request_id"]]
    finally:
        worker.join()
    paged = llmts_session.verify(scope={"limit": 1}, requests=[{"name": "any", "query": {}}])
    assert failure_kinds(paged) == ["evidence_paginated"] and paged.failures[0].expectation == "scope"
    paged = llmts_session.verify(requests=[{"name": "any", "query": {"limit": 1}, "maximum_count": None}])
    assert failure_kinds(paged) == ["evidence_paginated"]
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
        ({"scope": {"from": "2026-01-01T00:00:00", "to": "2026-01-02T00:00:00Z"}}, "scope"),  # was a 500
        (
            {
                "requests": [
                    {"name": "r", "query": {"from": "2026-01-01T00:00:00Z", "to": "2026-01-02T00:00:00"}}
                ]
            },
            "requests[0].query",
        ),
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
    app_session: InProcessSession, body: dict[str, Any], path: str
) -> None:
    response = _post_verify(app_session, body)
    assert response.status == 400, response.body
    error = response.json()["error"]
    assert error["code"] == "invalid_verification"
    assert path in [detail["path"] for detail in error["details"]], error


@pytest.mark.parametrize("body", [b"", b"{", b"[]", b'"x"'])
def test_verification_body_must_be_a_json_object(app_session: InProcessSession, body: bytes) -> None:
    response = _post_verify(app_session, body)
    assert (response.status, response.json()["error"]["code"]) == (400, "invalid_verification")


def test_bad_conversation_header_is_400(app_session: SessionClient) -> None:
    with pytest.raises(ServerError) as caught:
        app_session.verify(no_unexpected_calls=True, conversation=" ")
    assert caught.value.status == 400


def test_verifying_changes_nothing(app_session: SessionClient) -> None:
    configure(app_session, {"text": "one"}, {"text": "two"})
    assert chat(app_session).choices[0].message.content == "one"
    before = app_session.export()
    for _ in range(3):
        app_session.verify(requests=[{"name": "x", "query": {}}], no_unexpected_calls=True)
    assert app_session.export() == before
    assert chat(app_session).choices[0].message.content == "two"


def test_other_sessions_are_out_of_scope(llmts_app_server: LlmTestServer) -> None:
    mine, theirs = llmts_app_server.create_session(), llmts_app_server.create_session()
    try:
        chat(theirs)
        chat(theirs)
        result = mine.verify(
            requests=[{"name": "none", "query": {}, "minimum_count": 0, "maximum_count": 0}],
            no_unexpected_calls=True,
        )
        assert result.passed and result.evidence["total_observed"] == 0
    finally:
        mine.delete()
        theirs.delete()


def test_failures_are_a_result_and_assert_passed_reports_them(app_session: SessionClient) -> None:
    configure(app_session, OK)
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
