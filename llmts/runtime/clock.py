"""Injected time and identity sources, so the runtime never reads the wall clock or ``os.urandom`` itself."""

from __future__ import annotations

import os
import random
import time
from typing import Protocol

__all__ = ["Clock", "IdSource", "RandomIds", "SystemClock"]


class Clock(Protocol):
    def now(self) -> float: ...

    def monotonic(self) -> float: ...


class IdSource(Protocol):
    def new_hex(self, nbytes: int) -> str: ...


class SystemClock:
    def now(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()


class RandomIds:
    """Wire ids (completion, message, item ids): unique and unpredictable enough for tests, but not
    secrets, so a seeded PRNG (re-seeded from the OS per instance) instead of a syscall per id."""

    def __init__(self) -> None:
        self._random = random.Random(os.urandom(16))

    def new_hex(self, nbytes: int) -> str:
        return self._random.randbytes(nbytes).hex()
