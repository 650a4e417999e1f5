"""Stream delivery plans on OpenAI Responses and Gemini SSE, through the official SDKs."""

from __future__ import annotations

import time
from functools import partial
from typing import Any

import pytest

from llmts import SessionClient
from tests.helpers import transport_errors
from tests.support.configure import delivery

pytestmark = pytest.mark.sdk


_configure = partial(delivery, models=["gpt-4.1-mini", "gemini-2.5-flash"])


def _entry(session: SessionClient, provider: str) -> dict[str, Any]:
    deadline = time.monotonic() + 5
    while True:
        entries = session.requests(provider=provider, streaming=True)
        if entries and entries[0]["completed"]:
            return entries[0]
        assert time.monotonic() < deadline
        time.sleep(0.01)


# --- OpenAI Responses ---------------------------------------------------------------------------------


def _responses_events(client: Any) -> list[Any]:
    return list(client.responses.create(model="gpt-4.1-mini", input="Hi", stream=True))


def test_responses_early_clean_end_has_no_completed_event(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"mode": "early_clean_end"})
    client = llmts_session.openai_client(_strict_response_validation=True, max_retries=0)

    events = _responses_events(client)

    types = [e.type for e in events]
    assert "response.completed" not in types and "response.output_text.done" not in types
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == "First "
    entry = _entry(llmts_session, "openai")
    assert (entry["transport_outcome"], entry["terminal_marker_observed"]) == ("early_end", False)
    # Committed before delivery: the whole answer was stored although the client saw a prefix.
    stored_id = events[0].response.id
    assert client.responses.retrieve(stored_id).output_text == "First second."
    assert client.responses.create(model="gpt-4.1-mini", input="Hi").output_text == "Explicit next attempt."


def test_responses_abort_raises_a_connection_error(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"mode": "abort_connection"})
    client = llmts_session.openai_client(max_retries=0)

    deltas = []
    with pytest.raises(transport_errors()):
        for event in client.responses.create(model="gpt-4.1-mini", input="Hi", stream=True):
            if event.type == "response.output_text.delta":
                deltas.append(event.delta)
    assert deltas == ["First "]
    assert _entry(llmts_session, "openai")["transport_outcome"] == "aborted"


def test_responses_delay_then_continue_through_the_stream_helper(llmts_session: SessionClient) -> None:
    client = llmts_session.openai_client(_strict_response_validation=True, max_retries=0)
    # Warm the helper's first-use parsing (model classes built on first sight): on a loaded machine it can
    # take longer than the gap measured below and would hide it.
    llmts_session.configure({"models": ["gpt-4.1-mini"], "scenarios": [{"responses": [{"text": "Warm."}]}]})
    with client.responses.stream(model="gpt-4.1-mini", input="Hi") as warm:
        assert warm.get_final_response().output_text == "Warm."
    _configure(llmts_session, {"mode": "delay_then_continue", "delay_ms": 1500})

    started = time.monotonic()
    arrivals = []
    with client.responses.stream(model="gpt-4.1-mini", input="Hi") as stream:
        for event in stream:
            if event.type == "response.output_text.delta":
                arrivals.append(time.monotonic())
        final = stream.get_final_response()

    assert final.output_text == "First second."
    # Without the plan every frame leaves at once; the helper's first-use parsing shortens the visible gap.
    assert arrivals[1] - started >= 1.5 and arrivals[1] - arrivals[0] >= 0.75
    entry = _entry(llmts_session, "openai")
    assert (entry["transport_outcome"], entry["terminal_marker_observed"]) == ("completed", True)


# --- Gemini -------------------------------------------------------------------------------------------


def test_gemini_delay_then_continue_and_cancel_during_the_pause(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"mode": "delay_then_continue", "delay_ms": 10_000})
    client = llmts_session.gemini_client()

    stream = client.models.generate_content_stream(model="gemini-2.5-flash", contents="Hi")
    first = next(iter(stream))
    assert first.text == "First "
    stream.close()
    closed_at = time.monotonic()

    entry = _entry(llmts_session, "gemini")
    assert entry["transport_outcome"] == "client_gone"
    assert entry["completed_monotonic_seconds"] - closed_at < 0.1  # same host clock as the server
    assert (entry["emitted_content_frames"], entry["terminal_marker_observed"]) == (1, False)


def test_gemini_delay_then_continue_delivers_everything(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"mode": "delay_then_continue", "delay_ms": 300})
    client = llmts_session.gemini_client()

    started = time.monotonic()
    texts = [
        (chunk.text, time.monotonic())
        for chunk in client.models.generate_content_stream(model="gemini-2.5-flash", contents="Hi")
    ]

    assert "".join(text or "" for text, _ in texts) == "First second."
    assert texts[1][1] - started >= 0.3
    entry = _entry(llmts_session, "gemini")
    assert (entry["transport_outcome"], entry["terminal_marker_observed"]) == ("completed", True)


def test_gemini_json_array_stream_rejects_in_stream_plans(llmts_session: SessionClient) -> None:
    from tests.helpers import raw_request

    _configure(llmts_session, {"mode": "early_clean_end"})
    response = raw_request(
        llmts_session.provider_base,
        "POST",
        "/gemini/v1beta/models/gemini-2.5-flash:streamGenerateContent",
        {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]},
        {"x-goog-api-key": "k"},
    )
    assert response.status == 409
    assert response.json()["error"]["details"][0]["reason"] == "llm_test_server_fixture_mismatch"
