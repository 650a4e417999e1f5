"""``GET /metrics`` (parsed by Prometheus's own parser after SDK traffic), ``GET /ready`` and the drain
before the graceful stop (docs/deployment.md)."""

from __future__ import annotations

import signal
import socket
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import anthropic
import openai
import pytest
from prometheus_client.parser import text_string_to_metric_families

from llmts import LlmTestServer
from llmts.runtime.journal import JournalRecord
from llmts.schema.faults import StreamDelivery
from llmts.server.api.metrics import LATENCY_BUCKETS, ProcessMetrics
from tests.helpers import USER_HI, raw_request

pytestmark = pytest.mark.sdk


def _samples(server: LlmTestServer, headers: dict[str, str] | None = None) -> dict[tuple[str, Any], float]:
    page = raw_request(server.url, "GET", "/metrics", headers=headers)
    assert page.status == 200, page.body
    assert page.headers["content-type"].startswith("text/plain; version=0.0.4")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(page.body.decode())
        for sample in family.samples
    }


def _requests(samples: dict[tuple[str, Any], float], provider: str, operation: str, status: int) -> float:
    labels = (("operation", operation), ("provider", provider), ("status", str(status)))
    return samples.get(("llmts_requests_total", labels), 0.0)


def test_metrics_after_sdk_traffic(own_server_factory: Callable[..., LlmTestServer]) -> None:
    server = own_server_factory()
    session = server.create_session()
    fault = {"mode": "early_clean_end", "after_content_frames": 1}
    session.configure(
        {
            "scenarios": [
                {
                    "provider": "openai",
                    "responses": [
                        {"text": "one"},
                        {"text": "two"},
                        {"text": "a b", "chunks": ["a ", "b"]},
                        {"text": "c d", "chunks": ["c ", "d"], "stream_delivery": fault},
                        {"error": {"status": 429, "code": "rate_limit_exceeded", "message": "slow"}},
                    ],
                },
                {"provider": "anthropic", "responses": [{"text": "claude"}]},
            ]
        }
    )
    client = session.openai_client(max_retries=0, _strict_response_validation=True)
    for _ in range(2):
        client.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI)
    assert (
        "".join(
            c.choices[0].delta.content or ""
            for c in client.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI, stream=True)
            if c.choices
        )
        == "a b"
    )
    cut = client.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI, stream=True)
    assert "".join(c.choices[0].delta.content or "" for c in cut if c.choices) == "c "
    with pytest.raises(openai.RateLimitError):
        client.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI)
    message = session.anthropic_client(max_retries=0).messages.create(
        model="claude-haiku-4-5", max_tokens=64, messages=[{"role": "user", "content": "Hi"}]
    )
    assert isinstance(message, anthropic.types.Message)
    stranger = server.session("ses_" + "0" * 32).openai_client(max_retries=0)
    with pytest.raises(openai.NotFoundError):
        stranger.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI)

    samples = _samples(server)

    assert _requests(samples, "openai", "chat.completions", 200) == 4
    assert _requests(samples, "openai", "chat.completions", 429) == 1
    assert _requests(samples, "anthropic", "messages", 200) == 1
    rejected = (("provider", "openai"), ("status", "404"))
    assert samples[("llmts_rejected_requests_total", rejected)] == 1  # the unknown session
    faults = (("mode", "early_clean_end"), ("provider", "openai"))
    assert samples[("llmts_stream_faults_applied_total", faults)] == 1
    assert samples[("llmts_request_duration_seconds_count", ())] == 6
    assert samples[("llmts_request_duration_seconds_bucket", (("le", "+Inf"),))] == 6
    assert 0 < samples[("llmts_request_duration_seconds_sum", ())] < 30
    assert samples[("llmts_sessions", ())] == 2  # default + ours
    journal_bytes = samples[("llmts_journal_bytes", ())]
    assert journal_bytes > 0
    assert samples[("llmts_journal_entries", ())] == 6
    assert journal_bytes == server.process_stats()["memory"]["journal_bytes"]
    assert ("process_resident_memory_bytes", ()) in samples

    session.delete()
    after = _samples(server)
    assert after[("llmts_sessions", ())] == 1
    assert after[("llmts_journal_bytes", ())] == 0
    assert (
        _requests(after, "openai", "chat.completions", 200) == 4
    )  # counters are the process's, not the session's


def test_metrics_key_guards_only_metrics(own_server_factory: Callable[..., LlmTestServer]) -> None:
    server = own_server_factory(extra_args=["--metrics-key", "scrape-secret"], control_key="ctl")
    refused = raw_request(server.url, "GET", "/metrics")
    assert refused.status == 401
    assert refused.json()["error"]["code"] == "unauthorized"
    wrong = raw_request(server.url, "GET", "/metrics", headers={"Authorization": "Bearer ctl"})
    assert wrong.status == 401
    assert ("llmts_sessions", ()) in _samples(server, {"Authorization": "Bearer scrape-secret"})
    assert raw_request(server.url, "GET", "/ready").status == 200  # probes never need a key


def test_metrics_without_a_key_need_no_control_key(
    shared_server_factory: Callable[..., LlmTestServer],
) -> None:
    server = shared_server_factory(control_key="ctl-secret")
    assert ("llmts_sessions", ()) in _samples(server)
    assert raw_request(server.url, "GET", "/admin-api/sessions").status == 401


def test_process_metrics_count_plain_numbers() -> None:
    metrics = ProcessMetrics()
    entry = JournalRecord("req_1", 1, "openai", 0.0, 10.0)
    entry.operation, entry.status, entry.completed_monotonic_seconds = "chat", 200, 10.003
    metrics.record(entry)
    faulted = JournalRecord("req_2", 2, "gemini", 0.0, 10.0)
    faulted.operation, faulted.status, faulted.completed_monotonic_seconds = "chat", 200, 45.0
    faulted.stream_delivery = StreamDelivery(mode="abort_connection", after_content_frames=1)
    faulted.stream_delivery_applied = True
    metrics.record(faulted)
    assert metrics.requests == {("openai", "chat", 200): 1, ("gemini", "chat", 200): 1}
    assert metrics.faults == {("gemini", "abort_connection"): 1}
    assert metrics.buckets[LATENCY_BUCKETS.index(0.005)] == 1  # 3 ms
    assert metrics.buckets[-1] == 1  # 35 s: beyond the last bound
    assert metrics.duration_sum == pytest.approx(35.003)


# --- readiness and the drain ---------------------------------------------------------------------------


def _connect(server: LlmTestServer) -> socket.socket:
    parts = urlsplit(server.url)
    return socket.create_connection((parts.hostname, parts.port), timeout=20)


def _read_to_close(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def test_ready_drains_before_the_graceful_stop_and_in_flight_streams_finish(
    own_server_factory: Callable[..., LlmTestServer],
) -> None:
    server = own_server_factory(extra_args=["--drain-seconds", "1.5", "--graceful-timeout", "10"])
    assert raw_request(server.url, "GET", "/ready").json() == {"status": "ready"}
    session = server.create_session()
    paced = {"text": "a b c d", "chunks": ["a ", "b ", "c ", "d"], "pacing": {"tokens_per_second": 3}}
    session.configure({"scenarios": [{"responses": [paced], "terminal_policy": "repeat_last_response"}]})
    body = b'{"model":"gpt-4.1-mini","stream":true,"messages":[{"role":"user","content":"Hi"}]}'
    path = urlsplit(session.provider_base).path + "/openai/v1/chat/completions"
    stream = _connect(server)
    stream.sendall(
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
        + body
    )
    time.sleep(0.3)
    assert server.process is not None
    signalled = time.monotonic()
    server.process.send_signal(signal.SIGTERM)
    time.sleep(0.3)

    # Draining: not ready, still alive, and still serving new work.
    draining = raw_request(server.url, "GET", "/ready")
    assert draining.status == 503 and draining.json() == {"status": "draining"}
    assert raw_request(server.url, "GET", "/health").status == 200
    reply = session.openai_client(max_retries=0).chat.completions.create(
        model="gpt-4.1-mini", messages=USER_HI
    )
    assert reply.choices[0].message.content == "a b c d"

    answer = _read_to_close(stream)  # the stream in flight at SIGTERM runs to its end
    assert answer.startswith(b"HTTP/1.1 200") and b"data: [DONE]" in answer
    assert server.process.wait(15) == 0
    assert 1.5 <= time.monotonic() - signalled < 8
