"""The control API's plumbing shared by ``LlmTestServer`` and ``SessionClient``: its error, the
configuration payload, journal query strings and session ids; ``ControlChannel`` is what a session
client needs of its server (so ``session.py`` does not import ``server.py``)."""

from __future__ import annotations

import json
import secrets
import ssl
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Protocol

from llmts.schema.a2a_builder import A2aAgentBuilder
from llmts.schema.builder import ConfigBuilder, ConversationBuilder, ScenarioBuilder, StepBuilder
from llmts.schema.config import SessionConfig
from llmts.schema.journal import JournalQuery
from llmts.schema.mcp_builder import McpServerBuilder, McpToolBuilder

__all__ = [
    "DEFAULT_API_KEY",
    "SERVER_ENV",
    "SESSION_HEADER",
    "ConfigInput",
    "ControlChannel",
    "ServerError",
    "config_payload",
    "is_session_id",
    "new_session_id",
    "query_string",
    "server_error",
]

DEFAULT_API_KEY = "llmts-test-key"
SESSION_HEADER = "X-Llm-Test-Server-Session"
SERVER_ENV = frozenset(
    {
        "LLMTS_HOST",
        "LLMTS_PORT",
        "LLMTS_CONTROL_KEY",
        "LLMTS_FIXTURES",
        "LLMTS_MAX_BODY_BYTES",
        "LLMTS_MAX_SESSIONS",
        "LLMTS_WORKER_CLASS",
        "LLMTS_WORKERS",
        "LLMTS_METRICS_KEY",
        "LLMTS_DRAIN_SECONDS",
        "LLMTS_TLS",
        "LLMTS_TLS_CERT",
        "LLMTS_TLS_KEY",
        "LLMTS_TLS_DIR",
        "LLMTS_WS_MAX_MESSAGE_BYTES",
        "LLMTS_WS_IDLE_TIMEOUT",
        "LLMTS_WS_MAX_MESSAGES_PER_SECOND",
    }
)

ConfigInput = (
    SessionConfig
    | ConfigBuilder
    | ScenarioBuilder
    | ConversationBuilder
    | StepBuilder
    | A2aAgentBuilder[ConfigBuilder]
    | McpServerBuilder[ConfigBuilder]
    | McpToolBuilder[ConfigBuilder]
    | dict[str, Any]
)


def query_string(query: dict[str, Any], typed: JournalQuery | None = None) -> str:
    if typed is not None:
        query = {**typed.model_dump(mode="json", by_alias=True, exclude_defaults=True), **query}
    pairs = []
    for key, value in query.items():
        if value is None:
            continue
        name = "from" if key == "from_" else key
        text = ("true" if value else "false") if isinstance(value, bool) else str(value)
        pairs.append((name, text))
    return "?" + urllib.parse.urlencode(pairs) if pairs else ""


class ServerError(Exception):
    """A control API call failed; ``code``, ``message`` and ``details`` come from the server's error body."""

    def __init__(self, status: int, code: str, message: str, details: list[Any] | None = None) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.details = details or []


def config_payload(config: ConfigInput) -> dict[str, Any]:
    if not isinstance(config, ConfigBuilder | SessionConfig | dict):
        # Any part of a ``ConfigBuilder`` chain (scenario, step, A2A agent, MCP server or tool) leads back.
        parent = getattr(config, "config", None)
        if isinstance(parent, ConfigBuilder):
            config = parent
    if isinstance(config, ConfigBuilder):
        return config.to_dict()
    if isinstance(config, SessionConfig):
        payload: dict[str, Any] = config.model_dump(mode="json")
        return payload
    if isinstance(config, dict):
        return config
    raise TypeError(
        "configure() takes a SessionConfig, a ConfigBuilder (or a part of one) or a dict, "
        f"not {type(config).__name__}"
    )


def server_error(status: int, raw: bytes) -> ServerError:
    """The ``ServerError`` of an error answer, from the control envelope (or the start of its body)."""
    try:
        error = json.loads(raw)["error"]
    except (ValueError, KeyError, TypeError):
        return ServerError(status, "http_error", raw.decode(errors="replace")[:500])
    return ServerError(status, error.get("code", ""), error.get("message", ""), error.get("details"))


def new_session_id() -> str:
    """A fresh random session id (``ses_`` + 32 lowercase hex), as the server would mint it."""
    return "ses_" + secrets.token_hex(16)


def is_session_id(session_id: str) -> bool:
    return len(session_id) == 36 and session_id.startswith("ses_") and _HEX.issuperset(session_id[4:])


_HEX = frozenset("0123456789abcdef")


class ControlChannel(Protocol):
    """What a ``SessionClient`` calls on its server: the control API, one request at a time, and the trust
    its SDK clients need on ``https`` (docs/tls.md)."""

    url: str
    ca_file: str | None
    verify: bool

    def ssl_context(self) -> ssl.SSLContext | None: ...

    def request(
        self,
        method: str,
        path: str,
        payload: Any = None,
        *,
        session_id: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, dict[str, str], Any]: ...

    def request_text(self, method: str, path: str, *, session_id: str | None = None) -> str: ...
