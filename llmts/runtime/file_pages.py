"""Give back the pages of a file that a native library read once while it built its own tables.

bpe-openai's extension carries its vocabularies in its read-only data (about 70 MB): building the
o200k_base tokenizer reads 31 MiB of it into the process, and counting never reads it again, yet the
pages stay in the worker's resident set until the kernel is short of memory. ``page_out`` drops them from
the process now (``madvise(MADV_DONTNEED)``): they stay in the page cache, shared and reclaimable, and a
page read again is faulted back in from the file. Only mappings that are read-only, not executable and
hold no page the process wrote (``Anonymous: 0 kB`` in ``/proc/self/smaps``; a relocated page would
lose its relocations) are advised. ``MADV_PAGEOUT`` would be safe on any mapping but skips pages that
another process maps too (a second worker, a test process), so it gave nothing back there. Elsewhere
than Linux it does nothing.
Why by hand: no maintained package wraps ``madvise`` on a range the process did not map itself (Python's
``mmap.madvise`` needs its own ``mmap`` object). docs/design/memory.md, "Memory beyond the accounted bytes".
"""

from __future__ import annotations

import ctypes
import sys
from pathlib import Path
from typing import Any

__all__ = ["MADV_DONTNEED", "page_out", "untouched_read_only_ranges"]

MADV_DONTNEED = 4  # linux/mman-common.h
_SMAPS = Path("/proc/self/smaps")


def _libc() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    madvise = getattr(libc, "madvise", None)
    if madvise is None:
        return None
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    madvise.restype = ctypes.c_int
    return libc


_LIBC = _libc()


def untouched_read_only_ranges(path: Path, smaps: str | None = None) -> list[tuple[int, int]]:
    """The (start, end) addresses of this process's mappings of ``path`` that are read-only, not
    executable and hold no page the process wrote (``Anonymous: 0 kB``): pages that are exactly the
    file's. ``smaps`` is the text of ``/proc/self/smaps`` (read when None)."""
    if smaps is None:
        try:
            smaps = _SMAPS.read_text()
        except OSError:
            return []
    wanted = str(path)
    ranges: list[tuple[int, int]] = []
    current: tuple[int, int] | None = None
    for line in smaps.splitlines():
        fields = line.split(maxsplit=5)
        if fields and "-" in fields[0] and len(fields) >= 5 and not fields[0].endswith(":"):
            current = None
            if len(fields) == 6 and fields[5] == wanted and fields[1] in ("r--p", "r--s"):
                start, _, end = fields[0].partition("-")
                current = (int(start, 16), int(end, 16))
        elif current is not None and fields[:1] == ["Anonymous:"]:
            if fields[1:2] == ["0"]:
                ranges.append(current)
            current = None
    return ranges


def page_out(path: Path) -> int:
    """Drop the resident pages of ``path``'s untouched read-only mappings from this process; the number
    of bytes advised (0 where the advice is unavailable or refused)."""
    if _LIBC is None:
        return 0
    advised = 0
    for start, end in untouched_read_only_ranges(path.resolve()):
        if _LIBC.madvise(start, end - start, MADV_DONTNEED) == 0:
            advised += end - start
    return advised
