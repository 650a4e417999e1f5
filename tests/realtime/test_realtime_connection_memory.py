"""What an idle realtime connection keeps in the worker (docs/realtime.md, "Limits"; benchmarks/README.md,
"Realtime connections"): not the last message it read. A client message may be a MiB of audio; a
connection that waits for the next one must not hold the previous one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from llmts.client import LlmTestServer
from tests.realtime.support import check_openai_event

# The subject is the server process's own memory, measured as ``llmts serve`` runs it (tests/conftest.py).
pytestmark = pytest.mark.fresh_interpreter

MODEL = "gpt-realtime"
CONNECTIONS = 8
# 640 KiB of "audio" that is not base64: the protocol refuses it with an ``error`` event and keeps
# nothing of it, so whatever stays resident after it was answered is what the driver held on to.
NOT_BASE64 = "!" * (640 * 1024)


def test_a_waiting_connection_does_not_keep_its_last_message(
    own_server_factory: Callable[..., LlmTestServer],
) -> None:
    server = own_server_factory(access_log=False)
    session = server.create_session()
    client = session.openai_client(max_retries=0)

    def rss() -> int:
        status, _, process = server.request("GET", "/admin-api/process")
        assert status == 200
        return int(process["rss_bytes"])

    def refuse_big_append(connection: Any) -> None:
        connection.input_audio_buffer.append(audio=NOT_BASE64)
        error = check_openai_event(connection.recv())
        assert error["type"] == "error" and error["error"]["code"] == "invalid_value", error

    connections = [client.realtime.connect(model=MODEL).enter() for _ in range(CONNECTIONS + 1)]
    try:
        for connection in connections:
            assert check_openai_event(connection.recv())["type"] == "session.created"
        refuse_big_append(connections[-1])  # the allocator's first big buffers: not counted
        before = rss()
        for connection in connections[:-1]:
            refuse_big_append(connection)
        grown = rss() - before
    finally:
        for connection in connections:
            connection.close()
    # Holding each message would be CONNECTIONS x 640 KiB (5 MiB); without that, a few hundred KiB.
    assert grown < 2.5 * 1024 * 1024, f"RSS grew {grown / 1024:.0f} KiB over {CONNECTIONS} idle connections"
