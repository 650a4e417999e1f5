"""What an open realtime connection keeps is charged to the process memory budget (docs/realtime.md,
"Limits"; docs/journal.md, "Process memory budget"): ``realtime_bytes`` in ``/admin-api/process``, its
fixed cost and its conversation at the width CPython keeps the texts; a client item the budget has no
room for closes the connection with 1013, and a closed connection gives it all back."""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable
from typing import Any

import pytest
from google.genai import types
from websockets.exceptions import ConnectionClosed, ConnectionClosedError

from llmts import LlmTestServer, SessionClient
from tests.realtime.support import check_openai_event
from tests.support.configure import script

MODEL = "gpt-realtime"
GEMINI_MODEL = "gemini-live-2.5-flash-preview"
_configure = functools.partial(script, scenario={"id": "voice", "operation": "realtime"})


def _realtime_bytes(server: LlmTestServer) -> int:
    return int(server.process_stats()["memory"]["realtime_bytes"])


def _add_text(connection: Any, text: str) -> dict[str, Any]:
    connection.conversation.item.create(
        item={"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
    )
    return check_openai_event(connection.recv())


def _served(factory: Callable[..., LlmTestServer], *options: str) -> tuple[LlmTestServer, SessionClient, Any]:
    """A dedicated server (the budget's counters are the test's alone) started with ``options``, a session
    answering every realtime turn "fine", and an OpenAI client of that session."""
    server = factory(access_log=False, extra_args=list(options))
    session = server.create_session()
    _configure(session, {"text": "fine"})
    return server, session, session.openai_client(max_retries=0)


def _wait_for(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 10
    while not condition():
        assert time.monotonic() < deadline, "not given back"
        time.sleep(0.05)


def test_a_connection_and_its_conversation_are_charged_and_given_back(
    own_server_factory: Callable[..., LlmTestServer],
) -> None:
    server, _, client = _served(own_server_factory)
    with client.realtime.connect(model=MODEL) as connection:
        assert check_openai_event(connection.recv())["type"] == "session.created"
        opened = _realtime_bytes(server)
        assert 32 * 1024 <= opened <= 64 * 1024  # the fixed cost of a connection
        # One emoji keeps the whole text at 4 bytes a character (the item as retrieved and the text the
        # model reads share it).
        text = "\N{GRINNING FACE}" + "a" * 100_000
        assert _add_text(connection, text)["type"] == "conversation.item.added"
        assert 4 * len(text) <= _realtime_bytes(server) - opened <= 5 * len(text)
    _wait_for(lambda: _realtime_bytes(server) == 0)


def test_an_item_the_budget_has_no_room_for_closes_the_connection_with_1013(
    own_server_factory: Callable[..., LlmTestServer],
) -> None:
    server, _, client = _served(own_server_factory, "--max-memory", "2M")
    with client.realtime.connect(model=MODEL) as connection:
        check_openai_event(connection.recv())
        text = "\N{GRINNING FACE}" + "a" * 200_000  # about 1.6 MB charged each
        assert _add_text(connection, text)["type"] == "conversation.item.added"
        with pytest.raises(ConnectionClosedError) as closed:
            while True:
                connection.conversation.item.create(
                    item={
                        "type": "message",
                        "role": "user",
                        "content": [{"type": "input_text", "text": text}],
                    }
                )
                connection.recv()
        received = closed.value.rcvd
        assert received is not None and received.code == 1013 and "--max-memory" in received.reason
    _wait_for(lambda: _realtime_bytes(server) == 0)
    memory = server.process_stats()["memory"]
    assert memory["refused"] >= 1 and memory["used_bytes"] <= memory["max_bytes"]
    # The server still serves: a new connection answers.
    with client.realtime.connect(model=MODEL) as connection:
        assert check_openai_event(connection.recv())["type"] == "session.created"


def test_a_gemini_turn_whose_message_cannot_fit_fails_journaled_and_the_connection_ends(
    own_server_factory: Callable[..., LlmTestServer],
) -> None:
    """The turn the refused message started is answered as Live reports a failure (a close), journaled
    with the budget's code; the turn before it is untouched and everything is given back."""
    server = own_server_factory(access_log=False, tls=True, extra_args=["--max-memory", "2M"])
    session = server.create_session()
    _configure(session, {"text": "fine"}, {"text": "fine"})
    client = session.gemini_client(api_key="g-key")
    text = "\N{GRINNING FACE}" + "a" * 300_000  # about 1.2 MB kept: 4 bytes a character

    async def talk() -> tuple[str, BaseException | None]:
        config = types.LiveConnectConfig(response_modalities=[types.Modality.TEXT])
        async with client.aio.live.connect(model=GEMINI_MODEL, config=config) as live:
            content = types.Content(role="user", parts=[types.Part(text=text)])
            await live.send_client_content(turns=content, turn_complete=True)
            first = "".join(
                [
                    part.text or ""
                    async for message in live.receive()
                    if message.server_content and message.server_content.model_turn
                    for part in message.server_content.model_turn.parts or ()
                ]
            )
            await live.send_client_content(turns=content, turn_complete=True)
            try:
                async for _ in live.receive():
                    pass
            except Exception as error:  # the SDK raises the close
                return first, error
            return first, None

    first, ended = asyncio.run(asyncio.wait_for(talk(), 30))
    assert first == "fine" and ended is not None
    entries = sorted(session.requests(operation="realtime"), key=lambda entry: entry["sequence"])
    assert [entry["error_code"] for entry in entries] == [None, "llm_test_server_memory_exhausted"]
    _wait_for(lambda: _realtime_bytes(server) == 0)


def test_deleting_the_session_ends_its_connections_and_gives_their_memory_back(
    own_server_factory: Callable[..., LlmTestServer],
) -> None:
    server, session, client = _served(own_server_factory)
    with client.realtime.connect(model=MODEL) as connection:
        check_openai_event(connection.recv())
        assert _add_text(connection, "a" * 50_000)["type"] == "conversation.item.added"
        assert _realtime_bytes(server) > 50_000
        session.delete()
        with pytest.raises(ConnectionClosed) as closed:  # 1001 is a normal close: ConnectionClosedOK
            while True:
                connection.recv()
        received = closed.value.rcvd
        assert received is not None and (received.code, received.reason) == (
            1001,
            "llmts: the session was deleted",
        )
    _wait_for(lambda: _realtime_bytes(server) == 0)
