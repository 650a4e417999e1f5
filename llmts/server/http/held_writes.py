"""Writes a client is slow to read, charged to the process memory budget while they wait (docs/journal.md,
"Process memory budget"): shared by the connection loop (connection.py) and the ``gevent_pywsgi`` handler
(pywsgi_handler.py)."""

from __future__ import annotations

from typing import Any

from llmts.runtime.memory import MemoryBudget
from llmts.transport.abort import ConnectionAborted
from llmts.transport.deadline import Deadline

__all__ = ["memory_budget", "send_held"]


def memory_budget(app: Any) -> MemoryBudget | None:
    """The process memory budget of llmts's app (None for another WSGI app)."""
    budget = getattr(getattr(app, "registry", None), "memory", None)
    return budget if isinstance(budget, MemoryBudget) else None


def send_held(
    sock: Any, rest: memoryview, deadline: Deadline, budget: MemoryBudget | None, held: int
) -> None:
    """Send what the socket buffer refused under the write deadline, the ``held`` bytes of this write
    charged to ``budget`` while it waits: a client that does not read keeps them alive until the write
    timeout. A write the budget cannot hold ends the connection at once, journaled as
    ``llm_test_server_memory_exhausted``."""
    if budget is not None and not budget.hold(held):
        deadline.expired = True
        deadline.ended_by = "memory_budget"
        raise ConnectionAborted("llmts dropped a client that stopped reading: the memory budget is full")
    deadline.arm()
    try:
        sock.sendall(rest)
    finally:
        deadline.disarm()
        if budget is not None:
            budget.release(held)
