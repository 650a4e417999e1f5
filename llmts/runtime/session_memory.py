"""One session part's share of the process memory budget (``MemoryBudget``, llmts/runtime/memory.py).

Each part that retains what the budget never evicts (stored objects, conversation state, a recording,
the configuration, each MCP server's and A2A agent's state) owns one share: it makes room before it
grows and charges its new size after every change, so what the session has charged is always the sum of
its parts' shares.
"""

from __future__ import annotations

from typing import Literal

from llmts.errors import MemoryBudgetExceeded
from llmts.runtime.memory import MemoryBudget

__all__ = ["MemoryShare", "ShareKind"]


def _exhausted(budget: MemoryBudget, what: str, growth: int) -> MemoryBudgetExceeded:
    return MemoryBudgetExceeded(
        f"{what} needs {growth} more bytes but the server's memory budget "
        f"(--max-memory, {budget.max_bytes} bytes) is full of stored objects, conversation "
        "state, MCP and A2A state and configurations; delete or reset sessions"
    )


ShareKind = Literal["store", "conversation", "recording", "configuration", "peer", "realtime"]


class MemoryShare:
    """The bytes one part has charged to the budget for one kind of state (None: no budget, as in unit
    tests). Not thread-safe: its part calls it under the session lock (an MCP server's or A2A agent's
    state, which has a share of its own, from its own code; the gevent worker never switches inside a
    charge)."""

    __slots__ = ("_budget", "_kind", "charged")

    def __init__(self, budget: MemoryBudget | None, kind: ShareKind) -> None:
        self._budget = budget
        self._kind = kind
        self.charged = 0

    def make_room(self, growth: int, what: str) -> None:
        """Raise 507 when ``growth`` more bytes cannot fit the process budget even without journals."""
        budget = self._budget
        if budget is not None and growth > 0 and not budget.make_room(growth):
            raise _exhausted(budget, what, growth)

    def check_fits(self, growth: int, what: str) -> None:
        """Raise 507 (counted) when ``growth`` more bytes could not fit even with every journal entry
        evicted; evict nothing either way (``evict_for`` does, once the caller changed its state)."""
        budget = self._budget
        if budget is not None and growth > 0 and not budget.fits_without_journals(growth):
            budget.refused += 1
            raise _exhausted(budget, what, growth)

    def evict_for(self, growth: int) -> None:
        """Evict journal entries, oldest first across sessions, until ``growth`` more bytes fit (as far
        as idle journals allow: a refusal is ``check_fits``'s, made before)."""
        budget = self._budget
        if budget is not None and growth > 0:
            budget.evict_for(growth)

    def fits(self, growth: int) -> bool:
        """Whether ``growth`` more bytes fit (evicting journal entries for them); a refusal is counted."""
        budget = self._budget
        return budget is None or budget.make_room(growth)

    def charge(self, retained: int) -> None:
        """The part now retains ``retained`` bytes: charge the change."""
        budget = self._budget
        if budget is None:
            return
        delta = retained - self.charged
        if delta:
            budget.state_changed(self._kind, delta)
        self.charged = retained

    def grow(self, delta: int) -> None:
        """The part now retains ``delta`` bytes more (negative: fewer), never refused: journal entries
        are evicted for the room as far as they can be (for a part its own limits bound)."""
        budget = self._budget
        if budget is not None and delta > 0:
            budget.evict_for(delta)
        self.charge(self.charged + delta)

    def detach(self) -> None:
        """The session was deleted: give everything back and charge nothing more."""
        self.charge(0)
        self._budget = None
