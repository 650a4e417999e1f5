"""Forwarding and recording (docs/recording.md): a request the session's fixtures cannot answer goes to
the upstream with the client's own credential and headers, comes back as it arrives, and is kept."""

from __future__ import annotations

import json
import socket
from typing import Any

import anthropic
import openai
import pytest

from llmts import LlmTestServer
from tests.helpers import OPENAI_CHAT_PATH
from tests.recording.conftest import EchoUpstream
from tests.recording.support import chunked_request, provider_upstream, recording_session

pytestmark = pytest.mark.sdk

_HI = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}


def _bearer(key: str = "sk-test-client-key-0001") -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_the_clients_credential_and_headers_reach_the_upstream_without_hop_by_hop_ones(
    llmts_server: LlmTestServer, echo_upstream: EchoUpstream
) -> None:
    session = recording_session(llmts_server, {"anthropic": echo_upstream.url, "openai": echo_upstream.url})
    headers = {
        "x-api-key": "sk-ant-client-key-42",
        "anthropic-version": "2023-06-01",
        "anthropic-beta": "prompt-caching-2024-07-31",
        "Connection": "close, X-Drop-Me",
        "X-Drop-Me": "hop",
        "Keep-Alive": "timeout=5",
        "X-Llm-Test-Server-Conversation": "c1",
        "Accept-Encoding": "gzip",
        "User-Agent": "my-agent/1.0",
    }
    body = {"model": "claude-test-1", "max_tokens": 16, "messages": [{"role": "user", "content": "hi"}]}
    answer = chunked_request(session.provider_base, "POST", "/anthropic/v1/messages", body, headers)
    assert answer.status == 200
    seen = echo_upstream.seen[-1]
    got = dict(seen["headers"])
    assert seen["path"] == "/v1/messages"
    assert got["x-api-key"] == "sk-ant-client-key-42"
    assert got["anthropic-version"] == "2023-06-01"
    assert got["anthropic-beta"] == "prompt-caching-2024-07-31"
    assert got["content-type"] == "application/json"
    assert got["user-agent"] == "my-agent/1.0"
    assert got["accept-encoding"] == "identity"  # the recording keeps the bytes as sent
    assert got["host"] == echo_upstream.url.removeprefix("http://")
    for dropped in ("x-drop-me", "keep-alive", "x-llm-test-server-conversation"):
        assert dropped not in got
    assert json.loads(seen["body"]) == body
    # The query (Azure's api-version, Gemini's alt) passes as sent.
    chunked_request(
        session.provider_base, "POST", OPENAI_CHAT_PATH + "?api-version=2024-10-21", _HI, _bearer()
    )
    assert echo_upstream.seen[-1]["path"] == "/v1/chat/completions?api-version=2024-10-21"
    assert dict(echo_upstream.seen[-1]["headers"])["authorization"] == "Bearer sk-test-client-key-0001"


@pytest.mark.parametrize(
    ("base_path", "sent_to"),
    [
        ("", "/v1/chat/completions"),  # the API's root
        ("/v1", "/v1/chat/completions"),  # the base URL the SDK uses: its /v1 is not repeated
        ("/v1/", "/v1/chat/completions"),
        ("/proxy/openai/v1", "/proxy/openai/v1/chat/completions"),  # mounted below a proxy path
        ("/proxy", "/proxy/v1/chat/completions"),
        ("/v1beta", "/v1beta/v1/chat/completions"),  # whole segments only
    ],
)
def test_an_upstream_is_its_apis_root_or_its_sdks_base_url(
    llmts_server: LlmTestServer, echo_upstream: EchoUpstream, base_path: str, sent_to: str
) -> None:
    session = recording_session(llmts_server, {"openai": echo_upstream.url + base_path})
    answer = chunked_request(session.provider_base, "POST", OPENAI_CHAT_PATH + "?x=1", _HI, _bearer())
    assert answer.status == 200
    assert echo_upstream.seen[-1]["path"] == sent_to + "?x=1"


def test_the_sdk_base_url_of_another_server_as_the_upstream_records_through_the_sdk(
    llmts_server: LlmTestServer, upstream_server: LlmTestServer
) -> None:
    upstream = upstream_server.create_session()
    upstream.configure({"scenarios": [{"responses": [{"text": "From the real provider."}]}]})
    session = recording_session(llmts_server, {"openai": upstream.provider_base + "/openai/v1"})
    client = session.openai_client(max_retries=0, _strict_response_validation=True)
    answer = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    assert answer.choices[0].message.content == "From the real provider."
    (entry,) = upstream.requests()
    assert entry["path"] == "/openai/v1/chat/completions"
    (recorded,) = session.recording()["scenarios"][0]["responses"]
    assert recorded["recorded"]["status"] == 200


def test_the_sessions_own_fixtures_answer_first(
    llmts_server: LlmTestServer, echo_upstream: EchoUpstream
) -> None:
    session = recording_session(
        llmts_server,
        {"openai": echo_upstream.url},
        scenarios=[{"model": "gpt-4o", "responses": [{"text": "local"}]}],
    )
    client = session.openai_client(max_retries=0, _strict_response_validation=True)
    local = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    assert local.choices[0].message.content == "local" and echo_upstream.seen == []
    forwarded = chunked_request(
        session.provider_base, "POST", OPENAI_CHAT_PATH, {**_HI, "model": "gpt-4o-mini"}, _bearer()
    )
    assert forwarded.status == 200 and forwarded.json()["echo"]["path"] == "/v1/chat/completions"
    # The scenario's queue is used up: the next gpt-4o request is forwarded too.
    assert chunked_request(session.provider_base, "POST", OPENAI_CHAT_PATH, _HI, _bearer()).status == 200
    assert len(echo_upstream.seen) == 2
    entries = session.requests()
    assert [e["status"] for e in entries] == [200, 200, 200]
    assert entries[0]["scenario"] is None and entries[-1]["scenario"] is not None
    assert [e["forwarded"] for e in entries] == [True, True, False]  # newest first
    assert [e["model"] for e in session.requests(forwarded=True)] == ["gpt-4o", "gpt-4o-mini"]


def test_a_stream_is_relayed_as_it_arrives_with_its_chunk_boundaries(
    llmts_server: LlmTestServer, upstream_server: LlmTestServer
) -> None:
    upstream = upstream_server.create_session()
    slow = {
        "text": "one two three four five six",
        "chunks": ["one ", "two ", "three ", "four ", "five ", "six"],
    }
    upstream.configure(
        {
            "scenarios": [
                {
                    "model": "gpt-4o",
                    "terminal_policy": "repeat_last_response",
                    "responses": [{**slow, "pacing": {"ttft_ms": 50, "tokens_per_second": 8}}],
                }
            ]
        }
    )
    body = {**_HI, "stream": True}
    direct = chunked_request(upstream.provider_base, "POST", OPENAI_CHAT_PATH, body, _bearer())
    session = recording_session(llmts_server, {"openai": provider_upstream(upstream, "openai")})
    relayed = chunked_request(session.provider_base, "POST", OPENAI_CHAT_PATH, body, _bearer())
    assert relayed.status == 200 and relayed.headers["content-type"].startswith("text/event-stream")
    # The same frames as a direct request; a paced upstream that falls behind on a loaded machine writes
    # overdue frames in one chunk, so each run's grouping is compared with its own recording below.
    assert sum(len(c) for c in relayed.chunks) == sum(len(c) for c in direct.chunks)
    assert len(relayed.chunks) >= 4
    # Nothing is buffered: the first frame arrived long before the upstream finished.
    assert relayed.arrivals[-1] - relayed.arrivals[0] > 0.4
    assert relayed.arrivals[0] < relayed.arrivals[-1] / 2
    recorded = session.recording()["scenarios"][0]["responses"][0]["recorded"]
    assert [f.encode() for f in recorded["frames"]] == relayed.chunks
    entry = session.requests()[0]
    assert entry["status"] == 200 and entry["transport_outcome"] == "completed" and entry["streaming"]


def test_an_upstream_429_is_passed_through_recorded_and_replayed_with_its_headers(
    llmts_server: LlmTestServer, upstream_server: LlmTestServer
) -> None:
    upstream = upstream_server.create_session()
    limited = {"status": 429, "code": "rate_limit_exceeded", "message": "slow down", "retry_after": 7}
    upstream.configure(
        {"scenarios": [{"model": "gpt-4o", "responses": [{"error": limited}, {"text": "ok"}]}]}
    )
    session = recording_session(llmts_server, {"openai": provider_upstream(upstream, "openai")})
    first = chunked_request(session.provider_base, "POST", OPENAI_CHAT_PATH, _HI, _bearer())
    assert first.status == 429 and first.headers["retry-after"] == "7"
    assert first.json()["error"]["code"] == "rate_limit_exceeded"
    client = session.openai_client(max_retries=0, _strict_response_validation=True)
    assert client.chat.completions.create(**_HI).choices[0].message.content == "ok"
    config = session.recording()
    responses = config["scenarios"][0]["responses"]
    assert responses[0]["recorded"]["status"] == 429
    assert ["retry-after", "7"] in [[n.lower(), v] for n, v in responses[0]["recorded"]["headers"]]

    replay = llmts_server.create_session()
    replay.configure(config)
    again = chunked_request(
        replay.provider_base, "POST", OPENAI_CHAT_PATH, _HI, _bearer("sk-another-key-0002")
    )
    assert again.status == 429 and again.body == first.body
    for name in ("retry-after", "x-request-id", "x-should-retry", "content-type"):
        if name in first.headers:
            assert again.headers[name] == first.headers[name]
    replayed = replay.openai_client(max_retries=0, _strict_response_validation=True)
    assert replayed.chat.completions.create(**_HI).choices[0].message.content == "ok"
    with pytest.raises(openai.APIStatusError) as exhausted:
        replayed.chat.completions.create(**_HI)
    assert exhausted.value.status_code == 409
    assert "llm_test_server_no_recorded_match" in str(exhausted.value.body)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_an_unreachable_upstream_is_the_providers_502_journaled(llmts_server: LlmTestServer) -> None:
    dead = f"http://127.0.0.1:{_closed_port()}"
    session = recording_session(llmts_server, {"openai": dead, "anthropic": dead})
    client = session.openai_client(max_retries=0, _strict_response_validation=True)
    with pytest.raises(openai.APIStatusError) as failed:
        client.chat.completions.create(**_HI)
    assert failed.value.status_code == 502
    assert failed.value.code == "llm_test_server_upstream_unreachable"
    assert "secret" not in failed.value.message
    claude = session.anthropic_client(max_retries=0)
    with pytest.raises(anthropic.APIStatusError) as claude_failed:
        claude.messages.create(
            model="claude-test-1", max_tokens=8, messages=[{"role": "user", "content": "hi"}]
        )
    assert claude_failed.value.status_code == 502
    body: Any = claude_failed.value.body
    assert body["type"] == "error" and body["error"]["type"]
    codes = [e["error_code"] for e in session.requests()]
    assert codes == ["llm_test_server_upstream_unreachable"] * 2
    assert session.recording()["scenarios"] == []


def test_an_upstream_that_does_not_answer_in_time_is_a_504(
    llmts_server: LlmTestServer, echo_upstream: EchoUpstream
) -> None:
    echo_upstream.delay = 2.0
    session = recording_session(
        llmts_server, {"openai": echo_upstream.url}, recording={"read_timeout_seconds": 0.3}
    )
    answer = chunked_request(session.provider_base, "POST", OPENAI_CHAT_PATH, _HI, _bearer())
    assert answer.status == 504
    assert answer.json()["error"]["code"] == "llm_test_server_upstream_timeout"
    entry = session.requests()[0]
    assert entry["error_code"] == "llm_test_server_upstream_timeout" and entry["status"] == 504


def test_keys_cookies_and_configured_secrets_are_never_stored(
    llmts_server: LlmTestServer, echo_upstream: EchoUpstream
) -> None:
    key = "sk-live-VERYSECRETKEY-123456"
    echo_upstream.answer = (
        200,
        [("Content-Type", "application/json"), ("Set-Cookie", "session=abc"), ("x-trace", "tok_998877")],
        json.dumps({"echoed_key": key, "token": "tok_123456", "text": "fine"}).encode(),
    )
    session = recording_session(
        llmts_server, {"openai": echo_upstream.url}, recording={"redact": ["tok_[0-9]+"]}
    )
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": f"my key is {key}"}]}
    answer = chunked_request(session.provider_base, "POST", OPENAI_CHAT_PATH, body, _bearer(key))
    assert answer.status == 200 and key in answer.body.decode()  # the client itself gets the real answer
    text = json.dumps(session.recording())
    for secret in (key, "VERYSECRET", "tok_123456", "tok_998877", "session=abc", "Bearer"):
        assert secret not in text
    assert "[REDACTED]" in text


def test_the_recording_is_bounded_by_count_and_bytes(
    llmts_server: LlmTestServer, echo_upstream: EchoUpstream
) -> None:
    session = recording_session(llmts_server, {"openai": echo_upstream.url}, recording={"max_exchanges": 1})
    assert chunked_request(session.provider_base, "POST", OPENAI_CHAT_PATH, _HI, _bearer()).status == 200
    full = chunked_request(session.provider_base, "POST", OPENAI_CHAT_PATH, _HI, _bearer())
    assert full.status == 507 and full.json()["error"]["code"] == "llm_test_server_recording_full"
    assert len(echo_upstream.seen) == 1  # nothing was forwarded
    session.reset()  # a reset empties the recording
    assert chunked_request(session.provider_base, "POST", OPENAI_CHAT_PATH, _HI, _bearer()).status == 200

    small = recording_session(llmts_server, {"openai": echo_upstream.url}, recording={"max_bytes": 1024})
    assert chunked_request(small.provider_base, "POST", OPENAI_CHAT_PATH, _HI, _bearer()).status == 200
    status, headers, config = llmts_server.request("GET", "/admin-api/recording", session_id=small.id)
    assert status == 200 and config["scenarios"] == []
    assert headers["X-Llm-Test-Server-Recording-Dropped"] == "1"
    assert headers["X-Llm-Test-Server-Recorded"] == "0"


def test_recorded_bytes_are_charged_to_the_memory_budget(
    own_server_factory: Any, echo_upstream: EchoUpstream
) -> None:
    server: LlmTestServer = own_server_factory()
    session = recording_session(server, {"openai": echo_upstream.url})
    assert server.process_stats()["memory"]["recording_bytes"] == 0
    chunked_request(session.provider_base, "POST", OPENAI_CHAT_PATH, _HI, _bearer())
    charged = server.process_stats()["memory"]["recording_bytes"]
    assert charged > 700
    session.delete()
    assert server.process_stats()["memory"]["recording_bytes"] == 0


def test_recording_query_is_checked(llmts_server: LlmTestServer) -> None:
    session = llmts_server.create_session()
    for query in ("?pacing=maybe", "?format=yaml"):
        with pytest.raises(Exception) as bad:
            llmts_server.request("GET", "/admin-api/recording" + query, session_id=session.id)
        assert getattr(bad.value, "status", None) == 400
    status, _, empty = llmts_server.request("GET", "/admin-api/recording", session_id=session.id)
    assert status == 200 and empty["scenarios"] == []


@pytest.mark.parametrize(
    ("upstreams", "message"),
    [
        ({"openai": "ftp://example.com"}, "http(s) URL"),
        ({"openai": "https://api.openai.com?key=1"}, "without query"),
        ({"nope": "https://example.com"}, "unknown provider namespace"),
    ],
)
def test_bad_upstreams_are_refused_at_configure(
    llmts_server: LlmTestServer, upstreams: dict[str, str], message: str
) -> None:
    session = llmts_server.create_session()
    with pytest.raises(Exception) as bad:
        session.configure({"upstreams": upstreams, "record": True})
    assert getattr(bad.value, "status", None) == 400 and message in str(bad.value)
    assert session.configuration() == {}
