"""The session part that holds its conversation graphs' state (``ConversationBook``; None without
``conversations`` in the configuration), charged to the process memory budget.

Locking: ``status``, ``commit`` and ``rollback`` take the session lock; ``book`` and the ``*_locked``
methods are the session's, used with that lock held (a reservation is made in the same step as the
selection that chose its graph: ``Session.admit``).
"""

from __future__ import annotations

import threading

from llmts.errors import MemoryBudgetExceeded
from llmts.runtime.conversations import ConversationBook, Ticket
from llmts.runtime.conversations.book import Inputs, Verdict
from llmts.runtime.memory import MemoryBudget
from llmts.runtime.session_memory import MemoryShare
from llmts.schema.conversations import ConversationStatus
from llmts.schema.neutral import Completion

__all__ = ["SessionConversations"]


class SessionConversations:
    """The session's conversation state: reservations, commits and rollbacks, and their status."""

    __slots__ = ("_lock", "_share", "book")

    def __init__(self, lock: threading.Lock, budget: MemoryBudget | None) -> None:
        self._lock = lock
        self._share = MemoryShare(budget, "conversation")
        self.book: ConversationBook | None = None

    @property
    def memory_charged(self) -> int:
        """What this part has charged to the memory budget (a reconfigure frees it)."""
        return self._share.charged

    def status(self, conversation_id: str | None = None) -> list[ConversationStatus]:
        """Every conversation's state in every graph (or one conversation id's)."""
        with self._lock:
            book = self.book
            return book.status(conversation_id) if book is not None else []

    def commit(self, ticket: Ticket, completion: Completion | None) -> None:
        """Settle a reservation with its answer (None: a committed scripted error); the graph advances."""
        with self._lock:
            if self.book is not None:
                self.book.commit(ticket, completion)
                self._share.charge(self.book.retained_bytes)

    def rollback(self, ticket: Ticket) -> None:
        """Undo a reservation that never ran (a no-op for committed tickets)."""
        with self._lock:
            if self.book is not None:
                self.book.rollback(ticket)
                self._share.charge(self.book.retained_bytes)

    def reserve_locked(self, verdict: Verdict, inputs: Inputs) -> Ticket:
        """Reserve the chosen step; 507 (and nothing reserved) when its state does not fit the budget."""
        book = self.book
        assert book is not None
        ticket = book.reserve(verdict, inputs)
        try:
            self._share.make_room(ticket.delta_bytes, f"conversation step {ticket.step_id!r}")
        except MemoryBudgetExceeded:
            book.rollback(ticket)
            raise
        self._share.charge(book.retained_bytes)
        return ticket

    def install_locked(self, book: ConversationBook | None) -> None:
        self.book = book

    def clear_locked(self) -> None:
        if self.book is not None:
            self.book.clear()
        self._share.charge(self.book.retained_bytes if self.book is not None else 0)

    def retire_locked(self) -> None:
        self.book = None
        self._share.detach()
