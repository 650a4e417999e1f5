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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["MADV_DONTNEED", "Mapping", "mappings", "page_out", "untouched_read_only_ranges"]

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


@dataclass(slots=True)
class Mapping:
    """One mapping of ``/proc/self/smaps``: its addresses, permissions (``r--p``), file (empty when
    anonymous) and its sizes in kB by name (``Rss``, ``Anonymous``...)."""

    start: int
    end: int
    permissions: str
    path: str
    kib: dict[str, int] = field(default_factory=dict)


def mappings(smaps: str | None = None) -> list[Mapping]:
    """This process's mappings, from ``smaps`` (the text of ``/proc/self/smaps``; read when None, and
    none where it cannot be read)."""
    if smaps is None:
        try:
            smaps = _SMAPS.read_text()
        except OSError:
            return []
    found: list[Mapping] = []
    for line in smaps.splitlines():
        fields = line.split(maxsplit=5)
        if not fields:
            continue
        if fields[0].endswith(":"):  # a size ("Rss:   12 kB") or a flag line of the mapping above
            if found and len(fields) > 1 and fields[1].isdigit():
                found[-1].kib[fields[0][:-1]] = int(fields[1])
            continue
        start, _, end = fields[0].partition("-")
        path = fields[5] if len(fields) == 6 else ""
        found.append(Mapping(int(start, 16), int(end, 16), fields[1], path))
    return found


def untouched_read_only_ranges(path: Path, smaps: str | None = None) -> list[tuple[int, int]]:
    """The (start, end) addresses of this process's mappings of ``path`` that are read-only, not
    executable and hold no page the process wrote (``Anonymous: 0 kB``): pages that are exactly the
    file's."""
    wanted = str(path)
    return [
        (mapping.start, mapping.end)
        for mapping in mappings(smaps)
        if mapping.path == wanted
        and mapping.permissions in ("r--p", "r--s")
        and mapping.kib.get("Anonymous") == 0
    ]


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
