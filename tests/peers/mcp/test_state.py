"""The sans-IO parts of a scripted MCP server (llmts/peers/mcp/): argument matching, client sessions and
their bounds, and what a reset or configure does to them."""

from __future__ import annotations

from typing import Any

import pytest

from llmts.peers.jsonrpc import JsonRpcError, Message
from llmts.peers.mcp import ClientBook, McpClient, McpServerState, initialize
from llmts.peers.mcp.clients import CLIENT_RESIDENT_BYTES
from llmts.peers.mcp.listens import Listen, open_listen
from llmts.peers.mcp.render import page
from llmts.peers.mcp.state import arguments_contain
from llmts.runtime.memory import MemoryBudget
from llmts.runtime.session_memory import MemoryShare
from llmts.schema.config import SessionConfig
from llmts.schema.peer_limits import PEER_LIMITS


@pytest.mark.parametrize(
    ("actual", "expected", "contains"),
    [
        ({"a": 1, "b": 2}, {"a": 1}, True),
        ({"a": {"x": 1, "y": 2}}, {"a": {"x": 1}}, True),
        ({"a": [1, 2]}, {"a": [1, 2]}, True),
        ({"a": [1, 2]}, {"a": [1]}, False),
        ({"a": 1}, {"a": True}, False),
        ({"a": True}, {"a": 1}, False),
        ({"a": 1.0}, {"a": 1}, True),
        ({"a": "1"}, {"a": 1}, False),
        ({}, {"a": None}, False),
        ({"a": None}, {"a": None}, True),
    ],
)
def test_arguments_contain(actual: Any, expected: Any, contains: bool) -> None:
    assert arguments_contain(actual, expected) is contains


def _config(**server: Any) -> SessionConfig:
    return SessionConfig.model_validate({"mcp_servers": [{"name": "s", **server}]})


def test_the_oldest_client_session_is_evicted_beyond_the_bound() -> None:
    book = ClientBook(limit=2)
    first, second, third = (book.open("2025-11-25", {}, {}) for _ in range(3))
    assert book.get(first.id) is None and first.ended and not first.usable
    assert book.get(second.id) is second and book.get(third.id) is third
    assert len(book) == 2


def test_an_ended_session_wakes_its_waits_and_stream() -> None:
    client = McpClient("2025-11-25", {"elicitation": {}}, {})
    pending = client.ask("elicitation/create")
    flight = client.call_started(1)
    client.end()
    assert pending.done.is_set() and pending.answer is None
    assert flight.cancelled.is_set() and client.wake.is_set()


def test_answers_match_the_server_requests_by_id() -> None:
    client = McpClient("2025-11-25", {}, {})
    pending = client.ask("roots/list")
    assert client.answered(Message(None, "other", {}, result={})) is None
    assert client.answered(Message(None, pending.id, {}, result={"roots": []})) is pending
    assert pending.done.is_set() and pending.answer is not None


def test_the_outbox_keeps_the_newest_notifications() -> None:
    client = McpClient("2025-11-25", {}, {})
    for number in range(2000):
        client.push({"n": number})
    drained = client.drain()
    assert len(drained) == 1024 and drained[-1] == ({"n": 1999}, None)
    assert not client.wake.is_set()


def test_renew_keeps_sessions_and_tells_them_only_what_changed() -> None:
    resource = {"uri": "file:///a", "name": "a", "text": "one"}
    old = _config(tools=[{"name": "t", "results": [{"text": "x"}]}], resources=[resource])
    state = McpServerState(old.mcp_servers[0])
    client = state.clients.open("2025-11-25", {}, {})
    client.subscriptions.add("file:///a")
    # New results and new content: no list changed, but the subscribed resource was updated.
    changed = _config(
        tools=[{"name": "t", "results": [{"text": "y"}]}], resources=[{**resource, "text": "two"}]
    )
    renewed = state.renew(changed)
    assert renewed is not None and renewed.clients is state.clients
    assert client.drain() == [
        (
            {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "file:///a"}},
            None,
        )
    ]
    # A reset (the same configuration) says nothing.
    assert renewed.renew(changed) is not None and client.drain() == []
    # A configuration without the server ends its sessions.
    assert renewed.renew(SessionConfig.model_validate({})) is None
    assert client.ended


def test_page_cursors() -> None:
    items = list(range(5))
    assert page(items, None, None) == (items, None)
    assert page(items, None, 2) == ([0, 1], "2")
    assert page(items, "4", 2) == ([4], None)
    assert page(items, "5", 2) == ([], None)


def test_page_cursors_are_ascii_digits() -> None:
    for cursor in ("²", "\u0661", "1²", "-1", "+1", "1_0", "", "0" * 10):
        with pytest.raises(JsonRpcError):
            page([1, 2], cursor, 1)


def _reaches(root: object, target: object) -> bool:
    """Whether ``target`` is held by ``root``'s slots, through any containers."""
    seen: set[int] = set()
    stack = [getattr(root, name, None) for name in type(root).__slots__]  # type: ignore[attr-defined]
    while stack:
        value = stack.pop()
        if value is target:
            return True
        if id(value) in seen or not isinstance(value, (dict, list, tuple, set, frozenset)):
            continue
        seen.add(id(value))
        stack.extend(value.values() if isinstance(value, dict) else value)
    return False


def test_a_client_session_keeps_only_a_bounded_copy_of_its_handshake() -> None:
    huge = "x" * 1_000_000
    state = McpServerState(_config().mcp_servers[0])
    params = {
        "protocolVersion": "2025-11-25",
        "capabilities": {"elicitation": {"form": {}}, "sampling": True, "experimental": {"big": huge}},
        "clientInfo": {"name": "n" * 1000, "version": "1", "extra": huge},
    }
    client, _ = initialize(state, Message("initialize", 1, params))
    assert client is not None
    assert client.declares("elicitation") and not client.declares("sampling") and not client.declares("roots")
    assert client.client_info == {"name": "n" * 256, "version": "1"}
    assert not _reaches(client, huge)


def test_only_a_string_or_an_integer_names_a_call_to_cancel() -> None:
    client = McpClient("2025-11-25", {}, {})
    flight = client.call_started(1)
    for other in ([1], {}, None, True, 1.0, {"id": 1}):
        assert client.cancel(other) is False  # True and 1.0 equal 1 in Python, not in JSON-RPC
    assert not flight.cancelled.is_set()
    assert client.cancel(1) is True and flight.cancelled.is_set()


def test_answers_wait_for_the_stream_and_are_never_dropped() -> None:
    client = McpClient("2025-11-25", {}, {}, legacy=True)
    outcomes: list[bool] = []
    for number in range(64):
        assert client.offer({"id": number}, outcomes.append)
    assert not client.offer({"id": 64}, outcomes.append)  # full: the caller waits for ``room``
    assert not client.room.is_set()
    for number in range(2000):  # notifications between them: only the oldest notifications go
        client.push({"n": number})
    drained = client.drain()
    assert [message for message, sent in drained if sent is not None] == [{"id": n} for n in range(64)]
    assert len(drained) == 64 + 1024 and drained[-1] == ({"n": 1999}, None)
    assert client.room.is_set()
    assert client.offer({"id": 64}, outcomes.append)
    client.end()  # an answer still waiting is told it never left
    assert outcomes == [False]
    assert not client.offer({"id": 65}, outcomes.append)


def test_client_sessions_report_what_they_keep_to_their_book() -> None:
    """A book tells its share every change of what its sessions keep: a session, its subscriptions, the
    messages waiting for its stream (at most ``mcp_pending_notifications``: a full queue drops, the charge
    stays); a drained stream, an unsubscribe, a removed or evicted session give it back."""
    charged: list[int] = []
    book = ClientBook(limit=2, report=charged.append)

    def total() -> int:
        return sum(charged)

    first = book.open("2025-11-25", {}, {"name": "n" * 1000})
    assert total() == first.resident >= CLIENT_RESIDENT_BYTES
    first.subscribe(["file:///" + "a" * 300, "file:///b"])
    first.subscribe(["file:///b"])  # already subscribed: nothing more
    subscribed = total()
    assert subscribed - CLIENT_RESIDENT_BYTES >= 310 + 8
    for n in range(PEER_LIMITS["mcp_pending_notifications"] + 50):
        first.changed("notifications/resources/updated", {"uri": f"file:///{n}"})
    full = total()
    first.changed("notifications/tools/list_changed")
    assert total() == full > subscribed
    assert len(first.drain()) == PEER_LIMITS["mcp_pending_notifications"] and total() == subscribed
    first.unsubscribe("file:///b")
    first.unsubscribe("file:///never")
    assert total() == first.resident < subscribed

    second = book.open("2025-11-25", {}, {})
    book.open("2025-11-25", {}, {})  # evicts the first
    assert first.ended and total() == 2 * CLIENT_RESIDENT_BYTES
    book.remove(second.id)
    book.end_all()
    assert total() == 0
    second.changed("notifications/tools/list_changed")  # a session no book holds charges nothing
    assert total() == 0


def _full_budget() -> tuple[MemoryBudget, MemoryShare]:
    """A budget with no room left (its whole size charged as a configuration) and a server share on it."""
    budget = MemoryBudget(1 << 20)
    MemoryShare(budget, "configuration").charge(1 << 20)
    return budget, MemoryShare(budget, "peer")


def test_at_the_session_limit_initialize_ends_the_oldest_instead_of_asking_for_room() -> None:
    """A full book ends its oldest session for a new one, so a full budget does not refuse it; below the
    limit it does, with the budget's code, and nothing is created."""
    budget, share = _full_budget()
    state = McpServerState(_config().mcp_servers[0], ClientBook(limit=1, report=share.grow), memory=share)
    hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c"}}
    refused, answer = initialize(state, Message("initialize", 1, hello))
    assert refused is None and answer.message["error"]["data"] == {"code": "llm_test_server_memory_exhausted"}
    assert len(state.clients) == 0 and budget.refused == 1
    oldest = state.clients.open("2025-11-25", {}, {})  # the limit reached (charged past the budget)
    client, answer = initialize(state, Message("initialize", 2, hello))
    assert client is not None and "result" in answer.message and oldest.ended
    assert len(state.clients) == 1 and budget.refused == 1


def test_a_listen_over_the_count_is_refused_before_asking_the_budget_for_room() -> None:
    budget, share = _full_budget()
    state = McpServerState(_config().mcp_servers[0], memory=share)
    for _ in range(PEER_LIMITS["mcp_listens_per_server"]):
        assert state.listens.admit(McpClient("2026-07-28", {}, {}))
    listen = Listen({"notifications": {"resourceSubscriptions": ["file:///" + "u" * 4000]}})
    assert open_listen(state, listen, "l1") is None  # the count's refusal
    assert budget.refused == 0  # the budget was never asked (which could have evicted journal entries)
