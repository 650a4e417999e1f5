"""One scripted MCP server's state in a session: its configuration indexed by name, each tool's result
cursor (guarded by the state's own lock, never the session's), and its client sessions.

Reset and configure (``SessionPeers.clear_locked``) call ``renew``: the tool cursors start over, and the
client sessions carry over to the new state as long as the server is still configured, each told what
changed (``notifications/tools/list_changed``, ``.../resources/list_changed``,
``.../prompts/list_changed``, and ``notifications/resources/updated`` for a subscribed resource whose
content changed) on its GET stream; the 2026-07-28 ``subscriptions/listen`` streams carry over the same
way, each told only what it asked for. A server no longer configured, or a deleted session, ends them
(their streams end, their waits return, their ids answer 404).
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from llmts.peers.mcp.clients import ClientBook
from llmts.runtime.session_memory import MemoryShare
from llmts.schema.mcp import McpPrompt, McpResource, McpServer, McpTool, McpToolResult
from llmts.schema.peer_limits import PEER_LIMITS

if TYPE_CHECKING:
    from llmts.schema.config import SessionConfig

__all__ = ["McpServerState", "arguments_contain"]


def arguments_contain(actual: Any, expected: Any) -> bool:
    """``expected`` is a structural subset of ``actual``: every key of an object (recursively), lists
    element by element and of equal length, scalars equal and of the same JSON type."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            key in actual and arguments_contain(actual[key], value) for key, value in expected.items()
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(actual) == len(expected)
            and all(arguments_contain(a, e) for a, e in zip(actual, expected, strict=True))
        )
    if isinstance(expected, bool) or isinstance(actual, bool):
        return actual is expected
    return bool(actual == expected)


# What a list method shows of each item: a change elsewhere (a tool's results, a resource's content, a
# prompt's messages) is not a list change.
_LISTED = {
    "tools": ("tools", ("results", "terminal_policy")),
    "resources": ("resources", ("text", "blob")),
    "prompts": ("prompts", ("messages",)),
}


def _listing(server: McpServer, kind: str) -> list[Any]:
    attribute, hidden = _LISTED[kind]
    items: list[Any] = [item.model_dump(exclude=set(hidden)) for item in getattr(server, attribute)]
    if kind == "resources":
        items.extend(template.model_dump() for template in server.resource_templates)
    return items


def _matches(result: McpToolResult, arguments: dict[str, Any]) -> bool:
    return result.when is None or arguments_contain(arguments, result.when.arguments)


class _Cursor:
    """Which of a tool's results were consumed, and in which order (for ``repeat_last_response``)."""

    __slots__ = ("order", "used")

    def __init__(self, count: int) -> None:
        self.used = [False] * count
        self.order: list[int] = []


class McpServerState:
    """``closed``: a reset, configure or delete replaced this state; a call still waiting on it is
    superseded (the server layer's ``stopper``)."""

    __slots__ = (
        "_cursors",
        "_inputs",
        "_lock",
        "clients",
        "closed",
        "config",
        "listens",
        "memory",
        "prompts",
        "resources",
        "tools",
    )

    def __init__(
        self,
        config: McpServer,
        clients: ClientBook | None = None,
        listens: ClientBook | None = None,
        memory: MemoryShare | None = None,
    ) -> None:
        self.config = config
        # The server's share of the process memory budget: what its client sessions and listens keep.
        self.memory = memory if memory is not None else MemoryShare(None, "peer")
        self.tools: dict[str, McpTool] = {tool.name: tool for tool in config.tools}
        self.resources: dict[str, McpResource] = {resource.uri: resource for resource in config.resources}
        self.prompts: dict[str, McpPrompt] = {prompt.name: prompt for prompt in config.prompts}
        self.clients = clients if clients is not None else ClientBook(report=self.memory.grow)
        # The open ``subscriptions/listen`` streams (2026-07-28), one pseudo client session each.
        self.listens = (
            listens
            if listens is not None
            else ClientBook(PEER_LIMITS["mcp_listens_per_server"], report=self.memory.grow)
        )
        self.closed = False
        self._lock = threading.Lock()
        self._cursors: dict[str, _Cursor] = {}
        # 2026-07-28 calls waiting for the client's input: requestState -> (tool, result index).
        self._inputs: OrderedDict[str, tuple[str, int, tuple[str, ...]]] = OrderedDict()

    # --- the tool script ----------------------------------------------------------------------------

    def take_result(
        self,
        tool: McpTool,
        arguments: dict[str, Any],
        check: Callable[[McpToolResult], None] | None = None,
    ) -> tuple[int, McpToolResult] | None:
        """The result that answers this call, consumed: the first unconsumed one whose ``when`` matches;
        when none is left, the tool's ``terminal_policy`` decides (None: reject). ``check`` may refuse the
        chosen result by raising, before anything is consumed."""
        results = tool.results
        with self._lock:
            # A new cursor (the first call, a restart) is kept only once a result is consumed.
            cursor = self._cursors.get(tool.name) or _Cursor(len(results))
            index = self._first(results, cursor, arguments)
            if index is None and tool.terminal_policy == "restart" and cursor.order:
                cursor = _Cursor(len(results))
                index = self._first(results, cursor, arguments)
            if index is None and tool.terminal_policy == "repeat_last_response":
                for consumed in reversed(cursor.order):
                    if _matches(results[consumed], arguments):
                        if check is not None:
                            check(results[consumed])
                        return consumed, results[consumed]
            if index is None:
                return None
            if check is not None:
                check(results[index])
            self._cursors[tool.name] = cursor
            cursor.used[index] = True
            cursor.order.append(index)
            return index, results[index]

    @staticmethod
    def _first(results: list[McpToolResult], cursor: _Cursor, arguments: dict[str, Any]) -> int | None:
        for index, result in enumerate(results):
            if not cursor.used[index] and _matches(result, arguments):
                return index
        return None

    def await_input(self, tool: str, index: int, methods: tuple[str, ...]) -> str:
        """Remember a consumed result whose call asked the client for input (``methods``: the 2026-07-28
        revision's ``InputRequiredResult``); the ``requestState`` the client sends back with its answers."""
        token = secrets.token_hex(16)
        with self._lock:
            self._inputs[token] = (tool, index, methods)
            while len(self._inputs) > PEER_LIMITS["mcp_sessions_per_server"]:
                self._inputs.popitem(last=False)
        return token

    def resume(self, token: str) -> tuple[str, int, tuple[str, ...]] | None:
        """The call a ``requestState`` names (once), or None when it is unknown or was forgotten."""
        with self._lock:
            return self._inputs.pop(token, None)

    # --- the session part's lifecycle ---------------------------------------------------------------

    def renew(self, config: SessionConfig) -> McpServerState | None:
        """After a reset or configure: a fresh script for the server's new configuration keeping the client
        sessions (each told what changed), or None when the server is gone (its sessions end)."""
        new = next((server for server in config.mcp_servers if server.name == self.config.name), None)
        if new is None:
            self.close()
            return None
        self.closed = True
        old = self.config
        kinds = [
            kind for kind in ("tools", "resources", "prompts") if _listing(old, kind) != _listing(new, kind)
        ]
        before = {resource.uri: resource for resource in old.resources}
        after = {resource.uri: resource for resource in new.resources}
        for client in [*self.clients.live(), *self.listens.live()]:
            for kind in kinds:
                client.changed(f"notifications/{kind}/list_changed", kind=kind)
            for uri in sorted(client.subscriptions):
                if before.get(uri) != after.get(uri):
                    client.changed("notifications/resources/updated", {"uri": uri})
        return McpServerState(new, self.clients, self.listens, self.memory)

    def close(self) -> None:
        self.closed = True
        self.clients.end_all()
        self.listens.end_all()
