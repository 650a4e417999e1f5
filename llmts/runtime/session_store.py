"""The session part that keeps the objects providers store (OpenAI stored responses, image URLs' bytes):
one ``BoundedStore`` per provider namespace, charged to the process memory budget.

Locking: ``put``, ``get`` and ``delete`` take the session lock (a put makes room in the budget and charges
it in the same step); the ``*_locked`` methods are the session's, called with that lock held.
"""

from __future__ import annotations

import threading
from typing import Any

from llmts.runtime.memory import MemoryBudget
from llmts.runtime.session_memory import MemoryShare
from llmts.runtime.store import BoundedStore

__all__ = ["SessionStore"]


class SessionStore:
    """Stored objects by ``namespace`` and key, each namespace bounded by count and bytes (oldest evicted
    first: llmts/runtime/store.py); emptied by reset, configure and delete."""

    __slots__ = ("_lock", "_share", "_stores")

    def __init__(self, lock: threading.Lock, budget: MemoryBudget | None) -> None:
        self._lock = lock
        self._share = MemoryShare(budget, "store")
        self._stores: dict[str, BoundedStore] = {}

    @property
    def memory_charged(self) -> int:
        """What this part has charged to the memory budget (a reconfigure frees it)."""
        return self._share.charged

    @property
    def retained_bytes(self) -> int:
        return sum(store.retained_bytes for store in self._stores.values())

    def put(self, namespace: str, key: str, value: Any, size: int) -> None:
        """Keep ``value`` (accounted as ``size`` bytes); 507 when the memory budget cannot make room."""
        with self._lock:
            store = self._stores.get(namespace)
            if store is None:
                store = self._stores[namespace] = BoundedStore()
            if size <= store.max_bytes:  # a larger one is not kept: nothing to make room for
                self._share.make_room(size, "a stored object")
            store.put(key, value, size)
            self._share.charge(self.retained_bytes)

    def get(self, namespace: str, key: str) -> Any | None:
        """The stored value, or None when unknown or evicted."""
        with self._lock:
            store = self._stores.get(namespace)
            return store.get(key) if store is not None else None

    def delete(self, namespace: str, key: str) -> bool:
        """Whether ``key`` was there."""
        with self._lock:
            store = self._stores.get(namespace)
            deleted = store.delete(key) if store is not None else False
            self._share.charge(self.retained_bytes)
            return deleted

    def clear_locked(self) -> None:
        for store in self._stores.values():
            store.clear()
        self._share.charge(0)

    def retire_locked(self) -> None:
        self._stores.clear()
        self._share.detach()
