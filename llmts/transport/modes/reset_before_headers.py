"""``reset_before_headers``: reset the connection (RST) before the status line."""

from __future__ import annotations

from typing import Any

from llmts.transport.abort import ConnectionAborted, reset_connection
from llmts.transport.modes.base import drops_connection

__all__ = ["drop"]


@drops_connection("reset_before_headers")
def drop(sock: Any) -> ConnectionAborted:
    return reset_connection(sock)
