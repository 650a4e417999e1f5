"""Stream delivery plans on Anthropic Messages, through the official anthropic SDK."""

from __future__ import annotations

import time
from functools import partial
from typing import Any

import anthropic
import pytest

from llmts import SessionClient
from tests.helpers import transport_errors
from tests.support.configure import delivery

pytestmark = pytest.mark.sdk

MESSAGES = [{"role": "user", "content": "Hi"}]


_configure = partial(delivery, models=["claude-llmts-test"])


def _events(client: Any) -> list[Any]:
    return list(
        client.messages.create(model="claude-llmts-test", max_tokens=64, messages=MESSAGES, stream=True)
    )


def _text(events: list[Any]) -> str:
    return "".join(
        e.delta.text for e in events if e.type == "content_block_delta" and e.delta.type == "text_delta"
    )


def _entry(session: SessionClient) -> dict[str, Any]:
    deadline = time.monotonic() + 5
    while True:
        entries = session.requests(provider="anthropic", streaming=True)
        if entries and entries[0]["completed"]:
            return entries[0]
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_early_clean_end_gives_the_prefix_without_message_stop(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"mode": "early_clean_end"})
    client = llmts_session.anthropic_client(_strict_response_validation=True, max_retries=0)

    events = _events(client)

    assert _text(events) == "First "
    assert "message_stop" not in [e.type for e in events]
    assert "message_delta" not in [e.type for e in events]
    entry = _entry(llmts_session)
    assert (
        entry["transport_outcome"],
        entry["terminal_marker_observed"],
        entry["emitted_content_frames"],
    ) == (
        "early_end",
        False,
        1,
    )
    reply = client.messages.create(model="claude-llmts-test", max_tokens=64, messages=MESSAGES)
    assert reply.content[0].text == "Explicit next attempt."


def test_abort_raises_the_sdk_connection_error(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"mode": "abort_connection"})
    client = llmts_session.anthropic_client(max_retries=0)

    # anthropic 2.x (httpx2) lets the transport's ReadError through while a stream is read; 1.x wraps it.
    with (
        pytest.raises(transport_errors()),
        client.messages.stream(model="claude-llmts-test", max_tokens=64, messages=MESSAGES) as stream,
    ):
        for _ in stream.text_stream:
            pass
    entry = _entry(llmts_session)
    assert entry["transport_outcome"] == "aborted" and entry["terminal_marker_observed"] is False


def test_delay_then_continue_completes_with_message_stop(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"mode": "delay_then_continue", "delay_ms": 1000})
    client = llmts_session.anthropic_client(_strict_response_validation=True, max_retries=0)

    arrivals = []
    started = time.monotonic()
    with client.messages.stream(model="claude-llmts-test", max_tokens=64, messages=MESSAGES) as stream:
        for text in stream.text_stream:
            arrivals.append((text, time.monotonic()))
        final = stream.get_final_message()

    assert [t for t, _ in arrivals] == ["First ", "second."]
    # The pause starts once the first frame left the server; the client needs a little to parse it.
    assert arrivals[1][1] - started >= 1.0
    assert arrivals[1][1] - arrivals[0][1] >= 0.6
    assert final.stop_reason == "end_turn"
    entry = _entry(llmts_session)
    assert entry["transport_outcome"] == "completed" and entry["terminal_marker_observed"] is True


def test_plans_do_not_apply_to_tool_requests(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"mode": "early_clean_end"})
    client = llmts_session.anthropic_client(max_retries=0)
    tools = [{"name": "f", "description": "f", "input_schema": {"type": "object"}}]

    with pytest.raises(anthropic.APIStatusError) as caught:
        client.messages.create(
            model="claude-llmts-test", max_tokens=64, messages=MESSAGES, stream=True, tools=tools
        )
    assert caught.value.status_code == 409
    assert _text(_events(client)) == "First "  # not consumed


def test_cache_warmup_bypasses_the_planned_response(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"mode": "early_clean_end"})
    client = llmts_session.anthropic_client(max_retries=0)

    warm = client.messages.create(model="claude-llmts-test", max_tokens=0, messages=MESSAGES)

    assert warm.content == []
    assert _text(_events(client)) == "First "


def test_malformed_frame_breaks_the_anthropic_parser(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"mode": "malformed_frame"})
    client = llmts_session.anthropic_client(max_retries=0)

    with pytest.raises(ValueError):  # json.JSONDecodeError: the frame names an event the SDK parses
        _events(client)
    entry = _entry(llmts_session)
    assert entry["stream_delivery_applied"] is True
    # The SDK closes the connection as it raises, maybe before the server wrote the rest: a race.
    assert entry["transport_outcome"] in ("completed", "client_gone")
    assert entry["success"] is False  # the stream was damaged on purpose
