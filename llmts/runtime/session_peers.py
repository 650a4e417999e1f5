"""The session part that keeps the state of the session's MCP servers and A2A agents (docs/mcp.md,
docs/a2a.md): one state object per (protocol, name), built on first use from the configuration by the
protocol's own code (``llmts/peers/``).

Reset and configure start every peer's script over. A state may carry what a client holds across that
(an MCP server's client sessions: an agent keeps its ``Mcp-Session-Id`` through a reconfiguration and is
told what changed) by implementing ``renew``; a state without it, or one whose ``renew`` returns None, is
closed and dropped. Deleting the session closes everything.

The runtime does not know the protocols: a state object is opaque here. Each one guards its own
mutable parts with its own lock (an MCP server's tool cursors, its client sessions), so a slow stream
of one server never holds the session lock. What a state retains is bounded by the protocol's limits
(``PEER_LIMITS``) and charged to the process memory budget through the ``MemoryShare`` its ``build``
is given (kind ``peer``): an A2A agent asks for room before a task grows (``fits``, refusing what cannot
fit); an MCP server refuses a client session or subscription that cannot fit, and its client sessions
report each change (``grow``, which evicts journal entries for room but never refuses: what a session
queues is bounded by count). A charge is a few integer updates with no switch of the gevent worker
inside, so states sharing nothing but the budget need no common lock. A state that is renewed keeps its
share (``renew`` hands it on); one that is closed and dropped gives its bytes back. A realtime
connection (``open_connection``) charges and detaches its own share: it lives with the connection, not
the configuration, and deleting the session ends it (``SessionEnded.session_deleted``).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, TypeVar

from llmts.runtime.session_memory import MemoryShare

if TYPE_CHECKING:
    from llmts.runtime.memory import MemoryBudget
    from llmts.schema.config import SessionConfig

__all__ = ["PeerState", "SessionEnded", "SessionPeers"]


class PeerState(Protocol):
    def close(self) -> None:
        """The configuration that built this state is gone: end open streams and pending waits (must not
        block; called with the session lock held)."""

    # Optional: ``renew(self, config: SessionConfig) -> PeerState | None``: the state for ``config`` after
    # a reset or configure, keeping what a client holds and charging the same share; None when the peer
    # no longer exists (must not block; called with the session lock held; the old state is closed by
    # ``renew`` itself).


class SessionEnded(Protocol):
    def session_deleted(self) -> None:
        """The session was deleted: end the connection (must not block; called with the session lock
        held)."""


_State = TypeVar("_State", bound=PeerState)


class SessionPeers:
    __slots__ = ("_budget", "_connections", "_lock", "_retired", "_shares", "_states")

    def __init__(self, lock: threading.Lock, budget: MemoryBudget | None = None) -> None:
        self._lock = lock
        self._budget = budget
        self._states: dict[tuple[str, str], PeerState] = {}
        self._shares: dict[tuple[str, str], MemoryShare] = {}
        # The session's open realtime connections, each ended when the session is deleted.
        self._connections: weakref.WeakSet[SessionEnded] = weakref.WeakSet()
        self._retired = False

    def state(self, protocol: str, name: str, build: Callable[[MemoryShare], _State]) -> _State:
        """The state of ``protocol``'s peer ``name`` for the current configuration, built by ``build`` (a
        cheap constructor, called with the session lock held and the state's new memory share) the first
        time it is asked for."""
        key = (protocol, name)
        with self._lock:
            state = self._states.get(key)
            if state is None:
                share = self._shares[key] = MemoryShare(self._budget, "peer")
                state = self._states[key] = build(share)
            return state  # type: ignore[return-value]

    @property
    def memory_dropped_on_clear(self) -> int:
        """What a reset or configure gives back for certain: the charges of the states it cannot renew
        (lock held)."""
        return sum(
            self._shares[key].charged for key, state in self._states.items() if not hasattr(state, "renew")
        )

    def open_connection(self, connection: SessionEnded) -> MemoryShare:
        """A realtime connection of the session (the agent's peer over WebSocket) opened: its share of the
        budget, which it charges and detaches when it closes. Deleting the session ends it; one opened on a
        deleted session is ended at once and charges nothing."""
        with self._lock:
            if self._retired:
                connection.session_deleted()
            else:
                self._connections.add(connection)
            return MemoryShare(self._budget, "realtime")

    def retire_locked(self) -> None:
        """The session was deleted: every state is closed and gives its memory back, every realtime
        connection is ended, and a state built from now on (a request whose body was still arriving)
        charges nothing."""
        self.clear_locked()
        self._budget = None
        self._retired = True
        connections, self._connections = list(self._connections), weakref.WeakSet()
        for connection in connections:
            connection.session_deleted()

    def clear_locked(self, config: SessionConfig | None = None) -> None:
        """Reset or configure (lock held, ``config`` the configuration now in force): each state is renewed
        for it where it can be, else closed and its share given back. Without ``config`` (delete) every
        state is closed."""
        previous, shares = self._states, self._shares
        self._states, self._shares = {}, {}
        for key, state in previous.items():
            renew = getattr(state, "renew", None) if config is not None else None
            renewed = renew(config) if renew is not None else None
            if renewed is not None:
                self._states[key] = renewed
                self._shares[key] = shares[key]
                continue
            if renew is None:
                state.close()
            shares[key].detach()
