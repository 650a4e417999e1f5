"""The worker's C allocator: large buffers are mapped and unmapped on their own, and freed heap pages
go back to the system when a session is deleted or reset (docs/design/memory.md, "Memory beyond the
accounted bytes").

glibc's ``malloc`` raises its mmap threshold to the size of the largest mapped block freed so far (up to
32 MiB). After one large request body, every later buffer up to that size (the body, its parsed text,
orjson's output, which keeps a capacity many times its length) comes from the heap, whose pages stay
resident once touched and return to the system only from its top. A flood of 1 MB requests then left
the worker at several hundred MB of RSS with 16 MB accounted. Setting the threshold once fixes it (and
turns off the dynamic adjustment): blocks from ``MMAP_THRESHOLD_BYTES`` up are mapped, only their
touched pages are resident, and ``free`` unmaps them. Smaller blocks (journal previews, greenlet stack
copies, small requests) stay on the heap, so small requests pay nothing. ``trim`` hands the heap's free
pages back (``malloc_trim``) after a session's memory was released.

Other C libraries (musl, macOS) have no ``mallopt``/``malloc_trim``: both functions do nothing there.
"""

from __future__ import annotations

import ctypes
from typing import Any

__all__ = ["MMAP_THRESHOLD_BYTES", "TRIM_AFTER_BYTES", "trim", "trim_after", "tune"]

# Blocks of at least this size are mapped on their own. 128 KiB (glibc's initial value) cost a 1 MB
# request ~30 % more CPU in page faults; 1 MiB still maps orjson's and yyjson's many-times-oversized
# buffers for any text over ~64 KB, while bodies under 1 MiB reuse heap pages (benchmarks/README.md).
MMAP_THRESHOLD_BYTES = 1024 * 1024
# A session that gave back at least this many accounted bytes (delete, reset) is followed by
# a ``trim``; smaller ones are not worth its walk of the heap (about a millisecond).
TRIM_AFTER_BYTES = 1024 * 1024
_M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter numbers (malloc.h)
_M_TRIM_THRESHOLD = -1


def _libc() -> Any:
    try:
        libc = ctypes.CDLL(None)  # the interpreter's own symbols: its C library's malloc
    except OSError:
        return None
    if not hasattr(libc, "mallopt") or not hasattr(libc, "malloc_trim"):
        return None
    return libc


_LIBC = _libc()


def tune() -> bool:
    """Fix glibc's mmap and trim thresholds for this process; whether the C library took them."""
    if _LIBC is None:
        return False
    mapped = _LIBC.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)
    trimmed = _LIBC.mallopt(_M_TRIM_THRESHOLD, MMAP_THRESHOLD_BYTES)
    return bool(mapped and trimmed)


def trim() -> None:
    """Give the heap's free pages back to the system (a walk of the free lists: call it rarely)."""
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


def trim_after(freed: int) -> None:
    """``trim`` when ``freed`` accounted bytes (of the process memory budget) were just given back."""
    if freed >= TRIM_AFTER_BYTES:
        trim()
