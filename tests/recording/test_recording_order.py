"""A recording lists exchanges in the order their requests came, not the order their answers completed
(docs/recording.md, "What a recording holds"): a relayed stream is complete only once the upstream ended
its body, after the client read the last frame and sent its next request, which can complete first."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import openai
import pytest

from llmts import LlmTestServer, SessionClient
from tests.recording.support import recording_session

pytestmark = pytest.mark.sdk

_PARIS = [{"role": "user", "content": "Capital of France?"}]
_BERLIN = [{"role": "user", "content": "Capital of Germany?"}]


def _chunk(index: int, delta: dict[str, Any], finish: str | None) -> bytes:
    payload = {
        "id": "chatcmpl-streamed",
        "object": "chat.completion.chunk",
        "created": 1_700_000_001,
        "model": "gpt-4o",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


_FRAMES = [
    _chunk(0, {"role": "assistant", "content": "Pa"}, None),
    _chunk(1, {"content": "ris"}, None),
    _chunk(2, {}, "stop"),
    b"data: [DONE]\n\n",
]
_WHOLE = json.dumps(
    {
        "id": "chatcmpl-whole",
        "object": "chat.completion",
        "created": 1_700_000_002,
        "model": "gpt-4o",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "Berlin"}, "finish_reason": "stop"}
        ],
    }
).encode()


class _HeldUpstream:
    """An OpenAI upstream that writes a stream's every frame, `data: [DONE]` included, then holds the end
    of its chunked body until ``release`` is set: the relay is complete only then, whatever the machine's
    speed. Unstreamed requests are answered at once."""

    def __init__(self) -> None:
        self.release = threading.Event()
        held = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                if not body.get("stream"):
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(_WHOLE)))
                    self.end_headers()
                    self.wfile.write(_WHOLE)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for frame in _FRAMES:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(frame), frame))
                held.release.wait(60)
                self.wfile.write(b"0\r\n\r\n")

            def log_message(self, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def held_upstream() -> Iterator[_HeldUpstream]:
    upstream = _HeldUpstream()
    try:
        yield upstream
    finally:
        upstream.close()


def _recorded(session: SessionClient) -> list[str]:
    """The recorded answers of the session's one scenario, in order: "stream" or the whole body's id."""
    scenarios = session.recording()["scenarios"]
    if not scenarios:
        return []
    (scenario,) = scenarios
    answers = [response["recorded"] for response in scenario["responses"]]
    return ["stream" if a.get("frames") else json.loads(a["body"])["id"] for a in answers]


def _run(client: openai.OpenAI) -> tuple[list[str | None], tuple[str, str | None]]:
    """A streamed request, then an unstreamed one, as an application makes them."""
    stream = client.chat.completions.create(model="gpt-4o", messages=_PARIS, stream=True)
    streamed = [chunk.choices[0].delta.content for chunk in stream if chunk.choices]
    whole = client.chat.completions.create(model="gpt-4o", messages=_BERLIN)
    return streamed, (whole.id, whole.choices[0].message.content)


def test_a_stream_that_completes_after_the_next_request_is_recorded_in_request_order(
    llmts_server: LlmTestServer, held_upstream: _HeldUpstream
) -> None:
    recorder = recording_session(llmts_server, {"openai": held_upstream.url})
    client = recorder.openai_client(
        api_key="sk-order-client-key-0001", max_retries=0, _strict_response_validation=True
    )
    recorded = _run(client)
    assert recorded == (["Pa", "ris", None], ("chatcmpl-whole", "Berlin"))
    # The SDK stopped at `data: [DONE]` and sent its next request while the relay still waits for the end
    # of the upstream's body: the second exchange is complete first.
    assert _recorded(recorder) == ["chatcmpl-whole"]
    held_upstream.release.set()
    deadline = time.monotonic() + 30
    while len(order := _recorded(recorder)) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)  # waits for the relay to end; the order does not depend on how long it takes
    assert order == ["stream", "chatcmpl-whole"]

    replay = llmts_server.create_session()
    replay.configure(recorder.recording())
    offline = replay.openai_client(max_retries=0, _strict_response_validation=True)
    assert _run(offline) == recorded
    assert [entry["scenario"] for entry in replay.requests()] == ["rec-openai-gpt-4o"] * 2
