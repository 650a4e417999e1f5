"""Pacing of streamed answers (docs/realistic-answers.md "Pacing"): the server's own journal timestamps
show the time to the first frame and the spacing; every provider surface and stream kind is paced; a
reset ends a paced stream; jitter is seeded; and many paced streams cost no greenlet per token."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import openai
import pytest

from llmts import LlmTestServer, SessionClient
from tests.helpers import USER_HI, WEATHER_TOOL

pytestmark = pytest.mark.sdk

MODEL = "gpt-4.1-mini"
# 40 words: about 50 output tokens by the server's estimate (the journal's usage says exactly).
TEXT = " ".join(f"word{i}" for i in range(40))
CHUNKS = [TEXT[i : i + 20] for i in range(0, len(TEXT), 20)]


def _timing(entry: dict[str, Any]) -> tuple[float, float]:
    """(seconds to the first frame, seconds from the first frame to the last) on the server's clock."""
    started = entry["started_monotonic_seconds"]
    first, last = entry["first_frame_monotonic_seconds"], entry["last_frame_monotonic_seconds"]
    return first - started, last - first


def test_openai_chat_stream_waits_ttft_then_spreads_tokens(llmts_session: SessionClient) -> None:
    llmts_session.configure(
        {
            "scenarios": [
                {
                    "responses": [
                        {"text": TEXT, "chunks": CHUNKS, "pacing": {"ttft_ms": 300, "tokens_per_second": 100}}
                    ]
                }
            ]
        }
    )
    client = llmts_session.openai_client(max_retries=0, _strict_response_validation=True)
    stream = client.chat.completions.create(model=MODEL, messages=USER_HI, stream=True)
    text = "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
    assert text == TEXT

    (entry,) = llmts_session.requests()
    tokens = entry["usage"]["output_tokens"]
    ttft, spread = _timing(entry)
    assert entry["success"] and entry["transport_outcome"] == "completed"
    assert entry["pacing_planned_ms"] == pytest.approx(300 + tokens * 10, abs=1)
    # Waits are never shorter than planned (the writer keeps an absolute schedule); the upper bounds only
    # catch a runaway and leave room for a loaded machine.
    assert 0.3 <= ttft < 0.3 + 3.0
    assert tokens / 100 - 0.02 <= spread < tokens / 100 + 3.0


def test_session_default_paces_every_provider_and_stream_kind(llmts_session: SessionClient) -> None:
    pacing = {"ttft_ms": 150, "tokens_per_second": 200}
    call = {"name": "get_weather", "arguments": {"city": "Paris, with a long enough argument text"}}
    llmts_session.configure(
        {
            "pacing": pacing,
            "scenarios": [
                {"provider": "openai", "responses": [{"tool_calls": [call]}, {"json": {"answer": TEXT}}]},
                {"provider": "anthropic", "responses": [{"text": TEXT, "chunks": CHUNKS}]},
                {"provider": "gemini", "responses": [{"text": TEXT, "chunks": CHUNKS}]},
            ],
        }
    )
    openai_client = llmts_session.openai_client(max_retries=0, _strict_response_validation=True)
    calls = openai_client.chat.completions.create(
        model=MODEL, messages=USER_HI, tools=[WEATHER_TOOL], stream=True
    )
    assert [chunk for chunk in calls]
    with openai_client.responses.stream(
        model=MODEL, input="Hi", text={"format": {"type": "json_object"}}
    ) as stream:
        assert "answer" in stream.get_final_response().output_text
    anthropic_client = llmts_session.anthropic_client(max_retries=0, _strict_response_validation=True)
    with anthropic_client.messages.stream(model=MODEL, max_tokens=100, messages=USER_HI) as stream:
        assert stream.get_final_text() == TEXT
    gemini = llmts_session.gemini_client()
    text = "".join(c.text or "" for c in gemini.models.generate_content_stream(model=MODEL, contents="Hi"))
    assert text == TEXT

    entries = llmts_session.requests(order="asc")
    assert [e["provider"] for e in entries] == ["openai", "openai", "anthropic", "gemini"]
    for entry in entries:
        tokens = entry["usage"]["output_tokens"]
        ttft, spread = _timing(entry)
        assert entry["success"], entry
        assert entry["pacing_planned_ms"] == pytest.approx(150 + tokens * 5, abs=1)
        assert ttft >= 0.15
        assert spread >= tokens * 0.005 - 0.02


def test_unpaced_streams_and_whole_answers_are_not_paced(llmts_session: SessionClient) -> None:
    llmts_session.configure(
        {
            "scenarios": [
                {"responses": [{"text": TEXT, "pacing": {"ttft_ms": 500}}, {"text": TEXT}]},
            ]
        }
    )
    client = llmts_session.openai_client(max_retries=0, _strict_response_validation=True)
    client.chat.completions.create(model=MODEL, messages=USER_HI)  # pacing applies to streams only
    list(client.chat.completions.create(model=MODEL, messages=USER_HI, stream=True))
    whole, stream = llmts_session.requests(order="asc")
    # The whole body did not wait its 500 ms time to first frame (on the server's clock).
    assert whole["completed_monotonic_seconds"] - whole["started_monotonic_seconds"] < 0.45
    assert whole["pacing_planned_ms"] is None and whole["first_frame_monotonic_seconds"] is None
    assert stream["pacing_planned_ms"] is None
    assert stream["first_frame_monotonic_seconds"] == stream["last_frame_monotonic_seconds"]


def _paced_planned(session: SessionClient, seed: str) -> list[float]:
    session.configure(
        {
            "determinism": {"seed": seed},
            "pacing": {"ttft_ms": 20, "tokens_per_second": 2000, "jitter": 0.8},
            "scenarios": [{"responses": [{"text": TEXT, "chunks": CHUNKS}] * 3}],
        }
    )
    client = session.openai_client(max_retries=0)
    for _ in range(3):
        list(client.chat.completions.create(model=MODEL, messages=USER_HI, stream=True))
    return [entry["pacing_planned_ms"] for entry in session.requests(order="asc")]


def test_jitter_is_seeded_by_determinism_seed(llmts_server: LlmTestServer) -> None:
    sessions = [llmts_server.create_session() for _ in range(3)]
    try:
        first = _paced_planned(sessions[0], "run-1")
        again = _paced_planned(sessions[1], "run-1")
        other = _paced_planned(sessions[2], "run-2")
    finally:
        for session in sessions:
            session.delete()
    assert first == again
    assert first != other
    assert len(set(first)) == 3  # each request of a run draws its own jitter


def test_reset_during_ttft_is_superseded_409(llmts_session: SessionClient) -> None:
    llmts_session.configure({"scenarios": [{"responses": [{"text": TEXT, "pacing": {"ttft_ms": 5000}}]}]})
    client = llmts_session.openai_client(max_retries=0)
    errors: list[BaseException] = []

    def call() -> None:
        try:
            list(client.chat.completions.create(model=MODEL, messages=USER_HI, stream=True))
        except BaseException as error:
            errors.append(error)

    worker = threading.Thread(target=call)
    started = time.monotonic()
    worker.start()
    time.sleep(0.3)
    llmts_session.reset()
    worker.join(10)
    assert time.monotonic() - started < 3
    (error,) = errors
    assert isinstance(error, openai.ConflictError)
    assert error.code == "llm_test_server_request_superseded"


def test_reset_during_a_paced_stream_ends_it_cleanly(llmts_session: SessionClient) -> None:
    llmts_session.configure(
        {
            "scenarios": [
                {"responses": [{"text": TEXT, "chunks": CHUNKS, "pacing": {"tokens_per_second": 10}}]}
            ]
        }
    )
    client = llmts_session.openai_client(max_retries=0)
    stream = client.chat.completions.create(model=MODEL, messages=USER_HI, stream=True)
    first = next(iter(stream))
    assert first.choices
    started = time.monotonic()
    llmts_session.reset()  # also clears the journal: the entry below is the one the reset cut short
    rest = "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
    assert time.monotonic() - started < 2  # ended within a wait slice, not after the ~5 s schedule
    assert rest != TEXT
    # The stream ended without [DONE]; the journal (cleared by the reset) is checked in the raw test.


def test_superseded_stream_ends_without_its_terminal_marker(llmts_session: SessionClient) -> None:
    session = llmts_session
    session.configure(
        {
            "scenarios": [
                {"responses": [{"text": TEXT, "chunks": CHUNKS, "pacing": {"tokens_per_second": 10}}]}
            ]
        }
    )
    parts = urlsplit(session.provider_base)
    body = b'{"model": "gpt-4.1-mini", "stream": true, "messages": [{"role": "user", "content": "Hi"}]}'
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        head = (
            f"POST {parts.path.rstrip('/')}/openai/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        sock.sendall(head.encode() + body)
        received = sock.recv(65536)
        assert b"200 OK" in received
        session.configure({"scenarios": [{"responses": [{"text": "new"}]}]})
        while chunk := sock.recv(65536):
            received += chunk
            if received.endswith(b"0\r\n\r\n"):
                break
    assert b"[DONE]" not in received
    assert received.endswith(b"0\r\n\r\n")  # a clean chunked end


def test_many_paced_streams_cost_no_greenlet_per_token(
    own_server_factory: Callable[..., LlmTestServer],
) -> None:
    server = own_server_factory(access_log=False)
    session = server.create_session()
    session.configure(
        {
            "pacing": {"ttft_ms": 1500, "tokens_per_second": 50},
            "scenarios": [
                {"terminal_policy": "repeat_last_response", "responses": [{"text": TEXT, "chunks": CHUNKS}]}
            ],
        }
    )
    baseline = server.process_stats()["greenlets"]
    parts = urlsplit(session.provider_base)
    body = b'{"model": "gpt-4.1-mini", "stream": true, "messages": [{"role": "user", "content": "Hi"}]}'
    head = (
        f"POST {parts.path.rstrip('/')}/openai/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    sockets = []
    opened = time.monotonic()
    for _ in range(200):
        sock = socket.create_connection((parts.hostname, parts.port), timeout=30)
        sock.sendall(head + body)
        sockets.append(sock)
    # While every stream waits its time to first frame, count the live greenlets (all requests arrived).
    deadline, during = time.monotonic() + 1.2, 0
    while time.monotonic() < deadline and during - baseline < 200:
        during = max(during, server.process_stats()["greenlets"])
        time.sleep(0.05)
    # Past the time to first frame every stream is between frames (about 1.4 s of tokens at 50/s).
    time.sleep(max(0.0, opened + 2.0 - time.monotonic()))
    between = server.process_stats()["greenlets"]
    for sock in sockets:
        received = b""
        while not received.endswith(b"0\r\n\r\n"):
            chunk = sock.recv(65536)
            assert chunk
            received += chunk
        assert b"[DONE]" in received
        sock.close()
    # One greenlet per connection (plus the server's few), not one per token or frame.
    assert 200 <= during - baseline <= 200 + 10
    assert between - baseline <= 200 + 10
    entries = session.requests(limit=500)
    assert len(entries) == 200 and all(e["success"] for e in entries)
    ttfts = [_timing(e)[0] for e in entries]
    assert min(ttfts) >= 1.5


def test_conversation_steps_and_azure_streams_are_paced(llmts_session: SessionClient) -> None:
    llmts_session.configure(
        {
            "azure_deployments": {"dep": MODEL},
            "pacing": {"ttft_ms": 120},
            "conversations": [
                {
                    "id": "g",
                    "steps": [
                        {
                            "id": "ask",
                            "when": {"turn": 1, "latest_user_equals": "Graph"},
                            "response": {"text": TEXT, "pacing": {"ttft_ms": 250, "tokens_per_second": 400}},
                            "complete": True,
                        }
                    ],
                }
            ],
            "scenarios": [{"provider": "azure-openai", "responses": [{"text": TEXT, "chunks": CHUNKS}]}],
        }
    )
    client = llmts_session.openai_client(max_retries=0, _strict_response_validation=True)
    graph_turn = [{"role": "user", "content": "Graph"}]
    assert list(client.chat.completions.create(model=MODEL, messages=graph_turn, stream=True))
    azure = llmts_session.azure_openai_client(max_retries=0, _strict_response_validation=True)
    text = "".join(
        chunk.choices[0].delta.content or ""
        for chunk in azure.chat.completions.create(model="dep", messages=USER_HI, stream=True)
        if chunk.choices
    )
    assert text == TEXT
    step, deployment = llmts_session.requests(order="asc")
    assert (step["scenario"], deployment["provider"], deployment["scenario"]) == (
        "g",
        "azure-openai",
        "scenario_0",
    )
    tokens = step["usage"]["output_tokens"]
    assert step["pacing_planned_ms"] == pytest.approx(250 + tokens * 2.5, abs=1)
    assert _timing(step)[0] >= 0.25
    assert deployment["pacing_planned_ms"] == pytest.approx(120, abs=1)  # the session default: ttft only
    assert _timing(deployment)[0] >= 0.12
