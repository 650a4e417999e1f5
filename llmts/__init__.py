"""llmts: an LLM test server for the official provider SDKs."""

from __future__ import annotations

__version__ = "0.1.0"

from llmts.client import LlmTestServer, ServerError, SessionClient
from llmts.schema import ConfigBuilder, SessionConfig

__all__ = ["ConfigBuilder", "LlmTestServer", "ServerError", "SessionClient", "SessionConfig", "__version__"]
