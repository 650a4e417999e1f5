"""What MCP servers and A2A agents keep is charged to the process memory budget (docs/journal.md, "Process
memory budget"): ``/admin-api/process`` shows it as ``peer_bytes``, an A2A request it cannot fit is refused
before anything changes, and a reset, reconfiguration or delete gives it back."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
import pytest

from llmts import LlmTestServer, SessionClient
from llmts.peers.a2a.state import message_resident
from llmts.peers.mcp.clients import CLIENT_RESIDENT_BYTES
from tests.helpers import post_across, raw_request
from tests.peers.a2a.a2a_helpers import rpc, v1_message
from tests.peers.mcp.support import MODERN, Wire

_AGENT = {
    "name": "helper",
    "responses": [{"task": {"states": ["input-required"]}}],
    "terminal_policy": "repeat_last_response",
}


def _memory(server: LlmTestServer) -> dict[str, int]:
    memory: dict[str, int] = server.process_stats()["memory"]
    return memory


def _many_parts(count: int, **fields: Any) -> dict[str, Any]:
    """A message of ``count`` short text parts: small as JSON, several times that parsed."""
    message = v1_message("first", **fields)
    message["parts"] = [{"text": f"part {n}"} for n in range(count)]
    return {"message": message}


def _tasks(session: SessionClient) -> int:
    listed = rpc(session, "helper", "ListTasks", {"pageSize": 100}).json()["result"]
    return len(listed["tasks"])


def test_a2a_tasks_are_charged_as_parsed_refused_when_they_cannot_fit_and_given_back(
    own_server_factory: Callable[..., LlmTestServer],
) -> None:
    server = own_server_factory(access_log=False, extra_args=["--max-memory", "4M"])
    session = server.create_session()
    session.configure({"a2a_agents": [_AGENT]})
    assert _memory(server)["peer_bytes"] == 0

    params = _many_parts(2000)
    body = orjson.dumps({"id": "req-1", "jsonrpc": "2.0", "method": "SendMessage", "params": params})
    first = rpc(session, "helper", "SendMessage", params)
    assert first.status == 200 and "task" in first.json()["result"], first.body
    charged = _memory(server)["peer_bytes"]
    # The estimate of what the message holds (about 10 times its 40 KB of JSON), not its length.
    assert charged >= message_resident(body) > 4 * len(body), (charged, len(body))

    # More tasks until the budget has no room: the refusal is a JSON-RPC error naming the budget, counted,
    # and the agent keeps the tasks it had.
    refused: dict[str, Any] | None = None
    for _ in range(40):
        answer = rpc(session, "helper", "SendMessage", params).json()
        if "error" in answer:
            refused = answer["error"]
            break
    assert refused is not None, "4 MB cannot hold 40 such tasks"
    assert refused["data"] == {"code": "llm_test_server_memory_exhausted"}
    assert "--max-memory" in refused["message"]
    # Journaled with that code (the older entries went to make room for the tasks).
    newest = max(session.requests(), key=lambda entry: entry["sequence"])
    assert newest["error_code"] == "llm_test_server_memory_exhausted"
    kept, memory = _tasks(session), _memory(server)
    assert memory["refused"] >= 1 and memory["used_bytes"] <= memory["max_bytes"]
    assert memory["peer_bytes"] >= kept * message_resident(body)
    assert rpc(session, "helper", "SendMessage", params).json()["error"]["data"] == refused["data"]
    assert _tasks(session) == kept

    # A reset drops the agent's tasks and gives their bytes back; so does delete.
    session.reset()
    assert _memory(server)["peer_bytes"] == 0
    assert rpc(session, "helper", "SendMessage", params).status == 200
    assert _memory(server)["peer_bytes"] > 0
    session.delete()
    assert _memory(server)["peer_bytes"] == 0


def test_mcp_client_sessions_and_subscriptions_are_charged_and_given_back(
    own_server_factory: Callable[..., LlmTestServer],
) -> None:
    server = own_server_factory(access_log=False)
    session = server.create_session()
    resource = {"uri": "file:///notes/" + "n" * 200, "name": "notes", "text": "hello"}
    config = {"mcp_servers": [{"name": "docs", "resources": [resource]}]}
    session.configure(config)
    wire = Wire(session.provider_base, "docs")

    ids = [wire.initialize() for _ in range(3)]
    opened = _memory(server)["peer_bytes"]
    assert opened >= 3 * CLIENT_RESIDENT_BYTES
    answer = wire.request("resources/subscribe", {"uri": resource["uri"]}, session=ids[0])
    assert answer.status == 200 and "error" not in answer.json(), answer.body
    subscribed = _memory(server)["peer_bytes"]
    assert subscribed - opened >= len(resource["uri"])

    # A reconfiguration keeps the client sessions (and their charge), and queues each subscriber the
    # change of its resource: charged while it waits for the stream.
    changed = {**resource, "text": "changed"}
    session.configure({"mcp_servers": [{"name": "docs", "resources": [changed]}]})
    assert _memory(server)["peer_bytes"] > subscribed
    with wire.stream(ids[0]) as stream:
        assert stream.next_message()["method"] == "notifications/resources/updated"
    assert _memory(server)["peer_bytes"] == subscribed  # the stream took it

    # DELETE of a client session gives its bytes back; a server no longer configured gives back all.
    deleted = wire.raw("DELETE", {"Mcp-Session-Id": ids[1], "Mcp-Protocol-Version": "2025-11-25"})
    assert deleted.status in (200, 204)
    assert subscribed - _memory(server)["peer_bytes"] >= CLIENT_RESIDENT_BYTES
    session.configure({"scenarios": [{"responses": [{"text": "hi"}]}]})
    assert _memory(server)["peer_bytes"] == 0


@pytest.mark.parametrize("reconfigure", [False, True])
def test_deleting_the_session_gives_back_what_its_peers_kept(
    own_server_factory: Callable[..., LlmTestServer], reconfigure: bool
) -> None:
    server = own_server_factory(access_log=False)
    session = server.create_session()
    config = {"mcp_servers": [{"name": "docs"}], "a2a_agents": [_AGENT]}
    session.configure(config)
    Wire(session.provider_base, "docs").initialize()
    assert rpc(session, "helper", "SendMessage", _many_parts(10)).status == 200
    assert _memory(server)["peer_bytes"] > CLIENT_RESIDENT_BYTES
    if reconfigure:  # the MCP server keeps its client session, the agent starts over
        session.configure(config)
        assert _memory(server)["peer_bytes"] >= CLIENT_RESIDENT_BYTES
    session.delete()
    assert _memory(server)["peer_bytes"] == 0


def test_a_configure_counts_the_agent_tasks_it_drops_as_freed(
    own_server_factory: Callable[..., LlmTestServer],
) -> None:
    """A budget full of an agent's tasks: a configuration that fits only once they are gone (a configure
    drops them) is accepted, not refused for room it makes itself."""
    server = own_server_factory(access_log=False, extra_args=["--max-memory", "4M"])
    session = server.create_session()
    session.configure({"a2a_agents": [_AGENT]})
    params = _many_parts(2000)
    while "result" in rpc(session, "helper", "SendMessage", params).json():
        pass
    tasks = _memory(server)["peer_bytes"]
    assert tasks > 2_000_000
    # About 2 KiB per scripted response (docs/journal.md): half of what the tasks hold.
    responses = [{"text": f"answer {n}"} for n in range(tasks // 2 // 2048)]
    session.configure({"a2a_agents": [_AGENT], "scenarios": [{"responses": responses}]})
    memory = _memory(server)
    assert memory["peer_bytes"] == 0 and memory["configuration_bytes"] > tasks // 3
    assert memory["used_bytes"] <= memory["max_bytes"]


@pytest.mark.parametrize("peer", ["a2a", "mcp"])
def test_a_request_whose_body_arrives_across_the_delete_charges_nothing(
    own_server_factory: Callable[..., LlmTestServer], peer: str
) -> None:
    """The deleted session's peer state is built by the request still reading its body (its answer is
    superseded or its session gone): it charges nothing, where it once stayed charged for good."""
    server = own_server_factory(access_log=False)
    session = server.create_session()
    session.configure({"a2a_agents": [_AGENT], "mcp_servers": [{"name": "docs"}]})
    if peer == "a2a":
        path, params = "/a2a/helper", {"message": v1_message("x" * 1000)}
        body = orjson.dumps({"id": "r1", "jsonrpc": "2.0", "method": "SendMessage", "params": params})
    else:
        path = "/mcp/docs"
        hello = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"},
        }
        body = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello})
    accept = {"Accept": "application/json, text/event-stream"}
    post_across(session.provider_base, path, body, session.delete, accept)
    assert _memory(server)["peer_bytes"] == 0


def test_a_message_into_a_task_at_its_history_cap_is_charged_only_what_it_adds(
    own_server_factory: Callable[..., LlmTestServer],
) -> None:
    """At 64 messages a task drops its oldest for each new one: with the budget full, a message of the
    same size still fits (it grows nothing), and one bigger than what it replaces is refused."""
    server = own_server_factory(access_log=False, extra_args=["--max-memory", "4M"])
    session = server.create_session()
    other = {**_AGENT, "name": "other"}
    session.configure({"a2a_agents": [_AGENT, other]})
    text = "x" * 20_000
    task = rpc(session, "helper", "SendMessage", {"message": v1_message(text)}).json()["result"]["task"]
    follow = {"taskId": task["id"], "contextId": task["contextId"]}
    for _ in range(70):
        assert (
            "result" in rpc(session, "helper", "SendMessage", {"message": v1_message(text, **follow)}).json()
        )
    while "result" in rpc(session, "other", "SendMessage", {"message": v1_message("y" * 4000)}).json():
        pass
    full = _memory(server)["peer_bytes"]
    same = rpc(session, "helper", "SendMessage", {"message": v1_message(text, **follow)}).json()
    assert "result" in same, same
    assert _memory(server)["peer_bytes"] == full
    bigger = rpc(session, "helper", "SendMessage", {"message": v1_message(text * 20, **follow)}).json()
    assert bigger["error"]["data"] == {"code": "llm_test_server_memory_exhausted"}
    assert "would grow by about" in bigger["error"]["message"]


def test_mcp_growth_evicts_journal_entries_for_its_room(
    own_server_factory: Callable[..., LlmTestServer],
) -> None:
    """MCP client sessions are never refused (their counts bound them), but the room they take comes
    from journal entries first, as for any growth: here the notifications a configure queues for 150
    subscribers (no request, so no journal entry of their own sets off the eviction)."""
    server = own_server_factory(access_log=False, extra_args=["--max-memory", "1M"])
    session = server.create_session()
    resource = {"uri": "file:///notes", "name": "notes", "text": "hello"}
    session.configure({"mcp_servers": [{"name": "docs", "resources": [resource]}]})
    wire = Wire(session.provider_base, "docs")
    for _ in range(150):  # about 800 KB of client sessions and subscriptions, the rest journal entries
        client = wire.initialize()
        assert wire.request("resources/subscribe", {"uri": resource["uri"]}, session=client).status == 200
    before = _memory(server)
    changed = {**resource, "text": "changed"}
    session.configure({"mcp_servers": [{"name": "docs", "resources": [changed]}]})
    after = _memory(server)
    assert after["peer_bytes"] - before["peer_bytes"] >= 150 * 500  # a queued notification each
    assert after["evicted_entries"] > before["evicted_entries"]
    assert after["used_bytes"] <= after["max_bytes"]


def test_mcp_sessions_and_subscriptions_the_budget_has_no_room_for_are_refused(
    own_server_factory: Callable[..., LlmTestServer],
) -> None:
    """Once journal entries made what room they could: ``initialize``, ``resources/subscribe`` and a
    2026-07-28 ``subscriptions/listen`` are answered -32603 with the budget's code, and the legacy
    transport's stream 507."""
    server = own_server_factory(access_log=False, extra_args=["--max-memory", "2M"])
    session = server.create_session()
    resources = [{"uri": f"file:///{n:04d}" + "u" * 4000, "name": f"r{n}", "text": "x"} for n in range(200)]
    session.configure({"mcp_servers": [{"name": "docs", "resources": resources}]})
    wire = Wire(session.provider_base, "docs")
    client = wire.initialize()
    refused: dict[str, Any] | None = None
    for resource in resources:  # about 4 KB each
        answer = wire.request("resources/subscribe", {"uri": resource["uri"]}, session=client).json()
        if "error" in answer:
            refused = answer["error"]
            break
    assert refused is not None, "2 MB cannot hold 200 subscriptions of 4 KB besides their configuration"
    assert (
        refused["data"] == {"code": "llm_test_server_memory_exhausted"}
        and "--max-memory" in refused["message"]
    )
    hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}
    answer = wire.request("initialize", hello).json()
    assert answer["error"]["data"] == {"code": "llm_test_server_memory_exhausted"}
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    listen = {"notifications": {"resourceSubscriptions": [resources[-1]["uri"]]}, "_meta": meta}
    headers = {"Mcp-Protocol-Version": MODERN, "Mcp-Method": "subscriptions/listen"}
    answer = wire.request("subscriptions/listen", listen, headers=headers, version=None).json()
    assert answer["error"]["data"] == {"code": "llm_test_server_memory_exhausted"}, answer
    stream = raw_request(session.provider_base, "GET", "/mcp/docs/sse", None, {"Accept": "text/event-stream"})
    assert stream.status == 507
    assert stream.json()["error"]["data"] == {"code": "llm_test_server_memory_exhausted"}
    memory = _memory(server)
    assert memory["used_bytes"] <= memory["max_bytes"] and memory["refused"] >= 3
