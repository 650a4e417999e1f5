"""Injected clock and id source for runtime unit tests."""

from __future__ import annotations


class FixedClock:
    def __init__(self, epoch: float = 1_700_000_000.0) -> None:
        self.epoch = epoch

    def now(self) -> float:
        return self.epoch

    def monotonic(self) -> float:
        return 1.0


class CountingIds:
    def __init__(self) -> None:
        self.count = 0

    def new_hex(self, nbytes: int) -> str:
        self.count += 1
        return f"{self.count:0{nbytes * 2}x}"
