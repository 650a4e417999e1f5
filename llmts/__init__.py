"""llmts: an LLM test server for the official provider SDKs.

The names below load on first use (PEP 562): every process that imports any ``llmts`` module runs this
file first, and the server's gunicorn arbiter, which serves nothing itself, stays at ~21 MiB instead of
loading the client API and pydantic models it never uses (docs/architecture.md, "The two processes").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from llmts.lazy_names import lazy_names as _lazy_names

__version__ = "0.1.0"

if TYPE_CHECKING:
    from llmts.client import LlmTestServer, ServerError, SessionClient
    from llmts.schema import ConfigBuilder, SessionConfig

__all__ = ["ConfigBuilder", "LlmTestServer", "ServerError", "SessionClient", "SessionConfig", "__version__"]

# Each home module and the public names it defines (the TYPE_CHECKING imports above, for run time).
_HOMES = {
    "llmts.client": ("LlmTestServer", "ServerError", "SessionClient"),
    "llmts.schema": ("ConfigBuilder", "SessionConfig"),
}


if not TYPE_CHECKING:
    __getattr__, __dir__ = _lazy_names(globals(), _HOMES, __all__)
