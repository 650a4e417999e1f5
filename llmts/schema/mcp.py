"""The ``mcp_servers`` configuration section (docs/mcp.md): a session's scripted MCP servers.

Names follow the contract: a server has ``tools``, ``resources``, ``resource_templates`` and ``prompts``;
a tool's ``results`` are consumed in order (``terminal_policy`` as scenarios), each one text, content
blocks, structured content or a JSON-RPC error, optionally gated by ``when.arguments`` (a subset of the
call's arguments), delayed, preceded by progress notifications and by server-to-client requests
(``elicit``, ``sample``, ``list_roots``), delivered with a ``stream_delivery`` fault plan on its SSE answer
or with a protocol-level ``fault`` (``wrong_id``, ``notification_flood``, ``session_expired``).

Every model echoes what the user wrote (``GET /admin-api/configuration``): fields left out stay out.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, model_serializer, model_validator

from llmts.schema.faults import IN_STREAM_MODES, StreamDelivery
from llmts.schema.fixtures import LIMITS, TerminalPolicy
from llmts.schema.model_base import STRICT
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
    "ToolFault",
    "check_content_block",
    "check_unique_names",
]

_NAME = Field(min_length=1, max_length=LIMITS["identifier_chars"], pattern=r"^[A-Za-z0-9_.\-]+$")
_TEXT_CHARS = PEER_LIMITS["mcp_text_chars"]
_BLOCKS = PEER_LIMITS["mcp_content_blocks"]

# The protocol-level faults a tool result may script (docs/mcp.md, "Faults").
ToolFault = Literal["wrong_id", "notification_flood", "session_expired"]
_DEFAULT_FLOOD = 100

# What each MCP content block needs besides its ``type`` (the 2025-11-25 schema).
_BLOCK_FIELDS: dict[str, tuple[str, ...]] = {
    "text": ("text",),
    "image": ("data", "mimeType"),
    "audio": ("data", "mimeType"),
    "resource_link": ("uri", "name"),
    "resource": ("resource",),
}


def check_unique_names(items: list[Any], what: str, attribute: str = "name") -> None:
    """Names a client looks items up by must be unique within their list."""
    seen: set[str] = set()
    for index, item in enumerate(items):
        name = getattr(item, attribute)
        if name in seen:
            raise ValueError(f"{what}[{index}].{attribute} {name!r} is used twice")
        seen.add(name)


def check_content_block(block: dict[str, Any], where: str) -> None:
    """An MCP content block the official clients accept: a known ``type`` and the fields it needs."""
    kind = block.get("type")
    needs = _BLOCK_FIELDS.get(kind) if isinstance(kind, str) else None
    if needs is None:
        raise ValueError(f"{where}.type must be one of {', '.join(_BLOCK_FIELDS)}")
    for name in needs:
        if name not in block:
            raise ValueError(f"{where}: a {kind} block needs {name!r}")
    if kind == "text" and not isinstance(block["text"], str):
        raise ValueError(f"{where}.text must be a string")
    if kind == "resource":
        inner = block["resource"]
        if not isinstance(inner, dict) or "uri" not in inner or ("text" in inner) == ("blob" in inner):
            raise ValueError(f"{where}.resource needs a uri and exactly one of text, blob")


def _object_schema(schema: dict[str, Any], what: str) -> None:
    # mcp 2.x validates tools/list against the wire schema: a schema whose type is not "object" fails it.
    if schema.get("type") != "object":
        raise ValueError(f'{what} must be a JSON Schema with "type": "object"')


class _Echoed(BaseModel):
    """Serializes only the fields the user gave (and none that is None): the configuration echo."""

    model_config = STRICT

    @model_serializer(mode="wrap")
    def _drop_unset(self, handler: Any) -> dict[str, Any]:
        given = self.model_fields_set
        return {key: value for key, value in handler(self).items() if key in given and value is not None}


class McpError(_Echoed):
    """A JSON-RPC error answer (``code`` as JSON-RPC defines it, e.g. -32602 invalid params)."""

    code: int = Field(ge=-(2**31), le=2**31 - 1)
    message: str = Field(min_length=1, max_length=4096)
    data: Any = None


class McpProgress(_Echoed):
    """One ``notifications/progress`` sent before the result (when the call carried a progress token)."""

    progress: float
    total: float | None = None
    message: str | None = Field(default=None, max_length=4096)


class McpElicit(_Echoed):
    """An ``elicitation/create`` request the server sends before the result; the client's answer is
    journaled (``client_answers``)."""

    message: str = Field(min_length=1, max_length=_TEXT_CHARS)
    requested_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})

    @model_validator(mode="after")
    def _object(self) -> McpElicit:
        _object_schema(self.requested_schema, "requested_schema")
        return self


class McpSample(_Echoed):
    """A ``sampling/createMessage`` request the server sends before the result. ``messages`` are MCP
    sampling messages (``{"role", "content"}``); a plain string becomes one user text message."""

    messages: list[dict[str, Any]] | str = Field(
        min_length=1, max_length=PEER_LIMITS["mcp_messages_per_prompt"]
    )
    max_tokens: int = Field(default=256, ge=1, le=1_000_000)
    system_prompt: str | None = Field(default=None, max_length=_TEXT_CHARS)

    @model_validator(mode="after")
    def _messages(self) -> McpSample:
        if isinstance(self.messages, list):
            for index, message in enumerate(self.messages):
                if message.get("role") not in ("user", "assistant") or not isinstance(
                    message.get("content"), dict
                ):
                    raise ValueError(
                        f'messages[{index}] needs a role ("user" or "assistant") and a content block'
                    )
                check_content_block(message["content"], f"messages[{index}].content")
        return self

    def wire_messages(self) -> list[dict[str, Any]]:
        if isinstance(self.messages, str):
            return [{"role": "user", "content": {"type": "text", "text": self.messages}}]
        return list(self.messages)


class McpWhen(_Echoed):
    """A result answers only calls whose arguments contain ``arguments`` (a structural subset)."""

    arguments: dict[str, Any]


class McpToolResult(_Echoed):
    """One scripted answer to ``tools/call``: exactly one of ``text``, ``content``, ``error``, or
    ``structured`` alone (its JSON is then also the text, as the specification recommends)."""

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
    fault: ToolFault | None = None
    # ``notification_flood``: how many ``notifications/message`` precede the result (default 100).
    flood_count: int | None = Field(default=None, ge=1, le=PEER_LIMITS["mcp_flood_notifications"])

    @model_validator(mode="after")
    def _one_answer(self) -> McpToolResult:
        given = [name for name in ("text", "content", "error") if getattr(self, name) is not None]
        if len(given) > 1 or (not given and self.structured is None):
            raise ValueError("a tool result needs exactly one of text, content, error (or structured alone)")
        if self.error is not None and (self.structured is not None or self.is_error):
            raise ValueError("error is a JSON-RPC error; structured and is_error belong to results")
        for index, block in enumerate(self.content or ()):
            check_content_block(block, f"content[{index}]")
        self._check_fault()
        self._check_delivery()
        return self

    @property
    def asks_client(self) -> bool:
        return self.elicit is not None or self.sample is not None or self.list_roots

    @property
    def flood(self) -> int:
        """Notifications the ``notification_flood`` fault sends before the result."""
        if self.fault != "notification_flood":
            return 0
        return self.flood_count if self.flood_count is not None else _DEFAULT_FLOOD

    def _check_fault(self) -> None:
        if self.flood_count is not None and self.fault != "notification_flood":
            raise ValueError("flood_count goes with fault notification_flood")
        if self.fault == "session_expired" and (
            self.asks_client or self.progress or self.stream_delivery is not None
        ):
            raise ValueError(
                "fault session_expired answers the call with 404: it takes no progress, elicit, sample, "
                "list_roots or stream_delivery"
            )

    def _check_delivery(self) -> None:
        plan = self.stream_delivery
        if plan is None or plan.mode not in IN_STREAM_MODES:
            return
        # The SSE answer's content frames: its opening comment, then every notification before the result.
        frames = 1 + self.flood + len(self.progress)
        if plan.after_content_frames > frames:
            raise ValueError(
                f"stream_delivery.after_content_frames {plan.after_content_frames} is unreachable: the "
                f"answer has {frames} content frame(s) (its opening frame, {len(self.progress)} progress and "
                f"{self.flood} flood notification(s))"
            )


class McpTool(_Echoed):
    name: str = _NAME
    title: str | None = Field(default=None, max_length=LIMITS["identifier_chars"])
    description: str | None = Field(default=None, max_length=_TEXT_CHARS)
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    output_schema: dict[str, Any] | None = None
    annotations: dict[str, Any] | None = None
    results: list[McpToolResult] = Field(default_factory=list, max_length=PEER_LIMITS["mcp_results_per_tool"])
    terminal_policy: TerminalPolicy = "reject"

    @model_validator(mode="after")
    def _schemas(self) -> McpTool:
        _object_schema(self.input_schema, "input_schema")
        if self.output_schema is not None:
            _object_schema(self.output_schema, "output_schema")
        return self


class McpResource(_Echoed):
    """A resource: exactly one of ``text`` and ``blob`` (base64)."""

    uri: str = Field(min_length=1, max_length=PEER_LIMITS["mcp_uri_chars"])
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


class McpResourceTemplate(_Echoed):
    uri_template: str = Field(min_length=1, max_length=PEER_LIMITS["mcp_uri_chars"])
    name: str = Field(min_length=1, max_length=LIMITS["identifier_chars"])
    title: str | None = Field(default=None, max_length=LIMITS["identifier_chars"])
    description: str | None = Field(default=None, max_length=_TEXT_CHARS)
    mime_type: str | None = Field(default=None, max_length=256)


class McpPromptArgument(_Echoed):
    name: str = Field(min_length=1, max_length=LIMITS["identifier_chars"])
    description: str | None = Field(default=None, max_length=_TEXT_CHARS)
    required: bool = False


class McpPromptMessage(_Echoed):
    """A prompt message; ``text`` is shorthand for one text content block. ``{argument}`` placeholders
    in text are filled from ``prompts/get`` arguments."""

    role: Literal["user", "assistant"]
    text: str | None = Field(default=None, max_length=_TEXT_CHARS)
    content: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _one_content(self) -> McpPromptMessage:
        if (self.text is None) == (self.content is None):
            raise ValueError("a prompt message needs exactly one of text, content")
        if self.content is not None:
            check_content_block(self.content, "content")
        return self


class McpPrompt(_Echoed):
    name: str = Field(min_length=1, max_length=LIMITS["identifier_chars"])
    title: str | None = Field(default=None, max_length=LIMITS["identifier_chars"])
    description: str | None = Field(default=None, max_length=_TEXT_CHARS)
    arguments: list[McpPromptArgument] = Field(default_factory=list, max_length=64)
    messages: list[McpPromptMessage] = Field(
        default_factory=list, max_length=PEER_LIMITS["mcp_messages_per_prompt"]
    )

    @model_validator(mode="after")
    def _unique(self) -> McpPrompt:
        check_unique_names(self.arguments, "arguments")
        return self


class McpServer(_Echoed):
    """One scripted MCP server, answering at ``/mcp/{name}`` (Streamable HTTP) and ``/mcp/{name}/sse``."""

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
    # How long a tool call waits for the client's answer to the server's own request (elicitation,
    # sampling, roots) before it answers a timeout error.
    answer_timeout_ms: int = Field(default=30_000, ge=1, le=PEER_LIMITS["mcp_answer_timeout_ms"])

    @model_validator(mode="after")
    def _unique(self) -> McpServer:
        check_unique_names(self.tools, "tools")
        check_unique_names(self.resources, "resources", "uri")
        check_unique_names(self.resource_templates, "resource_templates")
        check_unique_names(self.prompts, "prompts")
        return self
