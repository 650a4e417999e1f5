"""A bounded per-session store for objects a provider keeps (e.g. OpenAI stored responses).

Bounded by count and by bytes (the caller states each entry's size); the oldest entries are evicted
first. An entry larger than the whole byte bound is not kept and evicts nothing (it would have evicted
every other entry, then itself). Lookups of evicted, unkept or unknown ids miss, which providers report in
their own 404 shape.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

__all__ = ["MAX_STORED_BYTES", "MAX_STORED_OBJECTS", "BoundedStore"]

MAX_STORED_OBJECTS = 1024
MAX_STORED_BYTES = 64 * 1024 * 1024


class BoundedStore:
    """Not thread-safe on its own: the owning session guards it with its lock."""

    def __init__(self, max_entries: int = MAX_STORED_OBJECTS, max_bytes: int = MAX_STORED_BYTES) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._entries: OrderedDict[str, tuple[Any, int]] = OrderedDict()
        self._bytes = 0
        self.evicted = 0

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def retained_bytes(self) -> int:
        return self._bytes

    def put(self, key: str, value: Any, size: int) -> None:
        self.delete(key)
        if size > self.max_bytes:
            self.evicted += 1  # counted as gone at once
            return
        self._entries[key] = (value, size)
        self._bytes += size
        while self._entries and (len(self._entries) > self.max_entries or self._bytes > self.max_bytes):
            _, (_, evicted_size) = self._entries.popitem(last=False)
            self._bytes -= evicted_size
            self.evicted += 1

    def get(self, key: str) -> Any | None:
        entry = self._entries.get(key)
        return entry[0] if entry is not None else None

    def delete(self, key: str) -> bool:
        entry = self._entries.pop(key, None)
        if entry is None:
            return False
        self._bytes -= entry[1]
        return True

    def clear(self) -> None:
        self._entries.clear()
        self._bytes = 0
