"""Every stream delivery mode on Cohere v2 chat, through the official ``cohere`` SDK (``ClientV2``): what
the SDK shows for each (the Cohere column of docs/stream-delivery.md) and what the journal records."""

from __future__ import annotations

import time
from functools import partial
from typing import Any

import cohere
import httpx
import pytest

from llmts import SessionClient
from tests.support.configure import delivery

pytestmark = pytest.mark.sdk

MODEL = "command-a-03-2025"
HI = [{"role": "user", "content": "Hi"}]
WHOLE = ["message-start", "content-start", "content-delta", "content-delta", "content-end", "message-end"]
PREFIX = ["message-start", "content-start", "content-delta"]


_configure = partial(delivery, models=[MODEL])


def _events(client: Any) -> list[Any]:
    return list(client.chat_stream(model=MODEL, messages=HI))


def _text(events: list[Any]) -> str:
    return "".join(e.delta.message.content.text for e in events if e.type == "content-delta")


def _entries(session: SessionClient) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 5
    while True:
        entries = session.requests(provider="cohere", order="asc")
        if entries and all(entry["completed"] for entry in entries):
            return entries
        assert time.monotonic() < deadline
        time.sleep(0.01)


def _evidence(entry: dict[str, Any]) -> tuple[Any, ...]:
    return (
        entry["status"],
        entry["success"],
        entry["emitted_content_frames"],
        entry["terminal_marker_observed"],
        entry["transport_outcome"],
    )


def _next_is_whole(client: Any) -> None:
    reply = client.chat(model=MODEL, messages=HI)
    assert reply.message.content[0].text == "Explicit next attempt."


@pytest.mark.parametrize(
    "plan",
    [{"mode": "early_clean_end"}, {"mode": "truncate_bytes", "cut_bytes": 20}],
    ids=lambda p: p["mode"],
)
def test_early_end_is_a_silent_prefix_without_message_end(llmts_session: SessionClient, plan: Any) -> None:
    _configure(llmts_session, plan)
    client = llmts_session.cohere_client(max_retries=0)

    events = _events(client)

    assert [e.type for e in events] == PREFIX and _text(events) == "First "
    assert [_evidence(e) for e in _entries(llmts_session)] == [(200, False, 1, False, "early_end")]
    _next_is_whole(client)  # committed before delivery: the next request gets the next response


def test_delay_then_continue_and_slow_drip_deliver_the_whole_answer(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"mode": "delay_then_continue", "delay_ms": 600})
    client = llmts_session.cohere_client(max_retries=0)

    started = time.monotonic()
    events = _events(client)

    assert time.monotonic() - started >= 0.6
    assert [e.type for e in events] == WHOLE and _text(events) == "First second."
    assert events[-1].delta.finish_reason == "COMPLETE"
    assert [_evidence(e) for e in _entries(llmts_session)] == [(200, True, 2, True, "completed")]


def test_slow_drip_delivers_the_whole_answer_slowly(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"mode": "slow_drip", "bytes_per_second": 2000})
    client = llmts_session.cohere_client(max_retries=0)

    started = time.monotonic()
    events = _events(client)

    assert time.monotonic() - started >= 0.3  # about 900 bytes at 2000 bytes per second
    assert [e.type for e in events] == WHOLE and _text(events) == "First second."
    assert [_evidence(e) for e in _entries(llmts_session)] == [(200, True, 2, True, "completed")]


def test_abort_raises_httpx_read_error_after_the_prefix(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"mode": "abort_connection"})
    client = llmts_session.cohere_client(max_retries=2)

    seen: list[str] = []
    with pytest.raises(httpx.ReadError):  # not wrapped by the SDK, and not retried
        for event in client.chat_stream(model=MODEL, messages=HI):
            seen.append(event.type)

    assert seen == PREFIX
    assert [_evidence(e) for e in _entries(llmts_session)] == [(200, False, 1, False, "aborted")]


def test_malformed_frame_becomes_a_hollow_message_start(llmts_session: SessionClient) -> None:
    """The SDK logs "Failed to parse SSE data field as JSON" and yields the broken frame as a
    ``message-start`` with no id or delta, then the rest: the text is whole, no exception."""
    _configure(llmts_session, {"mode": "malformed_frame"})
    client = llmts_session.cohere_client(max_retries=0)

    events = _events(client)

    assert [e.type for e in events] == [*PREFIX, "message-start", *WHOLE[3:]]
    assert (events[3].id, events[3].delta) == ("", None)
    assert _text(events) == "First second."
    [entry] = _entries(llmts_session)
    assert entry["stream_delivery_applied"] is True and entry["transport_outcome"] == "completed"
    assert entry["success"] is False  # the stream was damaged on purpose


def test_stall_ends_silently_or_times_out(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"mode": "stall", "delay_ms": 800})
    events = _events(llmts_session.cohere_client(max_retries=0))
    assert [e.type for e in events] == PREFIX
    assert [_evidence(e) for e in _entries(llmts_session)] == [(200, False, 1, False, "early_end")]

    llmts_session.configure(
        {
            "models": [MODEL],
            "scenarios": [
                {
                    "responses": [
                        {
                            "text": "First second.",
                            "chunks": ["First ", "second."],
                            "stream_delivery": {"mode": "stall", "delay_ms": 5000},
                        }
                    ]
                }
            ],
        }
    )
    started = time.monotonic()
    with pytest.raises(httpx.ReadTimeout):  # not wrapped by the SDK
        _events(llmts_session.cohere_client(max_retries=2, timeout=0.5))
    assert time.monotonic() - started < 3
    assert [e["transport_outcome"] for e in _entries(llmts_session)] == ["client_gone"]


@pytest.mark.parametrize(
    ("plan", "error"),
    [
        ({"mode": "reset_before_headers"}, httpx.ReadError),
        ({"mode": "empty_response"}, httpx.RemoteProtocolError),
    ],
    ids=["reset_before_headers", "empty_response"],
)
def test_connection_faults_are_not_retried(
    llmts_session: SessionClient, plan: Any, error: type[Exception]
) -> None:
    """The SDK retries only on a status: a connection that breaks before one raises httpx's error at once,
    streamed or not."""
    _configure(llmts_session, plan)
    client = llmts_session.cohere_client(max_retries=2)

    with pytest.raises(error):
        _events(client)

    assert [_evidence(e) for e in _entries(llmts_session)] == [(None, False, 0, False, "aborted")]
    _next_is_whole(client)


def test_error_page_on_a_stream_is_not_retried(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"mode": "http_error_page", "status": 503})
    client = llmts_session.cohere_client(max_retries=2)

    with pytest.raises(cohere.core.ApiError) as caught:  # the HTML body is not JSON: no typed class
        _events(client)

    assert type(caught.value) is cohere.core.ApiError and caught.value.status_code == 503
    assert "text/html" in caught.value.headers["content-type"]
    assert [e["status"] for e in _entries(llmts_session)] == [503]


def test_error_page_on_chat_is_retried(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"mode": "http_error_page", "status": 502})
    client = llmts_session.cohere_client(max_retries=2)

    reply = client.chat(model=MODEL, messages=HI)  # backs off about one second, then the next response

    assert reply.message.content[0].text == "Explicit next attempt."
    assert [e["status"] for e in _entries(llmts_session)] == [502, 200]


def test_stream_429_is_not_retried(llmts_session: SessionClient) -> None:
    llmts_session.configure(
        {
            "models": [MODEL],
            "scenarios": [
                {
                    "responses": [
                        {
                            "error": {
                                "status": 429,
                                "code": "rate_limited",
                                "message": "Slow",
                                "retry_after": 0.01,
                            }
                        },
                        {"text": "unused"},
                    ]
                }
            ],
        }
    )

    with pytest.raises(cohere.TooManyRequestsError):
        _events(llmts_session.cohere_client(max_retries=2))
    assert [e["status"] for e in _entries(llmts_session)] == [429]


def test_plans_do_not_apply_to_tool_requests(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"mode": "early_clean_end"})
    client = llmts_session.cohere_client(max_retries=0)
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]

    with pytest.raises(cohere.core.ApiError) as caught:
        list(client.chat_stream(model=MODEL, messages=HI, tools=tools))

    assert caught.value.status_code == 409
    assert _text(_events(client)) == "First "  # not consumed
