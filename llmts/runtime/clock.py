"""Injected time and identity sources, so the runtime never reads the wall clock or ``os.urandom`` itself."""

from __future__ import annotations

import os
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
    def new_hex(self, nbytes: int) -> str:
        return os.urandom(nbytes).hex()
