"""``subscriptions/listen`` at 2026-07-28: the revision's stream of change notifications, through mcp 2.x's
``mcp.Client.listen`` and on the raw wire, against a real gunicorn+gevent server."""

from __future__ import annotations

import http.client
import json
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

import anyio
import pytest

from llmts import ConfigBuilder, LlmTestServer, SessionClient
from tests.peers.mcp.support import ACCEPT_BOTH, MCP_MAJOR, MODERN, StreamReader, Wire, run

pytestmark = pytest.mark.skipif(MCP_MAJOR < 2, reason="mcp.Client.listen is new in mcp 2")

KEY = "io.modelcontextprotocol/subscriptionId"
SERVER_INFO = {"name": "s", "version": "1.0.0"}
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _config(description: str = "first", text: str = "v1", prompt: str = "Hi") -> Any:
    return (
        ConfigBuilder()
        .mcp_server("s")
        .tool("t", description=description)
        .text("x")
        .resource("file:///x", "x", text=text)
        .prompt("p", prompt)
        .build()
    )


def _without_s() -> Any:
    return ConfigBuilder().mcp_server("other").tool("t").text("x").build()


def _listens(session: SessionClient) -> list[dict[str, Any]]:
    return [
        entry for entry in session.requests(provider="mcp") if entry["operation"] == "subscriptions/listen"
    ]


def test_the_client_hears_tools_list_changed_when_a_configure_changes_a_tool(
    llmts_session: SessionClient,
) -> None:
    from mcp import Client
    from mcp.client.subscriptions import ToolsListChanged

    llmts_session.configure(_config())

    async def scenario() -> tuple[Any, Any, list[str | None]]:
        async with Client(llmts_session.mcp_url("s")) as client:
            assert client.protocol_version == MODERN
            async with client.listen(tools_list_changed=True) as subscription:
                llmts_session.configure(_config(description="second"))
                with anyio.fail_after(10):
                    event = await subscription.__anext__()
                tools = await client.list_tools()
                return subscription.honored, event, [tool.description for tool in tools.tools]

    honored, event, descriptions = run(scenario)
    assert honored.tools_list_changed is True and honored.resource_subscriptions is None
    assert event == ToolsListChanged() and descriptions == ["second"]


def test_a_resource_subscription_hears_resources_updated_when_its_text_changes(
    llmts_session: SessionClient,
) -> None:
    from mcp import Client
    from mcp.client.subscriptions import ResourceUpdated

    llmts_session.configure(_config())

    async def scenario() -> tuple[Any, str]:
        async with (
            Client(llmts_session.mcp_url("s")) as client,
            client.listen(resource_subscriptions=["file:///x"]) as subscription,
        ):
            llmts_session.configure(_config(text="v2"))
            with anyio.fail_after(10):
                event = await subscription.__anext__()
            read: Any = await client.read_resource("file:///x")
            return event, read.contents[0].text

    event, text = run(scenario)
    assert event == ResourceUpdated(uri="file:///x") and text == "v2"


def test_dropping_the_server_ends_the_listen_gracefully(llmts_session: SessionClient) -> None:
    from mcp import Client

    llmts_session.configure(_config())

    async def scenario() -> list[Any]:
        async with (
            Client(llmts_session.mcp_url("s")) as client,
            client.listen(tools_list_changed=True) as subscription,
        ):
            llmts_session.configure(_without_s())
            with anyio.fail_after(10):
                # A graceful end stops the loop; an abrupt one would raise SubscriptionLost.
                return [event async for event in subscription]

    assert run(scenario) == []


@contextmanager
def _listen(
    session: SessionClient, params: dict[str, Any], listen_id: str = "listen-1"
) -> Iterator[StreamReader]:
    """A raw ``subscriptions/listen`` whose SSE answer is read incrementally."""
    parts = urlsplit(session.provider_base)
    connection = http.client.HTTPConnection(str(parts.hostname), parts.port, timeout=10)
    message = {
        "jsonrpc": "2.0",
        "id": listen_id,
        "method": "subscriptions/listen",
        "params": {**params, "_meta": META},
    }
    headers = {
        "Accept": ACCEPT_BOTH,
        "Content-Type": "application/json",
        "Mcp-Protocol-Version": MODERN,
        "Mcp-Method": "subscriptions/listen",
    }
    try:
        connection.request("POST", parts.path.rstrip("/") + "/mcp/s", json.dumps(message).encode(), headers)
        yield StreamReader(connection.getresponse())
    finally:
        connection.close()


def test_the_frames_on_the_wire(llmts_session: SessionClient) -> None:
    llmts_session.configure(_config())
    wanted = {
        "toolsListChanged": True,
        "promptsListChanged": False,
        "resourcesListChanged": False,
        "resourceSubscriptions": ["file:///x"],
    }
    meta = {KEY: "listen-1"}
    with _listen(llmts_session, {"notifications": wanted}) as stream:
        assert stream.status == 200 and stream.headers["content-type"].startswith("text/event-stream")
        assert stream.next_message() == {
            "jsonrpc": "2.0",
            "method": "notifications/subscriptions/acknowledged",
            "params": {
                "notifications": {"toolsListChanged": True, "resourceSubscriptions": ["file:///x"]},
                "_meta": meta,
            },
        }
        # Every watched thing and an unwatched one (the prompt) change at once.
        llmts_session.configure(_config(description="second", text="v2", prompt="Hello"))
        assert stream.next_message() == {
            "jsonrpc": "2.0",
            "method": "notifications/tools/list_changed",
            "params": {"_meta": meta},
        }
        assert stream.next_message() == {
            "jsonrpc": "2.0",
            "method": "notifications/resources/updated",
            "params": {"uri": "file:///x", "_meta": meta},
        }
        llmts_session.configure(_without_s())
        assert stream.next_message() == {
            "jsonrpc": "2.0",
            "id": "listen-1",
            "result": {
                "resultType": "complete",
                "_meta": {KEY: "listen-1", "io.modelcontextprotocol/serverInfo": SERVER_INFO},
            },
        }
        assert stream.next_message() is None  # the stream ended


def test_deleting_the_session_ends_the_listen_gracefully(llmts_session: SessionClient) -> None:
    llmts_session.configure(_config())
    with _listen(llmts_session, {"notifications": {"toolsListChanged": True}}) as stream:
        assert stream.next_message() is not None  # the acknowledgement
        llmts_session.delete()
        ended = stream.next_message()
        assert ended is not None and ended["id"] == "listen-1"
        assert ended["result"]["resultType"] == "complete"
        assert stream.next_message() is None


def test_a_graceful_stop_ends_the_listen_with_its_result(
    own_server_factory: Callable[..., LlmTestServer],
) -> None:
    server = own_server_factory(extra_args=["--graceful-timeout", "2"])
    session = server.create_session()
    session.configure(_config())
    with _listen(session, {"notifications": {"toolsListChanged": True}}) as stream:
        assert stream.next_message() is not None  # the acknowledgement
        assert server.process is not None
        server.process.send_signal(signal.SIGTERM)
        ended = stream.next_message(timeout=8)
        assert ended is not None and ended["id"] == "listen-1"
        assert ended["result"]["resultType"] == "complete"
        assert stream.next_message() is None
    assert server.process.wait(10) == 0


def test_the_listen_is_one_journal_entry_completed_when_the_stream_ends(llmts_session: SessionClient) -> None:
    llmts_session.configure(_config())
    with _listen(llmts_session, {"notifications": {"toolsListChanged": True}}) as stream:
        assert stream.next_message() is not None
        (open_entry,) = _listens(llmts_session)
        assert open_entry["completed"] is False and open_entry["streaming"] is True
        assert open_entry["status"] == 200
    deadline = time.monotonic() + 10  # the server notices at once; the margin is for a busy machine
    while time.monotonic() < deadline and not _listens(llmts_session)[0]["completed"]:
        time.sleep(0.05)
    (entry,) = _listens(llmts_session)
    # The client left: no result reached it (a graceful end journals ``completed``).
    assert entry["transport_outcome"] == "client_gone" and entry["success"] is False
    assert "notifications/subscriptions/acknowledged" in entry["response_preview"]


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"notifications": []},
        {"notifications": {"toolsListChanged": "yes"}},
        {"notifications": {"resourceSubscriptions": "file:///x"}},
        {"notifications": {"resourceSubscriptions": [1]}},
        {"notifications": {"resourceSubscriptions": ["file:///" + "x" * 4089]}},  # 4097 characters
    ],
)
def test_bad_params_are_invalid_params(llmts_session: SessionClient, params: dict[str, Any]) -> None:
    llmts_session.configure(_config())
    wire = Wire(llmts_session.provider_base, "s")
    headers = {"Mcp-Protocol-Version": MODERN, "Mcp-Method": "subscriptions/listen"}
    response = wire.request("subscriptions/listen", {**params, "_meta": META}, headers=headers, version=None)
    assert response.status == 400
    assert response.json()["error"]["code"] == -32602
    (entry,) = _listens(llmts_session)
    assert entry["success"] is False


def test_listens_per_server_are_bounded(llmts_session: SessionClient) -> None:
    from contextlib import ExitStack

    from llmts.schema.peer_limits import PEER_LIMITS

    llmts_session.configure(_config())
    limit = PEER_LIMITS["mcp_listens_per_server"]
    with ExitStack() as stack:
        for number in range(limit):
            stream = stack.enter_context(_listen(llmts_session, {"notifications": {}}, f"listen-{number}"))
            assert stream.next_message() is not None
        with _listen(llmts_session, {"notifications": {}}, "one-more") as refused:
            assert refused.status == 200 and refused.headers["content-type"] == "application/json"
            answer = json.loads(refused.response.read())
            assert answer["id"] == "one-more" and answer["error"]["code"] == -32603
    # The refused one is journaled with llmts's reason; the others are ended by their clients leaving.
    (entry,) = [entry for entry in _listens(llmts_session) if entry["error_code"] == "mcp_listen_limit"]
    assert entry["success"] is False
    # Their slots are free again once the server saw them leave.
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not all(entry["completed"] for entry in _listens(llmts_session)):
        time.sleep(0.05)
    with _listen(llmts_session, {"notifications": {}}, "again") as stream:
        assert stream.status == 200 and stream.next_message() is not None
