"""Stream delivery plans on OpenAI Chat Completions: the official SDK's view, raw sockets, and evidence."""

from __future__ import annotations

import errno
import json
import socket
import threading
import time
from typing import Any
from urllib.parse import urlsplit

import openai
import pytest

from llmts import SessionClient
from tests.helpers import USER_HI, timeout_errors, transport_errors
from tests.support.configure import delivery

pytestmark = pytest.mark.sdk

CHAT = "/openai/v1/chat/completions"


_configure = delivery


def _stream(client: Any, **extra: Any) -> Any:
    return client.chat.completions.create(
        model="gpt-4.1-mini", messages=USER_HI, stream=True, stream_options={"include_usage": True}, **extra
    )


def _next_answer(client: Any) -> str:
    return client.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI).choices[0].message.content


def _entry(session: SessionClient, **query: Any) -> dict[str, Any]:
    """The newest journal entry, once its delivery is over."""
    deadline = time.monotonic() + 5
    while True:
        entries = session.requests(operation="chat.completions", streaming=True, **query)
        if entries and entries[0]["completed"]:
            return entries[0]
        assert time.monotonic() < deadline, f"no completed entry: {entries}"
        time.sleep(0.01)


def _raw_stream_request(session: SessionClient) -> tuple[bytes, tuple[str, int]]:
    parts = urlsplit(session.provider_base)
    body = json.dumps({"model": "gpt-4.1-mini", "messages": USER_HI, "stream": True})
    request = (
        f"POST {parts.path}{CHAT} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n{body}"
    ).encode()
    assert parts.hostname is not None and parts.port is not None
    return request, (parts.hostname, parts.port)


def test_early_clean_end_yields_the_exact_prefix_without_terminal(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"mode": "early_clean_end", "after_content_frames": 1})
    client = llmts_session.openai_client(_strict_response_validation=True, max_retries=0)

    chunks = list(_stream(client))

    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "First "
    assert all(c.choices[0].finish_reason is None for c in chunks if c.choices)
    assert all(c.usage is None for c in chunks)
    entry = _entry(llmts_session)
    assert entry["stream_delivery"] == {"mode": "early_clean_end", "after_content_frames": 1}
    assert entry["stream_delivery_applied"] is True
    assert entry["emitted_content_frames"] == 1
    assert entry["terminal_marker_observed"] is False
    assert entry["transport_outcome"] == "early_end"
    assert entry["success"] is False
    # Commit before delivery: the explicit retry gets the next queued answer.
    assert _next_answer(client) == "Explicit next attempt."


def test_early_clean_end_is_a_terminated_chunked_body_with_keep_alive(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"mode": "early_clean_end"})
    request, address = _raw_stream_request(llmts_session)
    with socket.create_connection(address, timeout=5) as sock:
        sock.sendall(request)
        received = b""
        while not received.endswith(b"0\r\n\r\n"):
            data = sock.recv(65536)
            assert data, "the server closed instead of ending the chunked body"
            received += data
        assert b'"content":"First "' in received
        assert b"second." not in received and b"[DONE]" not in received
        sock.sendall(request)  # the same connection serves the next request
        follow_up = b""
        while not follow_up.endswith(b"0\r\n\r\n"):
            data = sock.recv(65536)
            assert data
            follow_up += data
        assert b"Explicit next attempt." in follow_up and b"data: [DONE]\n\n" in follow_up


def test_abort_connection_raises_connection_error_and_server_serves_on(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"mode": "abort_connection", "after_content_frames": 1})
    client = llmts_session.openai_client(_strict_response_validation=True, max_retries=0)

    received = []
    with pytest.raises(transport_errors()):
        for chunk in _stream(client):
            if chunk.choices and chunk.choices[0].delta.content:
                received.append(chunk.choices[0].delta.content)
    assert received == ["First "]
    entry = _entry(llmts_session)
    assert entry["transport_outcome"] == "aborted"
    assert entry["terminal_marker_observed"] is False
    assert entry["emitted_content_frames"] == 1
    assert _next_answer(client) == "Explicit next attempt."


def test_abort_is_a_tcp_reset_not_a_fin(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"mode": "abort_connection"})
    request, address = _raw_stream_request(llmts_session)
    with socket.create_connection(address, timeout=5) as sock:
        sock.sendall(request)
        received = b""
        with pytest.raises(ConnectionResetError) as caught:
            while True:
                data = sock.recv(65536)
                assert data, "got a FIN (clean close) where a reset was planned"
                received += data
    assert caught.value.errno == errno.ECONNRESET
    assert b'"content":"First "' in received


def test_delay_then_continue_delivers_everything_after_a_measured_pause(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"mode": "delay_then_continue", "after_content_frames": 1, "delay_ms": 1000})
    client = llmts_session.openai_client(_strict_response_validation=True, max_retries=0)

    arrivals = []
    for chunk in _stream(client):
        if chunk.choices and chunk.choices[0].delta.content:
            arrivals.append((chunk.choices[0].delta.content, time.monotonic()))

    assert [text for text, _ in arrivals] == ["First ", "second."]
    assert arrivals[1][1] - arrivals[0][1] >= 0.6  # the 1 s pause, less the client's parsing of frame 1
    entry = _entry(llmts_session)
    assert entry["transport_outcome"] == "completed"
    assert entry["terminal_marker_observed"] is True
    assert entry["emitted_content_frames"] == 2
    assert entry["stream_delivery_applied"] is True


def test_client_cancelling_during_the_pause_is_recorded_as_gone_quickly(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"mode": "delay_then_continue", "delay_ms": 10_000})
    client = llmts_session.openai_client(max_retries=0)

    stream = _stream(client)
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            break  # the first content frame arrived: the server is now pausing
    stream.close()
    closed_at = time.monotonic()

    entry = _entry(llmts_session)
    # Server and client share CLOCK_MONOTONIC (same host): the server's own completion time tells when it
    # noticed, without the journal polling.
    noticed = entry["completed_monotonic_seconds"] - closed_at
    assert entry["transport_outcome"] == "client_gone"
    assert entry["emitted_content_frames"] == 1
    assert entry["terminal_marker_observed"] is False
    assert noticed < 0.1  # the wait notices within its 50 ms slice


def test_truncate_bytes_cuts_inside_a_frame_and_the_sdk_drops_the_partial_event(
    llmts_session: SessionClient,
) -> None:
    _configure(llmts_session, {"mode": "truncate_bytes", "after_content_frames": 1, "cut_bytes": 20})
    client = llmts_session.openai_client(_strict_response_validation=True, max_retries=0)

    chunks = list(_stream(client))

    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "First "
    entry = _entry(llmts_session)
    assert entry["transport_outcome"] == "early_end" and entry["terminal_marker_observed"] is False


def test_malformed_frame_makes_the_sdk_fail_to_decode(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"mode": "malformed_frame", "after_content_frames": 1})
    client = llmts_session.openai_client(max_retries=0)

    with pytest.raises(json.JSONDecodeError):
        list(_stream(client))
    entry = _entry(llmts_session)
    assert (entry["stream_delivery_applied"], entry["success"]) == (True, False)
    # The server writes on after the bad frame; the SDK closes the connection as it raises. Whether the
    # rest of the stream left before that close is a race (on a loaded machine it may not have).
    assert entry["transport_outcome"] in ("completed", "client_gone")


def test_stall_holds_until_the_client_times_out(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"mode": "stall", "after_content_frames": 1, "delay_ms": 30_000})
    client = llmts_session.openai_client(max_retries=0, timeout=0.5)

    started = time.monotonic()
    with pytest.raises(timeout_errors()):
        list(_stream(client))
    assert 0.4 < time.monotonic() - started < 5
    assert _entry(llmts_session)["transport_outcome"] == "client_gone"


def test_slow_drip_paces_the_whole_stream(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"mode": "slow_drip", "bytes_per_second": 4000})
    client = llmts_session.openai_client(_strict_response_validation=True, max_retries=0)

    started = time.monotonic()
    chunks = list(_stream(client))
    elapsed = time.monotonic() - started

    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "First second."
    entry = _entry(llmts_session)
    assert entry["transport_outcome"] == "completed" and entry["terminal_marker_observed"] is True
    assert elapsed >= 0.15  # ~1 KB of frames at 4 KB/s


@pytest.mark.parametrize("mode", ["reset_before_headers", "empty_response"])
def test_connection_faults_before_any_byte_raise_and_are_retried(
    llmts_session: SessionClient, mode: str
) -> None:
    _configure(llmts_session, {"mode": mode})
    no_retry = llmts_session.openai_client(max_retries=0)
    with pytest.raises(openai.APIConnectionError):
        no_retry.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI)

    _configure(llmts_session, {"mode": mode})
    retrying = llmts_session.openai_client(max_retries=2)
    raw = retrying.chat.completions.with_raw_response.create(model="gpt-4.1-mini", messages=USER_HI)
    assert raw.parse().choices[0].message.content == "Explicit next attempt."
    assert raw.retries_taken == 1
    first = llmts_session.requests(order="asc")[0]
    assert first["transport_outcome"] == "aborted" and first["status"] is None


def test_http_error_page_is_a_typed_5xx(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"mode": "http_error_page", "status": 502})
    client = llmts_session.openai_client(max_retries=0)

    with pytest.raises(openai.InternalServerError) as caught:
        client.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI)

    assert caught.value.status_code == 502
    assert caught.value.response.headers["content-type"] == "text/html"
    assert "502 Bad Gateway" in caught.value.response.text
    entry = llmts_session.requests()[0]
    assert (entry["status"], entry["success"], entry["terminal_marker_observed"]) == (502, False, False)
    assert "502 Bad Gateway" in entry["response_preview"]


@pytest.mark.parametrize(
    ("extra", "stream"),
    [
        ({}, False),
        ({"tools": [{"type": "function", "function": {"name": "f"}}]}, True),
        ({"response_format": {"type": "json_object"}}, True),
    ],
)
def test_in_stream_plans_reject_unsupported_requests_without_consuming(
    llmts_session: SessionClient, extra: dict[str, Any], stream: bool
) -> None:
    _configure(llmts_session, {"mode": "early_clean_end"})
    client = llmts_session.openai_client(max_retries=0)

    with pytest.raises(openai.ConflictError) as caught:
        client.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI, stream=stream, **extra)
    assert caught.value.code == "llm_test_server_fixture_mismatch"
    chunks = list(_stream(client))  # the planned response is still first in the queue
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "First "


@pytest.mark.parametrize(
    ("plan", "fragment"),
    [
        ({"mode": "early_clean_end", "after_content_frames": 3}, "unreachable"),
        ({"mode": "delay_then_continue"}, "delay_ms"),
        ({"mode": "delay_then_continue", "delay_ms": 60_001}, "delay_ms"),
        ({"mode": "abort_connection", "delay_ms": 5}, "delay_ms"),
        ({"mode": "early_clean_end", "after_content_frames": 0}, "after_content_frames"),
        ({"mode": "early_clean_end", "after_content_frames": 129}, "after_content_frames"),
        ({"mode": "truncate_bytes"}, "cut_bytes"),
        ({"mode": "slow_drip"}, "bytes_per_second"),
        ({"mode": "http_error_page", "status": 500}, "status"),
        ({"mode": "teleport"}, "mode"),
    ],
)
def test_invalid_plans_are_rejected_atomically(
    llmts_session: SessionClient, plan: dict[str, Any], fragment: str
) -> None:
    from llmts import ServerError

    llmts_session.configure({"scenarios": [{"responses": [{"text": "kept"}]}]})
    with pytest.raises(ServerError) as caught:
        _configure(llmts_session, plan)
    assert caught.value.status == 400
    assert any(fragment in (d["message"] + d["path"]) for d in caught.value.details)
    assert llmts_session.configuration()["scenarios"][0]["responses"] == [{"text": "kept"}]


def test_plans_reject_non_text_responses(llmts_session: SessionClient) -> None:
    from llmts import ServerError

    with pytest.raises(ServerError) as caught:
        llmts_session.configure(
            {
                "scenarios": [
                    {"responses": [{"json": {"a": 1}, "stream_delivery": {"mode": "early_clean_end"}}]}
                ]
            }
        )
    assert "plain-text" in caught.value.details[0]["message"]
    with pytest.raises(ServerError):
        llmts_session.configure(
            {
                "scenarios": [
                    {
                        "responses": [
                            {
                                "error": {"status": 500, "code": "x", "message": "m"},
                                "stream_delivery": {"mode": "reset_before_headers"},
                            }
                        ]
                    }
                ]
            }
        )


def test_a_loop_of_faulted_streams_leaks_nothing(own_server_factory: Any) -> None:
    server = own_server_factory(access_log=False)
    session = server.create_session()
    plans = [
        {"mode": "abort_connection"},
        {"mode": "early_clean_end"},
        {"mode": "delay_then_continue", "delay_ms": 5000},
    ]
    responses = [{"text": "ab", "chunks": ["a", "b"], "stream_delivery": plans[i % 3]} for i in range(200)]
    session.configure({"scenarios": [{"responses": responses}]})
    client = session.openai_client(max_retries=0)
    for _ in range(5):  # warm up: the first requests allocate caches and pools
        list(openai.OpenAI(base_url=f"{server.url}/openai/v1", api_key="k").models.list())
    # The first request for the model loads its encoding (docs/tokens.md); counting consumes no answer.
    body = {"model": "gpt-4.1-mini", "input": "warm up"}
    client.post("/responses/input_tokens", body=body, cast_to=object)
    baseline = server.process_stats()

    def one() -> None:
        # Leave after the first content frame: that cancels the delayed streams during their pause.
        try:
            stream = _stream(client)
            for chunk in stream:
                if chunk.choices and chunk.choices[0].delta.content:
                    stream.close()
                    return
        except openai.APIConnectionError:
            pass  # the aborted ones

    threads = [threading.Thread(target=one) for _ in range(200)]
    for batch in range(0, 200, 20):
        for thread in threads[batch : batch + 20]:
            thread.start()
        for thread in threads[batch : batch + 20]:
            thread.join(20)
    client.close()
    time.sleep(0.3)

    after = server.process_stats()
    entries = [e for e in session.requests(limit=500) if e["operation"] == "chat.completions"]
    assert len(entries) == 200 and all(e["completed"] for e in entries)
    assert {e["transport_outcome"] for e in entries} == {"aborted", "early_end", "client_gone"}
    assert after["greenlets"] <= baseline["greenlets"] + 2
    assert after["open_sockets"] <= baseline["open_sockets"] + 2
    assert after["rss_bytes"] < baseline["rss_bytes"] + 16 * 1024 * 1024
