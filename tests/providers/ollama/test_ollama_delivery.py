"""Every stream delivery mode on the Ollama streaming routes that tests/providers/ollama/test_ollama_sdk.py
does not cover mode by mode (it drives ``/api/chat``): ``/api/generate`` through the ``ollama`` client and
the OpenAI-compatible ``/ollama/v1/chat/completions`` through the openai SDK. What each client sees and the
journal's evidence (docs/stream-delivery.md, "Ollama" and "What the official SDKs do")."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import httpx
import ollama
import openai
import pytest

from llmts import SessionClient
from llmts.schema.faults import SSE_MODES

pytestmark = pytest.mark.sdk

MODEL = "llama3.2:3b"
HI: list[Any] = [{"role": "user", "content": "Hi"}]
WHOLE = ["One ", "two ", "three."]
PREFIX = WHOLE[:1]
ROUTES = ("generate", "compat")
# mode -> (plan, {route: what the client raises, None for nothing}, content seen, journal outcome)
PLANS: dict[str, tuple[dict[str, Any], dict[str, type[BaseException] | None], list[str], str]] = {
    "early_clean_end": (
        {"after_content_frames": 1},
        {"generate": None, "compat": None},
        PREFIX,
        "early_end",
    ),
    "delay_then_continue": (
        {"after_content_frames": 1, "delay_ms": 50},
        {"generate": None, "compat": None},
        WHOLE,
        "completed",
    ),
    "slow_drip": ({"bytes_per_second": 20_000}, {"generate": None, "compat": None}, WHOLE, "completed"),
    "abort_connection": (
        {"after_content_frames": 1},
        {"generate": httpx.ReadError, "compat": openai.APIConnectionError},
        PREFIX,
        "aborted",
    ),
    # The ollama client parses the cut line at the end of the body; the openai SDK drops the cut frame.
    "truncate_bytes": (
        {"after_content_frames": 1, "cut_bytes": 20},
        {"generate": json.JSONDecodeError, "compat": None},
        PREFIX,
        "early_end",
    ),
    "malformed_frame": (
        {"after_content_frames": 1},
        {"generate": json.JSONDecodeError, "compat": json.JSONDecodeError},
        PREFIX,
        "completed",
    ),
    "stall": (
        {"after_content_frames": 1, "delay_ms": 300},
        {"generate": None, "compat": None},
        PREFIX,
        "early_end",
    ),
    "reset_before_headers": (
        {},
        {"generate": httpx.ReadError, "compat": openai.APIConnectionError},
        [],
        "aborted",
    ),
    "empty_response": (
        {},
        {"generate": httpx.RemoteProtocolError, "compat": openai.APIConnectionError},
        [],
        "aborted",
    ),
    "http_error_page": (
        {"status": 503},
        {"generate": ollama.ResponseError, "compat": openai.InternalServerError},
        [],
        "completed",
    ),
}


def test_every_mode_has_a_row() -> None:
    assert set(PLANS) == set(SSE_MODES)  # the HTTP modes (the WebSocket ones act on realtime turns)


def _generate(session: SessionClient, seen: list[str]) -> None:
    for part in session.ollama_client(timeout=10).generate(model=MODEL, prompt="Hi", stream=True):
        if part.response:  # the done line's ``response`` is empty
            seen.append(part.response)


def _compat(session: SessionClient, seen: list[str]) -> None:
    client: openai.OpenAI = session.sdk_client("ollama_openai_client", max_retries=0, timeout=10)
    for chunk in client.chat.completions.create(model=MODEL, messages=HI, stream=True):
        if chunk.choices and chunk.choices[0].delta.content:
            seen.append(chunk.choices[0].delta.content)


_DRIVE: dict[str, Callable[[SessionClient, list[str]], None]] = {"generate": _generate, "compat": _compat}
_OPERATION = {"generate": "generate", "compat": "chat.completions"}


def _entry(session: SessionClient, operation: str) -> dict[str, Any]:
    deadline = time.monotonic() + 5
    while True:
        entries = session.requests(provider="ollama", operation=operation)
        if entries and entries[0]["completed"]:
            return dict(entries[0])
        assert time.monotonic() < deadline, f"no completed entry: {entries}"
        time.sleep(0.01)


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("mode", list(PLANS))
def test_mode_on_route(llmts_session: SessionClient, route: str, mode: str) -> None:
    extra, raises, content, outcome = PLANS[mode]
    llmts_session.configure(
        {
            "models": [MODEL],
            "scenarios": [
                {
                    "responses": [
                        {"text": "".join(WHOLE), "chunks": WHOLE, "stream_delivery": {"mode": mode, **extra}},
                        {"text": "Next."},
                    ]
                }
            ],
        }
    )
    seen: list[str] = []
    error: BaseException | None = None
    try:
        _DRIVE[route](llmts_session, seen)
    except Exception as caught:  # what the client raised is the test's subject
        error = caught

    expected = raises[route]
    if expected is None:
        assert error is None, repr(error)
    else:
        assert isinstance(error, expected), repr(error)
    assert seen == content
    entry = _entry(llmts_session, _OPERATION[route])
    if mode == "malformed_frame" and entry["transport_outcome"] == "client_gone":
        # The client gives up at the broken frame and closes while the server may still be writing the
        # rest: on a busy machine the close can come first. Either way the client saw the same thing.
        outcome = "client_gone"
    assert entry["transport_outcome"] == outcome
    # The done line (native) or ``data: [DONE]`` (compatible) is observed only when the whole answer went
    # (an error page is sent whole but is no stream: it has no marker).
    assert entry["terminal_marker_observed"] is (outcome == "completed" and mode != "http_error_page")
    assert entry["stream_delivery_applied"] is True
    if mode == "http_error_page":
        assert entry["status"] == 503
    # Neither client retried: the next scripted answer is still first in the queue.
    assert len(llmts_session.requests()) == 1
