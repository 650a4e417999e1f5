"""``GET /admin-api/resilience`` over a real server, driven by the official SDKs (docs/journal.md,
"Resilience"): how the SDKs' own headers tie attempts into one call, an application's own retries, cut
streams, the endpoint's filters, and the verdict as a verification and an ``llmts_expect`` assertion.
The SDK default policies are graded in test_resilience_sdks.py."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from llmts import ServerError, SessionClient
from llmts.pytest.verify import LlmtsExpectations
from tests.helpers import USER_HI, raw_request
from tests.support.configure import script

pytestmark = pytest.mark.sdk

GPT = "gpt-4.1-mini"
OK = {"text": "ok"}
RATE_LIMITED = {
    "error": {"status": 429, "code": "rate_limit_exceeded", "message": "Slow", "retry_after": 0.3}
}
BAD_REQUEST = {"error": {"status": 400, "code": "invalid_request_error", "message": "Bad"}}


def _configure(session: SessionClient, *responses: Any) -> None:
    script(session, *responses, models=[GPT], scenario={"terminal_policy": "repeat_last_response"})


def test_the_stainless_retry_count_ties_an_sdk_retry_to_its_call(llmts_session: SessionClient) -> None:
    _configure(llmts_session, RATE_LIMITED, OK)
    llmts_session.openai_client(max_retries=2).chat.completions.create(model=GPT, messages=USER_HI)
    llmts_session.openai_client(max_retries=0).chat.completions.create(model=GPT, messages=USER_HI)

    journal = llmts_session.requests(order="asc")
    assert [(e["status"], e["client_attempt"], e["client_call_id"]) for e in journal] == [
        (429, 1, None),
        (200, 2, None),
        (200, 1, None),
    ]
    (group,) = llmts_session.resilience().groups  # the third call succeeded at once: no retry group
    assert (group.identified_by, group.group, group.statuses) == (
        "client_attempt",
        journal[0]["request_id"],
        [429, 200],
    )
    assert (group.attempts, group.gave_up, group.honoured_retry_after, group.retried_non_retryable) == (
        2,
        False,
        True,
        False,
    )
    assert (group.backoff, group.jitter, group.cut_stream) == (None, None, None)
    assert group.advertised_seconds == [0.3, None] and group.waits_seconds[0] >= 0.25


def test_botos_invocation_id_ties_its_attempts(llmts_session: SessionClient) -> None:
    from botocore.config import Config

    script(
        llmts_session,
        {"error": {"status": 500, "code": "server_error", "message": "Boom"}},
        OK,
        models=["m"],
    )
    client = llmts_session.bedrock_client(config=Config(retries={"mode": "standard", "max_attempts": 3}))
    client.converse(modelId="m", messages=[{"role": "user", "content": [{"text": "Hi"}]}])

    first, second = llmts_session.requests(order="asc")
    assert (first["client_attempt"], second["client_attempt"]) == (1, 2)
    assert first["client_call_id"] is not None and first["client_call_id"] == second["client_call_id"]
    (group,) = llmts_session.resilience().groups
    assert (group.identified_by, group.statuses, group.gave_up) == ("client_call_id", [500, 200], False)


def test_an_application_retrying_a_400_is_caught(llmts_session: SessionClient) -> None:
    _configure(llmts_session, BAD_REQUEST, OK)
    client = llmts_session.openai_client(max_retries=0)
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model=GPT, messages=USER_HI)
    client.chat.completions.create(model=GPT, messages=USER_HI)  # the same request again: a retry

    (group,) = llmts_session.resilience().groups
    assert (group.identified_by, group.statuses, group.retried_non_retryable) == (
        "same_request",
        [400, 200],
        True,
    )
    result = llmts_session.verify(resilience=[{"retried_non_retryable": False}])
    assert [failure.kind for failure in result.failures] == ["resilience_verdict"]
    assert "retried_non_retryable is true, expected false" in result.failures[0].message
    assert result.failures[0].request_ids == group.request_ids


def test_a_cut_stream_trusted_or_retried(llmts_session: SessionClient) -> None:
    cut = {"text": "Hello there.", "chunks": ["Hello", " there."]}
    plan = {"stream_delivery": {"mode": "early_clean_end", "after_content_frames": 1}}
    script(llmts_session, {**cut, **plan}, OK, models=[GPT])
    client = llmts_session.openai_client(max_retries=0)
    list(client.chat.completions.create(model=GPT, messages=USER_HI, stream=True))
    (trusted,) = llmts_session.resilience().groups
    assert (trusted.cut_stream, trusted.gave_up, trusted.attempts) == ("trusted", True, 1)

    # The application notices the missing end and sends the same request again.
    list(client.chat.completions.create(model=GPT, messages=USER_HI, stream=True))
    (retried,) = llmts_session.resilience().groups
    assert (retried.cut_stream, retried.gave_up, retried.attempts) == ("retried", False, 2)


def test_the_retry_group_header_and_the_filters(llmts_session: SessionClient) -> None:
    _configure(llmts_session, RATE_LIMITED, OK)
    headers = {"X-Llm-Test-Server-Retry-Group": "ask-1"}
    llmts_session.openai_client(max_retries=1, default_headers=headers).chat.completions.create(
        model=GPT, messages=USER_HI
    )
    (group,) = llmts_session.resilience(provider="openai").groups
    assert (group.group, group.identified_by, group.attempts) == ("ask-1", "retry_group_header", 2)
    assert llmts_session.resilience(provider="anthropic").groups == []
    report = llmts_session.resilience()
    assert (report.complete, report.evicted, report.in_progress) == (True, 0, 0)

    with pytest.raises(ServerError) as refused:
        llmts_session.resilience(limit=5)
    assert refused.value.status == 400 and refused.value.code == "invalid_query"
    assert "no paging" in str(refused.value)


def test_llmts_expect_resilient_passes_and_fails_through_the_server(llmts_session: SessionClient) -> None:
    _configure(llmts_session, RATE_LIMITED, OK)
    llmts_session.openai_client().chat.completions.create(model=GPT, messages=USER_HI)

    passing = LlmtsExpectations(llmts_session).resilient(
        honoured_retry_after=True, retried_non_retryable=False, gave_up=False, maximum_attempts=2
    )
    assert passing.verify().passed
    failing = (
        LlmtsExpectations(llmts_session).resilient(backoff="exponential").resilient("nope", gave_up=False)
    )
    result = failing.verify()
    assert [failure.kind for failure in result.failures] == ["resilience_unobserved", "resilience_missing"]
    assert result.failures[0].expectation == "resilience[0]"
    assert "fewer than two waits of its own" in result.failures[0].message
    assert result.failures[1].message == "the journal has no retry group 'nope' in scope"


@pytest.mark.parametrize(
    ("headers", "kept"),
    [
        ({"x-stainless-retry-count": "2"}, (3, None)),
        ({"amz-sdk-request": "attempt=2; max=3", "amz-sdk-invocation-id": "inv-1"}, (2, "inv-1")),
        ({"Idempotency-Key": "key-1"}, (None, "key-1")),
        # Malformed or oversized SDK headers are ignored, never refused: the request is answered.
        ({"x-stainless-retry-count": "\u00b2", "amz-sdk-request": "attempt=x"}, (None, None)),
        ({"x-stainless-retry-count": "-1", "amz-sdk-invocation-id": "i" * 129}, (None, None)),
    ],
)
def test_the_sdk_headers_an_entry_keeps(
    llmts_session: SessionClient, headers: dict[str, str], kept: tuple[int | None, str | None]
) -> None:
    _configure(llmts_session, OK)
    response = raw_request(
        llmts_session.provider_base,
        "POST",
        "/openai/v1/chat/completions",
        {"model": GPT, "messages": USER_HI},
        {"Authorization": "Bearer " + llmts_session.credential("openai"), **headers},
    )
    assert response.status == 200
    (entry,) = llmts_session.requests()
    assert (entry["client_attempt"], entry["client_call_id"]) == kept
