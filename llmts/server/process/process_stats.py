"""Process-level diagnostics for leak checks: greenlets, open sockets, resident memory, the accounted
memory of every session against the process budget, and whether the request path is compiled
(``GET /admin-api/process``, docs/server.md, "Memory")."""

from __future__ import annotations

import gc
import importlib.machinery
import os
import sys
from typing import Any

from llmts.runtime.memory import MemoryBudget

__all__ = ["process_stats"]


def _greenlets() -> int:
    try:
        from greenlet import greenlet
    except ImportError:  # pragma: no cover - gevent depends on greenlet
        return 0
    return sum(1 for obj in gc.get_objects() if isinstance(obj, greenlet) and not obj.dead)


def _open_sockets() -> int:
    count = 0
    try:
        for name in os.listdir("/proc/self/fd"):
            try:
                if os.readlink(f"/proc/self/fd/{name}").startswith("socket:"):
                    count += 1
            except OSError:
                continue
    except OSError:
        return -1
    return count


def _rss_bytes() -> int:
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return -1


def _compiled() -> bool:
    """Whether the request path runs as mypyc's extensions (docs/design/compiled.md): the provider path's
    module was loaded from one."""
    module = sys.modules.get("llmts.server.provider_path")
    path = getattr(module, "__file__", None) or ""
    return path.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))


def process_stats(memory: MemoryBudget | None = None, sessions: int | None = None) -> dict[str, Any]:
    """Live greenlets, open socket descriptors and RSS of the worker (-1 where the OS cannot tell), plus
    the session count and the memory budget's report when given."""
    gc.collect()
    stats: dict[str, Any] = {
        "pid": os.getpid(),
        "compiled": _compiled(),
        "greenlets": _greenlets(),
        "open_sockets": _open_sockets(),
        "rss_bytes": _rss_bytes(),
    }
    if sessions is not None:
        stats["sessions"] = sessions
    if memory is not None:
        stats["memory"] = memory.report()
    return stats
