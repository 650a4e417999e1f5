"""llmts: an LLM test server for the official provider SDKs.

The names below load on first use (PEP 562): every process that imports any ``llmts`` module runs this
file first, and the server's gunicorn arbiter, which serves nothing itself, stays at ~21 MiB instead of
loading the client API and pydantic models it never uses (docs/architecture.md, "The two processes").
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from llmts.client import LlmTestServer, ServerError, SessionClient
    from llmts.schema import ConfigBuilder, SessionConfig

__all__ = ["ConfigBuilder", "LlmTestServer", "ServerError", "SessionClient", "SessionConfig", "__version__"]

_HOMES = {
    "ConfigBuilder": "llmts.schema",
    "LlmTestServer": "llmts.client",
    "ServerError": "llmts.client",
    "SessionClient": "llmts.client",
    "SessionConfig": "llmts.schema",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
