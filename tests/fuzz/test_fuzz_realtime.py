"""Property-based fuzzing of the realtime WebSocket routes against one real server (docs/contributing.md,
"Fuzzing and soak"; docs/realtime.md): hostile upgrade requests, malformed frames on an open connection,
and malformed events for OpenAI Realtime and Gemini Live, over raw sockets (tests/fuzz/websocket_wire.py).

Properties: a handshake is never answered with a 5xx, and a refusal is JSON in the provider's envelope;
after an upgrade, everything the server sends is well-formed (frames, close codes, UTF-8) and every event
validates against the official SDK's own models (openai's ``RealtimeServerEvent``, google-genai's
``LiveServerMessage``); the server never closes with 1011 (its internal error); a connection the server did
not close is still open and has read everything (a ping sent last is answered); the server log holds no
traceback and no client-written line; ``/health`` answers after each family.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from google.genai import types
from hypothesis import strategies as st

from llmts.providers.adapters import ADAPTERS
from tests.fuzz.harness import (
    BOUNDED,
    DEEP,
    DEEP_TIMEOUT,
    Answer,
    FuzzServer,
    assert_envelope,
    family_of,
    fuzz_server,
    survive,
)
from tests.fuzz.realtime_strategies import (
    GEMINI_SETUP,
    HOSTILE_FRAMES,
    MODEL,
    frames,
    gemini_events,
    handshakes,
    openai_events,
)
from tests.fuzz.websocket_wire import (
    CLOSE,
    PROBE,
    TEXT,
    Received,
    WireClient,
    close_payload,
    frame,
    upgrade_request,
)
from tests.realtime.support import check_openai_event

__all__ = ["fuzz_server"]

_SESSIONS = ["default", "nope", "realtime", "locked"]
# A refusal's envelope by path, as in tests/fuzz/test_fuzz_providers.py (a damaged path may be any route).
_PREFIXES = {
    **{prefix: "openai" for adapter in ADAPTERS for prefix, _ in adapter.error_renderers},
    **{adapter.prefix: adapter.namespace for adapter in ADAPTERS},
}
_GEMINI_PATH = "/gemini/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent"
# How connections ended (a close code, "open" until the client's end, "reset"), for the deep run's figures.
_ENDINGS: Counter[str] = Counter()
# The close of a connection whose driver hit a bug (llmts/server/realtime/connection.py).
_INTERNAL_ERROR = (1011, "Internal error encountered.")
# Refusals the HTTP server answers itself, in the control envelope, on any path.
_HTTP_SERVER_CODES = {"malformed_http_request", "websocket_not_supported"}
_REALTIME = {
    "scenarios": [
        {
            "id": "fuzz",
            "operation": "realtime",
            "terminal_policy": "restart",
            "responses": [
                {"text": "fuzzed", "chunks": ["fuz", "zed"]},
                {"text": "spoken words", "audio": "generated"},
                {"tool_calls": [{"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}]},
                {"error": {"status": 429, "code": "rate_limit_exceeded", "message": "Slow down"}},
            ],
        }
    ]
}


@pytest.fixture(scope="module", autouse=True)
def _sessions(fuzz_server: FuzzServer) -> None:
    """A session answering realtime turns, and one that also needs each provider's credential."""
    server = fuzz_server.server
    open_session = server.create_session()
    open_session.configure(_REALTIME)
    locked = server.create_session()
    credentials = {"openai": "sk-right", "gemini": "sk-right", "azure-openai": "sk-right"}
    locked.configure({"provider_credentials": credentials, **_REALTIME})
    _SESSIONS[2:] = [open_session.id, locked.id]


def _target(namespace: str) -> str:
    if namespace == "gemini":
        return f"/sessions/{_SESSIONS[2]}{_GEMINI_PATH}?key=k"
    return f"/sessions/{_SESSIONS[2]}/openai/v1/realtime?model={MODEL}"


def _open(server: FuzzServer, namespace: str, *, compressed: bool = False) -> WireClient:
    client = WireClient(server.port)
    server.requests += 1
    extensions = {"Sec-WebSocket-Extensions": "permessage-deflate"} if compressed else {}
    answer = client.handshake(
        upgrade_request(_target(namespace), {"Authorization": "Bearer k", **extensions})
    )
    assert answer.status == 101, (answer.status, answer.body[:300])
    assert answer.compressed == compressed
    return client


def _check_received(namespace: str, received: Received) -> None:
    """What came back is what the provider's SDK reads without complaint, and no internal error (a
    scripted error may close with 1011 too, with its own message)."""
    _ENDINGS["reset" if received.reset else str(received.close[0]) if received.close else "open"] += 1
    assert received.close != _INTERNAL_ERROR, "the server hit an internal error"
    for message in received.messages:
        event = json.loads(message)
        if namespace == "gemini":
            types.LiveServerMessage.model_validate(event)
        else:
            check_openai_event(event)


def _checked(server: FuzzServer, run: Callable[[], None]) -> None:
    """``run`` with the server's new log lines in any failure, then those lines checked."""
    try:
        run()
    except AssertionError as failure:
        lines = server.new_log_lines()
        raise AssertionError(f"{failure}\nserver log:\n" + "\n".join(lines)) from None
    server.assert_log_clean()


# --- handshakes ---------------------------------------------------------------------------------------


def _check_handshake(server: FuzzServer, example: tuple[str, str, str, bytes]) -> None:
    namespace, method, target, request = example

    def run() -> None:
        with WireClient(server.port) as client:
            answer = client.handshake(request)
            server.requests += 1
            server.statuses[answer.status] += 1
            if answer.status == 101:
                client.send(frame(CLOSE, close_payload(1000)))
                _check_received(namespace, client.finish())
                return
            closing = answer.headers.get("connection", "").lower() == "close"
            rest = client.rest() if closing else b""
        if rest:  # only a request the HTTP server could not parse (its method unknown) gets a body after HEAD
            assert method == "HEAD" and b'"malformed_http_request"' in rest, (
                f"bytes after the answer: {rest!r}"
            )
        error = answer.body and json.loads(answer.body).get("error")
        served = not (isinstance(error, dict) and error.get("code") in _HTTP_SERVER_CODES)
        family = family_of(target, _PREFIXES) if served else "control"
        assert_envelope(Answer(answer.status, answer.headers, answer.body), family, method)

    _checked(server, run)


def test_realtime_handshakes_survive_hostile_requests(fuzz_server: FuzzServer) -> None:
    survive(
        fuzz_server, handshakes(_SESSIONS), lambda e: _check_handshake(fuzz_server, e), BOUNDED, "handshake"
    )


# --- frames -------------------------------------------------------------------------------------------


def _check_frames(server: FuzzServer, example: tuple[str, bool, bytes]) -> None:
    namespace, compressed, data = example

    def run() -> None:
        with _open(server, namespace, compressed=compressed) as client:
            client.send(data)
            _check_received(namespace, client.finish(probe=True))

    _checked(server, run)


def _frame_examples() -> st.SearchStrategy[tuple[str, bool, bytes]]:
    namespaces = st.sampled_from(["openai", "gemini"])
    return st.tuples(namespaces, st.booleans()).flatmap(
        lambda pair: st.tuples(st.just(pair[0]), st.just(pair[1]), frames(pair[1]))
    )


def test_open_connections_survive_malformed_frames(fuzz_server: FuzzServer) -> None:
    survive(fuzz_server, _frame_examples(), lambda e: _check_frames(fuzz_server, e), BOUNDED, "frames")


@pytest.mark.parametrize("name", list(HOSTILE_FRAMES))
def test_each_hostile_frame_gets_its_close_code(fuzz_server: FuzzServer, name: str) -> None:
    """Systematic, not random: each protocol violation of RFC 6455 (and each limit) gets the close code the
    RFC names for it, and what is not a violation leaves the connection open."""
    data, compressed, expected = HOSTILE_FRAMES[name]

    def run() -> None:
        with _open(fuzz_server, "openai", compressed=compressed) as client:
            client.send(data)
            received = client.finish(probe=True)
        _check_received("openai", received)
        if expected is None:
            assert received.close is None and PROBE in received.pongs, received
        else:
            assert received.close is not None and received.close[0] == expected, received

    _checked(fuzz_server, run)


# --- events -------------------------------------------------------------------------------------------


def _check_events(server: FuzzServer, namespace: str, data: bytes, *, setup: bool = False) -> None:
    def run() -> None:
        with _open(server, namespace) as client:
            if setup:
                client.send(frame(TEXT, json.dumps(GEMINI_SETUP).encode()))
            client.send(data)
            received = client.finish(probe=True)
        _check_received(namespace, received)
        if setup:
            assert received.messages and "setupComplete" in json.loads(received.messages[0]), received
        if received.close is None:  # still open, and it read everything: the last ping was answered
            assert PROBE in received.pongs, received

    _checked(server, run)


def test_openai_realtime_survives_malformed_events(fuzz_server: FuzzServer) -> None:
    survive(
        fuzz_server,
        openai_events(),
        lambda e: _check_events(fuzz_server, "openai", e),
        BOUNDED,
        "openai-events",
    )


@pytest.mark.parametrize("setup", [False, True], ids=["before-setup", "after-setup"])
def test_gemini_live_survives_malformed_messages(fuzz_server: FuzzServer, setup: bool) -> None:
    survive(
        fuzz_server,
        gemini_events(),
        lambda e: _check_events(fuzz_server, "gemini", e, setup=setup),
        BOUNDED,
        f"gemini-events-{'after' if setup else 'before'}-setup",
    )


# --- the deep run (pytest -m fuzz) ---------------------------------------------------------------------


def _deep(
    server: FuzzServer, examples: st.SearchStrategy[Any], check: Callable[[Any], None], family: str
) -> None:
    """``survive`` with the deep profile, then how the connections ended (shown with ``-rP``)."""
    before = _ENDINGS.copy()
    survive(server, examples, check, DEEP, family)
    print(f"deep fuzz {family}: connections ended by {dict(sorted((_ENDINGS - before).items()))}")


@pytest.mark.fuzz
@pytest.mark.timeout(DEEP_TIMEOUT)
def test_realtime_handshakes_survive_hostile_requests_deep(fuzz_server: FuzzServer) -> None:
    _deep(fuzz_server, handshakes(_SESSIONS), lambda e: _check_handshake(fuzz_server, e), "handshake")


@pytest.mark.fuzz
@pytest.mark.timeout(DEEP_TIMEOUT)
def test_open_connections_survive_malformed_frames_deep(fuzz_server: FuzzServer) -> None:
    _deep(fuzz_server, _frame_examples(), lambda e: _check_frames(fuzz_server, e), "frames")


@pytest.mark.fuzz
@pytest.mark.timeout(DEEP_TIMEOUT)
def test_openai_realtime_survives_malformed_events_deep(fuzz_server: FuzzServer) -> None:
    _deep(fuzz_server, openai_events(), lambda e: _check_events(fuzz_server, "openai", e), "openai-events")


@pytest.mark.fuzz
@pytest.mark.timeout(DEEP_TIMEOUT)
@pytest.mark.parametrize("setup", [False, True], ids=["before-setup", "after-setup"])
def test_gemini_live_survives_malformed_messages_deep(fuzz_server: FuzzServer, setup: bool) -> None:
    _deep(
        fuzz_server,
        gemini_events(),
        lambda e: _check_events(fuzz_server, "gemini", e, setup=setup),
        f"gemini-events-{'after' if setup else 'before'}-setup",
    )
