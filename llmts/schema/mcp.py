"""The ``mcp_servers`` configuration section (docs/mcp.md): a session's scripted MCP servers.

Names follow the contract: a server has ``tools``, ``resources``, ``resource_templates`` and ``prompts``;
a tool's ``results`` are consumed in order (``terminal_policy`` as scenarios), each one text, content
blocks or a JSON-RPC error, optionally gated by ``when.arguments`` (a subset of the call's arguments),
delayed, preceded by progress notifications and by server-to-client requests (``elicit``, ``sample``,
``list_roots``), and delivered with a ``stream_delivery`` fault plan on its SSE answer.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from llmts.schema.faults import StreamDelivery
from llmts.schema.fixtures import LIMITS, TerminalPolicy
from llmts.schema.peer_limits import PEER_LIMITS

__all__ = [
    "McpElicit",
    "McpError",
    "McpProgress",
    "McpPrompt",
    "McpPromptArgument",
    "McpPromptMessage",
    "McpResource",
    "McpResourceTemplate",
    "McpSample",
    "McpServer",
    "McpTool",
    "McpToolResult",
    "McpWhen",
    "check_unique_names",
]

_STRICT = ConfigDict(defer_build=True, extra="forbid", frozen=True, populate_by_name=True)
_NAME = Field(min_length=1, max_length=LIMITS["identifier_chars"], pattern=r"^[A-Za-z0-9_.\-]+$")
_TEXT_CHARS = PEER_LIMITS["mcp_text_chars"]
_BLOCKS = PEER_LIMITS["mcp_content_blocks"]


def check_unique_names(items: list[Any], what: str, attribute: str = "name") -> None:
    """Names a client looks items up by must be unique within their list."""
    seen: set[str] = set()
    for index, item in enumerate(items):
        name = getattr(item, attribute)
        if name in seen:
            raise ValueError(f"{what}[{index}].{attribute} {name!r} is used twice")
        seen.add(name)


class McpError(BaseModel):
    """A JSON-RPC error answer (``code`` as JSON-RPC defines it, e.g. -32602 invalid params)."""

    model_config = _STRICT

    code: int = Field(ge=-(2**31), le=2**31 - 1)
    message: str = Field(min_length=1, max_length=4096)
    data: Any = None


class McpProgress(BaseModel):
    """One ``notifications/progress`` sent before the result (when the call carried a progress token)."""

    model_config = _STRICT

    progress: float
    total: float | None = None
    message: str | None = Field(default=None, max_length=4096)


class McpElicit(BaseModel):
    """An ``elicitation/create`` request the server sends before the result; the client's answer is
    journaled (``client_answers``)."""

    model_config = _STRICT

    message: str = Field(min_length=1, max_length=_TEXT_CHARS)
    requested_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})


class McpSample(BaseModel):
    """A ``sampling/createMessage`` request the server sends before the result. ``messages`` are MCP
    sampling messages (``{"role", "content"}``); a plain string becomes one user text message."""

    model_config = _STRICT

    messages: list[dict[str, Any]] | str = Field(min_length=1)
    max_tokens: int = Field(default=256, ge=1, le=1_000_000)
    system_prompt: str | None = Field(default=None, max_length=_TEXT_CHARS)


class McpWhen(BaseModel):
    """A result answers only calls whose arguments contain ``arguments`` (a structural subset)."""

    model_config = _STRICT

    arguments: dict[str, Any]


class McpToolResult(BaseModel):
    """One scripted answer to ``tools/call``: exactly one of ``text``, ``content``, ``error``."""

    model_config = _STRICT

    text: str | None = Field(default=None, max_length=_TEXT_CHARS)
    content: list[dict[str, Any]] | None = Field(default=None, max_length=_BLOCKS)
    structured: dict[str, Any] | None = None
    is_error: bool = False
    error: McpError | None = None
    when: McpWhen | None = None
    delay_ms: int = Field(default=0, ge=0, le=LIMITS["delay_ms"])
    progress: list[McpProgress] = Field(
        default_factory=list, max_length=PEER_LIMITS["mcp_progress_notifications"]
    )
    elicit: McpElicit | None = None
    sample: McpSample | None = None
    list_roots: bool = False
    stream_delivery: StreamDelivery | None = None

    @model_validator(mode="after")
    def _one_answer(self) -> McpToolResult:
        given = [name for name in ("text", "content", "error") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError("a tool result needs exactly one of text, content, error")
        if self.error is not None and (self.structured is not None or self.is_error):
            raise ValueError("error is a JSON-RPC error; structured and is_error belong to results")
        return self


class McpTool(BaseModel):
    model_config = _STRICT

    name: str = _NAME
    title: str | None = Field(default=None, max_length=LIMITS["identifier_chars"])
    description: str | None = Field(default=None, max_length=_TEXT_CHARS)
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    output_schema: dict[str, Any] | None = None
    annotations: dict[str, Any] | None = None
    results: list[McpToolResult] = Field(default_factory=list, max_length=PEER_LIMITS["mcp_results_per_tool"])
    terminal_policy: TerminalPolicy = "reject"


class McpResource(BaseModel):
    """A resource: exactly one of ``text`` and ``blob`` (base64)."""

    model_config = _STRICT

    uri: str = Field(min_length=1, max_length=4096)
    name: str = Field(min_length=1, max_length=LIMITS["identifier_chars"])
    title: str | None = Field(default=None, max_length=LIMITS["identifier_chars"])
    description: str | None = Field(default=None, max_length=_TEXT_CHARS)
    mime_type: str | None = Field(default=None, max_length=256)
    text: str | None = Field(default=None, max_length=_TEXT_CHARS)
    blob: str | None = Field(default=None, max_length=_TEXT_CHARS)

    @model_validator(mode="after")
    def _one_body(self) -> McpResource:
        if (self.text is None) == (self.blob is None):
            raise ValueError("a resource needs exactly one of text, blob")
        return self


class McpResourceTemplate(BaseModel):
    model_config = _STRICT

    uri_template: str = Field(min_length=1, max_length=4096)
    name: str = Field(min_length=1, max_length=LIMITS["identifier_chars"])
    title: str | None = Field(default=None, max_length=LIMITS["identifier_chars"])
    description: str | None = Field(default=None, max_length=_TEXT_CHARS)
    mime_type: str | None = Field(default=None, max_length=256)


class McpPromptArgument(BaseModel):
    model_config = _STRICT

    name: str = Field(min_length=1, max_length=LIMITS["identifier_chars"])
    description: str | None = Field(default=None, max_length=_TEXT_CHARS)
    required: bool = False


class McpPromptMessage(BaseModel):
    """A prompt message; ``text`` is shorthand for one text content block. ``{argument}`` placeholders
    in text are filled from ``prompts/get`` arguments."""

    model_config = _STRICT

    role: Literal["user", "assistant"]
    text: str | None = Field(default=None, max_length=_TEXT_CHARS)
    content: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _one_content(self) -> McpPromptMessage:
        if (self.text is None) == (self.content is None):
            raise ValueError("a prompt message needs exactly one of text, content")
        return self


class McpPrompt(BaseModel):
    model_config = _STRICT

    name: str = Field(min_length=1, max_length=LIMITS["identifier_chars"])
    title: str | None = Field(default=None, max_length=LIMITS["identifier_chars"])
    description: str | None = Field(default=None, max_length=_TEXT_CHARS)
    arguments: list[McpPromptArgument] = Field(default_factory=list, max_length=64)
    messages: list[McpPromptMessage] = Field(
        default_factory=list, max_length=PEER_LIMITS["mcp_messages_per_prompt"]
    )


class McpServer(BaseModel):
    """One scripted MCP server, answering at ``/mcp/{name}`` (Streamable HTTP) and ``/mcp/{name}/sse``."""

    model_config = _STRICT

    name: str = _NAME
    instructions: str | None = Field(default=None, max_length=_TEXT_CHARS)
    version: str = Field(default="1.0.0", min_length=1, max_length=64)
    tools: list[McpTool] = Field(default_factory=list, max_length=PEER_LIMITS["mcp_tools_per_server"])
    resources: list[McpResource] = Field(
        default_factory=list, max_length=PEER_LIMITS["mcp_resources_per_server"]
    )
    resource_templates: list[McpResourceTemplate] = Field(
        default_factory=list, max_length=PEER_LIMITS["mcp_resource_templates_per_server"]
    )
    prompts: list[McpPrompt] = Field(default_factory=list, max_length=PEER_LIMITS["mcp_prompts_per_server"])
    # Items per page of the list methods (``nextCursor``); None: one page.
    page_size: int | None = Field(default=None, ge=1, le=1024)

    @model_validator(mode="after")
    def _unique(self) -> McpServer:
        check_unique_names(self.tools, "tools")
        check_unique_names(self.resources, "resources", "uri")
        check_unique_names(self.prompts, "prompts")
        return self
