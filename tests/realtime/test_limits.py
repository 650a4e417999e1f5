"""Per-connection bounds of the realtime routes (docs/server.md, "WebSocket limits"; docs/realtime.md,
"Limits"), through real servers started with small limits and the official SDKs (raw sockets for a client
that never reads): a message over ``--ws-max-message-bytes`` (after inflation) closes 1009, more than
``--ws-max-messages-per-second`` closes 1008, ``LLMTS_WS_IDLE_TIMEOUT`` of client silence closes 1001,
15 MiB of buffered input audio is refused the way each protocol refuses it, and a client that stops reading
is reset after ``--write-timeout`` (or at once when its unread bytes do not fit ``--max-memory``) with the
turn journaled as such."""

from __future__ import annotations

import asyncio
import base64
import functools
import json
import socket
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
from google.genai import errors, types
from websockets.exceptions import ConnectionClosedError, ConnectionClosedOK
from websockets.sync.client import connect as ws_connect

from llmts.client import LlmTestServer, SessionClient
from llmts.server.cli import main
from llmts.server.realtime.settings import REALTIME_ENV, RealtimeSettings
from tests.fuzz.websocket_wire import TEXT, frame, upgrade_request
from tests.realtime.support import check_openai_event
from tests.support.configure import script
from tests.support.servers import BackgroundStops

MODEL = "gpt-realtime"
_MESSAGE_LIMIT = 65_536
_RATE = 20
_IDLE = 2.0
_AUDIO_LIMIT = 15 * 1024 * 1024  # both protocols' own bound (not configurable)
_TEXT_ONLY = {"type": "realtime", "output_modalities": ["text"]}


@pytest.fixture(scope="module")
def tight_server(background_stops: BackgroundStops) -> Iterator[LlmTestServer]:
    """Small limits given as options: messages, rate, write timeout and the process memory budget."""
    options = ["--ws-max-message-bytes", str(_MESSAGE_LIMIT), "--ws-max-messages-per-second", str(_RATE)]
    # A budget that holds the 2 MB text fixture below (about 3 MB accounted) but not its answer as well.
    options += ["--write-timeout", "0.5", "--max-memory", "4M"]
    server = LlmTestServer.start(extra_args=options, access_log=False)
    try:
        yield server
    finally:
        background_stops.stop(server)


@pytest.fixture
def tight(tight_server: LlmTestServer) -> Iterator[SessionClient]:
    session = tight_server.create_session()
    _configure(session, {"text": "fine"})
    yield session
    session.delete()


# One realtime scenario answering the given responses in order; top-level fields as keywords.
_configure = functools.partial(script, scenario={"id": "v", "operation": "realtime"})


def _connect(session: SessionClient) -> Any:
    return session.openai_client(max_retries=0).realtime.connect(model=MODEL)


def _ws_url(session: SessionClient) -> str:
    return session.provider_base.replace("http://", "ws://") + f"/openai/v1/realtime?model={MODEL}"


def _assert_still_serving(session: SessionClient) -> None:
    with _connect(session) as connection:
        assert check_openai_event(connection.recv())["type"] == "session.created"
        connection.input_audio_buffer.clear()
        assert check_openai_event(connection.recv())["type"] == "input_audio_buffer.cleared"


# --- message size ----------------------------------------------------------------------------------------


def test_a_message_over_the_size_limit_closes_1009_and_the_sdk_raises_it(tight: SessionClient) -> None:
    audio = base64.b64encode(b"\x01" * (_MESSAGE_LIMIT * 3 // 4 + 10)).decode()  # just over once in base64
    with _connect(tight) as connection:
        assert check_openai_event(connection.recv())["type"] == "session.created"
        connection.input_audio_buffer.append(audio=audio)
        with pytest.raises(ConnectionClosedError) as closed:
            connection.recv()
    assert closed.value.rcvd is not None
    assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (1009, "message too big")
    _assert_still_serving(tight)


def test_the_size_limit_counts_a_compressed_message_inflated(tight: SessionClient) -> None:
    """200 KB of text compresses to about 1 KB with permessage-deflate: the limit is on what it inflates
    to."""
    event = json.dumps({"type": "session.update", "session": {**_TEXT_ONLY, "instructions": "x" * 200_000}})
    with ws_connect(
        _ws_url(tight), compression="deflate", additional_headers={"Authorization": "Bearer k"}
    ) as ws:
        assert json.loads(ws.recv())["type"] == "session.created"
        ws.send(event)
        with pytest.raises(ConnectionClosedError) as closed:
            ws.recv()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009


def test_a_message_just_under_the_size_limit_is_read(tight: SessionClient) -> None:
    instructions = "x" * (_MESSAGE_LIMIT - 200)
    with _connect(tight) as connection:
        check_openai_event(connection.recv())
        connection.session.update(session={**_TEXT_ONLY, "instructions": instructions})
        updated = check_openai_event(connection.recv())
    assert updated["type"] == "session.updated" and updated["session"]["instructions"] == instructions


# --- messages per second ---------------------------------------------------------------------------------


def test_more_messages_per_second_than_the_limit_closes_1008(tight: SessionClient) -> None:
    silence = base64.b64encode(bytes(480)).decode()
    with _connect(tight) as connection:
        check_openai_event(connection.recv())
        with pytest.raises(ConnectionClosedError) as closed:
            for _ in range(_RATE * 3):  # far more than the bucket holds (as deep as the rate)
                connection.input_audio_buffer.append(audio=silence)
            while True:
                check_openai_event(connection.recv())
    assert closed.value.rcvd is not None
    assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (1008, "rate limit")
    _assert_still_serving(tight)


def test_pings_count_against_the_rate_limit(tight: SessionClient) -> None:
    with ws_connect(_ws_url(tight), additional_headers={"Authorization": "Bearer k"}) as ws:
        ws.recv()
        with pytest.raises(ConnectionClosedError) as closed:
            for index in range(_RATE * 3):
                ws.ping(str(index))
            ws.recv()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008


# --- idle timeout ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def idle_server(background_stops: BackgroundStops) -> Iterator[LlmTestServer]:
    """The idle timeout given by its environment variable."""
    server = LlmTestServer.start(env={"LLMTS_WS_IDLE_TIMEOUT": str(_IDLE)}, access_log=False)
    try:
        yield server
    finally:
        background_stops.stop(server)


def test_a_client_silent_for_the_idle_timeout_is_closed_1001(idle_server: LlmTestServer) -> None:
    session = idle_server.create_session()
    with _connect(session) as connection:
        check_openai_event(connection.recv())
        # Sending keeps it open past the timeout (the client's silence counts, not the server's).
        started = last_sent = time.monotonic()
        while last_sent - started < 1.5 * _IDLE:
            last_sent = time.monotonic()
            connection.input_audio_buffer.clear()
            assert check_openai_event(connection.recv())["type"] == "input_audio_buffer.cleared"
            time.sleep(_IDLE / 8)
        with pytest.raises(ConnectionClosedOK) as closed:
            connection.recv()
        waited = time.monotonic() - last_sent
    assert closed.value.rcvd is not None
    assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (1001, "idle timeout")
    assert _IDLE * 0.9 < waited < _IDLE + 10
    session.delete()


# --- buffered input audio --------------------------------------------------------------------------------


def _loud_chunks(total: int, size: int = 700_000) -> Iterator[bytes]:
    """Non-silent PCM16 (no voice activity detection trims it) in chunks under 1 MiB once in base64."""
    chunk = bytes(range(1, 251)) * (size // 250)
    for _ in range(total // len(chunk) + 1):
        yield chunk


def test_openai_buffered_audio_over_15_mib_gets_an_error_event_and_the_connection_stays(
    llmts_session: SessionClient,
) -> None:
    _configure(llmts_session, {"text": "fine"})
    with _connect(llmts_session) as connection:
        check_openai_event(connection.recv())
        connection.session.update(session={**_TEXT_ONLY, "audio": {"input": {"turn_detection": None}}})
        assert check_openai_event(connection.recv())["type"] == "session.updated"
        buffered = 0
        for chunk in _loud_chunks(_AUDIO_LIMIT):
            connection.input_audio_buffer.append(audio=base64.b64encode(chunk).decode())
            buffered += len(chunk)
            if buffered > _AUDIO_LIMIT:
                break
        error = check_openai_event(connection.recv())
        assert error["type"] == "error" and error["error"]["code"] == "input_audio_buffer_full"
        assert error["error"]["param"] == "audio"
        connection.input_audio_buffer.clear()  # what was buffered is still there, and can be cleared
        assert check_openai_event(connection.recv())["type"] == "input_audio_buffer.cleared"


def test_gemini_audio_over_15_mib_without_an_end_of_speech_closes_1009(tls_session: SessionClient) -> None:
    _configure(tls_session, {"text": "fine"})
    client = tls_session.gemini_client(api_key="g-key")

    async def talk() -> None:
        config = types.LiveConnectConfig(response_modalities=[types.Modality.TEXT])
        async with client.aio.live.connect(model="gemini-live-2.5-flash-preview", config=config) as live:
            for chunk in _loud_chunks(_AUDIO_LIMIT):
                await live.send_realtime_input(audio=types.Blob(data=chunk, mime_type="audio/pcm;rate=16000"))
            async for _ in live.receive():
                pass

    with pytest.raises(errors.APIError) as closed:
        asyncio.run(asyncio.wait_for(talk(), 60))
    assert closed.value.code == 1009
    assert "Audio input exceeds 15 MiB without an end of speech" in str(closed.value)


# --- a client that never reads ---------------------------------------------------------------------------


def _never_reading(session: SessionClient, words: str, *, modalities: list[str]) -> socket.socket:
    """A raw client with a tiny receive window: the handshake, one ``response.create``, then no reads."""
    _configure(session, {"text": words, "audio": "generated"})
    parts = urlsplit(session.provider_base)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((parts.hostname, parts.port))
    sock.settimeout(10)
    target = parts.path + f"/openai/v1/realtime?model={MODEL}"
    sock.sendall(upgrade_request(target, {"Authorization": "Bearer k"}))
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)  # the head only: the rest stays unread
    assert head.startswith(b"HTTP/1.1 101 ")
    create = {"type": "response.create", "response": {"output_modalities": modalities}}
    sock.sendall(frame(TEXT, json.dumps(create).encode()))
    return sock


def _finished_turn(session: SessionClient, within: float = 15) -> dict[str, Any]:
    deadline = time.monotonic() + within
    while not (entries := session.requests(operation="realtime", completed=True)):
        assert time.monotonic() < deadline, "the stalled turn was never given up"
        time.sleep(0.05)
    [entry] = entries
    return entry


def _read_until_reset(sock: socket.socket) -> None:
    with pytest.raises(ConnectionResetError):  # a reset: the unsent megabytes are discarded
        while sock.recv(1 << 16):
            pass


def test_a_client_that_never_reads_a_long_audio_answer_is_reset_by_the_write_timeout(
    tight: SessionClient,
) -> None:
    sock = _never_reading(tight, " ".join(["hello"] * 4000), modalities=["audio"])  # 11.5 MB of PCM
    with sock:
        entry = _finished_turn(tight)
        assert entry["transport_outcome"] == "client_gone"
        assert entry["error_code"] == "llm_test_server_write_timeout"
        assert entry["success"] is False and entry["terminal_marker_observed"] is False
        assert 0 < entry["emitted_events"] < 200
        _read_until_reset(sock)
    _assert_still_serving(tight)


def test_an_unread_answer_that_does_not_fit_the_memory_budget_is_reset_at_once(tight: SessionClient) -> None:
    """One 2 MB text delta waiting for a client that does not read cannot be held under ``--max-memory
    4M`` beside its own configuration: the connection is reset without waiting for the write timeout."""
    sock = _never_reading(tight, "x" * 2_000_000, modalities=["text"])
    with sock:
        entry = _finished_turn(tight)
        assert entry["transport_outcome"] == "client_gone"
        assert entry["error_code"] == "llm_test_server_memory_exhausted" and entry["success"] is False
        _read_until_reset(sock)
    _assert_still_serving(tight)


# --- the settings -----------------------------------------------------------------------------------------


def test_the_settings_validate_and_read_the_environment() -> None:
    assert RealtimeSettings() == RealtimeSettings(
        max_message_bytes=1_048_576, idle_timeout=300, max_messages_per_second=200
    )
    env = {"LLMTS_WS_IDLE_TIMEOUT": "2.5", "LLMTS_WS_MAX_MESSAGES_PER_SECOND": "7"}
    assert RealtimeSettings.from_env(env) == RealtimeSettings(idle_timeout=2.5, max_messages_per_second=7)
    with pytest.raises(ValueError, match="LLMTS_WS_MAX_MESSAGE_BYTES must be a whole number"):
        RealtimeSettings.from_env({"LLMTS_WS_MAX_MESSAGE_BYTES": "1.5"})
    for bad in (0, -1, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="--ws-idle-timeout"):
            RealtimeSettings(idle_timeout=bad)
    for wrong in (0, -5, 1.5, True):
        with pytest.raises(ValueError, match="--ws-max-messages-per-second"):
            RealtimeSettings(max_messages_per_second=wrong)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("args", "env", "expected"),
    [
        (["--ws-max-message-bytes", "0"], {}, "--ws-max-message-bytes"),
        (["--ws-idle-timeout", "-1"], {}, "--ws-idle-timeout"),
        ([], {"LLMTS_WS_MAX_MESSAGES_PER_SECOND": "lots"}, "LLMTS_WS_MAX_MESSAGES_PER_SECOND"),
    ],
)
def test_invalid_websocket_limits_stop_start_up_with_2(
    args: list[str],
    env: dict[str, str],
    expected: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``llmts serve``'s ``main`` in process: refused before anything starts (the real process's exit with
    2 is tests/server/process/test_cli.py's)."""
    for name in REALTIME_ENV.values():
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert main(["serve", "--port", "0", *args]) == 2
    assert expected in capsys.readouterr().err
