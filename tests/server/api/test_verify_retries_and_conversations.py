"""``POST /admin-api/verify``'s retry and conversation expectations over a real server, driven by the
official SDKs: Retry-After honoured or not, attempts and status sequences, and a conversation graph's
visited steps and terminal state (docs/journal.md, "Verification")."""

from __future__ import annotations

import openai
import pytest

from llmts import SessionClient
from tests.helpers import APPROVAL_STEPS, USER_HI
from tests.server.api.verify_support import CLAUDE, GPT, configure, failure_kinds

pytestmark = pytest.mark.sdk


# --- retries ------------------------------------------------------------------------------------

RATE_LIMITED = {
    "error": {"status": 429, "code": "rate_limit_exceeded", "message": "Slow down", "retry_after": 0.6}
}


def test_sdk_honouring_retry_after_passes_the_retry_expectation(app_session: SessionClient) -> None:
    configure(app_session, RATE_LIMITED, {"text": "Done."})
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
    configure(app_session, RATE_LIMITED, {"text": "Done."})
    client = app_session.anthropic_client(
        max_retries=1, default_headers={"X-Llm-Test-Server-Retry-Group": "c"}
    )
    client.messages.create(model=CLAUDE, max_tokens=8, messages=USER_HI)
    result = app_session.verify(
        retries=[{"group": "c", "status_sequence": [429, 200], "respect_retry_after": True}]
    )
    assert result.passed, result.report()


def test_retrying_too_soon_fails_the_retry_expectation(app_session: SessionClient) -> None:
    configure(
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
    assert failure_kinds(result) == ["retry_spacing"]
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
    assert sorted(failure_kinds(stricter)) == [
        "retry_after_too_short",
        "retry_attempts",
        "retry_status_sequence",
    ]
    assert stricter.evidence_complete


def test_retry_without_advertised_delay_and_unknown_group(app_session: SessionClient) -> None:
    configure(
        app_session, {"error": {"status": 503, "code": "overloaded", "message": "busy"}}, {"text": "ok"}
    )
    headers = {"X-Llm-Test-Server-Retry-Group": "g"}
    client = app_session.openai_client(max_retries=0, default_headers=headers)
    with pytest.raises(openai.InternalServerError):
        client.chat.completions.create(model=GPT, messages=USER_HI)
    client.chat.completions.create(model=GPT, messages=USER_HI)

    result = app_session.verify(retries=[{"group": "g", "respect_retry_after": True}])
    assert failure_kinds(result) == ["retry_after_missing"]
    assert failure_kinds(app_session.verify(retries=[{"group": "other"}])) == ["retry_attempts"]


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
    assert failure_kinds(result) == ["conversation_steps", "conversation_terminal"]
    assert "['cancel']" in result.failures[0].message
    assert failure_kinds(app_session.verify(conversations=[{**done, "conversation": "c-2"}])) == [
        "conversation_missing"
    ]
    assert failure_kinds(app_session.verify(conversations=[{**done, "provider": "anthropic"}])) == [
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
