"""A connected official MCP client for a session's scripted MCP server (docs/mcp.md, "Python API").

The ``mcp`` package is imported on first use, and both of its majors work: mcp 2.x (its transport takes
an ``httpx2`` client) and mcp 1.x (an ``httpx`` client). The session is in the URL (``/sessions/{id}``),
so no header is needed; ``headers`` adds any of your own.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import AsyncIterator
from datetime import timedelta
from importlib.metadata import version
from typing import Any

__all__ = ["connect_mcp", "mcp_major"]


def mcp_major() -> int:
    """The installed ``mcp`` package's major version."""
    return int(version("mcp").split(".", 1)[0])


@contextlib.asynccontextmanager
async def connect_mcp(
    url: str,
    *,
    headers: dict[str, str] | None = None,
    timeout: float = 30.0,
    read_timeout: float = 300.0,
    **session_options: Any,
) -> AsyncIterator[Any]:
    """An initialized ``mcp.ClientSession`` on the Streamable HTTP endpoint ``url``; ``session_options``
    go to ``ClientSession`` (``elicitation_callback``, ``sampling_callback``, ``list_roots_callback``,
    ``logging_callback``, ``message_handler``, ``read_timeout_seconds``...; seconds as a number work with
    both majors). Enter and leave it in one task (the SDK's task groups require it)."""
    mcp: Any = importlib.import_module("mcp")
    seconds = session_options.get("read_timeout_seconds")
    if mcp_major() < 2 and isinstance(seconds, (int, float)):  # 1.x takes a timedelta
        session_options["read_timeout_seconds"] = timedelta(seconds=seconds)
    transport_module: Any = importlib.import_module("mcp.client.streamable_http")
    # Each major's transport takes its own HTTP client library.
    http: Any = importlib.import_module("httpx2" if mcp_major() >= 2 else "httpx")
    client = http.AsyncClient(headers=headers or {}, timeout=http.Timeout(timeout, read=read_timeout))
    async with contextlib.AsyncExitStack() as stack:
        await stack.enter_async_context(client)
        streams = await stack.enter_async_context(
            transport_module.streamable_http_client(url, http_client=client)
        )
        session = await stack.enter_async_context(
            mcp.ClientSession(streams[0], streams[1], **session_options)
        )
        await session.initialize()
        yield session
