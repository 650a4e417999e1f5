"""A graceful stop tells open realtime connections to go away at once (docs/realtime.md, "Shutdown"):
Gemini Live gets ``goAway`` then close 1001, OpenAI close 1001; the stop does not wait out its budget."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from llmts.client import LlmTestServer


def _read_all(ws: Any, seen: list[Any]) -> None:
    try:
        while True:
            seen.append(ws.recv(timeout=20))
    except ConnectionClosed:
        return


def test_a_graceful_stop_says_goodbye_to_realtime_clients(
    own_server_factory: Callable[..., LlmTestServer],
) -> None:
    server = own_server_factory(extra_args=["--graceful-timeout", "20"])
    ws_url = server.url.replace("http://", "ws://")
    gemini_url = (
        ws_url + "/gemini/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent"
    )
    with (
        connect(gemini_url, additional_headers={"x-goog-api-key": "k"}) as gemini,
        connect(
            ws_url + "/openai/v1/realtime?model=gpt-realtime",
            additional_headers={"Authorization": "Bearer k"},
        ) as openai,
    ):
        _stop_with_both_connected(server, gemini, openai)


def _stop_with_both_connected(
    server: LlmTestServer, gemini: ClientConnection, openai: ClientConnection
) -> None:
    gemini.send(json.dumps({"setup": {"model": "models/gemini-live-2.5-flash-preview"}}))
    assert "setupComplete" in json.loads(gemini.recv(timeout=10))
    assert json.loads(openai.recv(timeout=10))["type"] == "session.created"
    seen: dict[str, list[Any]] = {"gemini": [], "openai": []}
    readers = [
        threading.Thread(target=_read_all, args=(gemini, seen["gemini"])),
        threading.Thread(target=_read_all, args=(openai, seen["openai"])),
    ]
    for reader in readers:
        reader.start()
    started = time.monotonic()
    server.stop(timeout=30)
    stopped = time.monotonic() - started
    for reader in readers:
        reader.join(10)
    assert stopped < 15  # not the 20 s budget: the connections were told at once
    assert [json.loads(m) for m in seen["gemini"]] == [{"goAway": {"timeLeft": "0s"}}]
    for ws in (gemini, openai):
        assert ws.close_code == 1001 and ws.close_reason == "server shutting down"
