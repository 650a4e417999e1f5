"""``empty_response``: close the connection (FIN) without a status line."""

from __future__ import annotations

from typing import Any

from llmts.transport.abort import ConnectionAborted, close_silently
from llmts.transport.modes.base import drops_connection

__all__ = ["drop"]


@drops_connection("empty_response")
def drop(sock: Any) -> ConnectionAborted:
    return close_silently(sock)
