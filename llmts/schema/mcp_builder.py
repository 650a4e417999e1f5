"""Builders of the ``mcp_servers`` section (docs/mcp.md), reached from ``ConfigBuilder.mcp_server``:

    config = (
        ConfigBuilder()
        .mcp_server("files", instructions="Search the team's files.")
        .tool("search", input_schema={"type": "object", "properties": {"q": {"type": "string"}}})
        .text("found: notes.txt", when={"q": "notes"})
        .error(-32602, "no such file")
        .resource("file:///notes.txt", "notes", text="remember the milk")
        .prompt("summarize", "Summarize {topic}.", arguments=["topic"])
        .config.scenario("agent").text("Done.")
        .build()
    )

A tool's result methods return the tool builder; ``.tool``, ``.resource``, ``.prompt``,
``.mcp_server``, ``.a2a_agent``, ``.scenario``, ``.conversation``, ``.config`` and ``.build()`` are on
every builder here so one chain reads top to bottom. Everything serializes to the configuration JSON
(``to_dict``), validated by ``build()``. This module may not import ``builder.py`` (which imports it): the
parent is any object with those methods (``ConfigBuilder``), so ``.scenario`` and ``.conversation`` are
typed ``Any`` here.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeVar

from llmts.schema.fixtures import TerminalPolicy
from llmts.schema.response_builder import fixture_json

__all__ = ["McpServerBuilder", "McpToolBuilder"]


class _Parent(Protocol):
    # Read-only members: ``ConfigBuilder``'s methods, whose return types this module may not name.
    @property
    def mcp_server(self) -> Callable[..., Any]: ...

    @property
    def a2a_agent(self) -> Callable[..., Any]: ...

    @property
    def scenario(self) -> Callable[..., Any]: ...

    @property
    def conversation(self) -> Callable[..., Any]: ...

    def build(self) -> Any: ...


_P = TypeVar("_P", bound=_Parent)


def _given(**fields: Any) -> dict[str, Any]:
    return {key: value for key, value in fields.items() if value is not None}


class McpServerBuilder(Generic[_P]):
    def __init__(self, parent: _P, name: str, **fields: Any) -> None:
        self._parent = parent
        self._fields = {"name": name, **_given(**fields)}
        self._tools: list[McpToolBuilder[_P]] = []
        self._resources: list[dict[str, Any]] = []
        self._templates: list[dict[str, Any]] = []
        self._prompts: list[dict[str, Any]] = []

    @property
    def config(self) -> _P:
        """The configuration this server belongs to (chain on to its scenarios, other servers...)."""
        return self._parent

    def mcp_server(self, name: str, **fields: Any) -> McpServerBuilder[_P]:
        server: McpServerBuilder[_P] = self._parent.mcp_server(name, **fields)
        return server

    def a2a_agent(self, name: str, **fields: Any) -> Any:
        """The configuration's next A2A agent (``ConfigBuilder.a2a_agent``; an ``A2aAgentBuilder``, not
        named here: ``a2a_builder.py`` names this module, and schema modules form no import cycle)."""
        return self._parent.a2a_agent(name, **fields)

    def scenario(self, id: str | None = None, **fields: Any) -> Any:
        """The configuration's next scenario (``ConfigBuilder.scenario``: a ``ScenarioBuilder``)."""
        return self._parent.scenario(id, **fields)

    def conversation(self, id: str | None = None, **fields: Any) -> Any:
        """The configuration's next conversation graph (``ConfigBuilder.conversation``)."""
        return self._parent.conversation(id, **fields)

    def build(self) -> Any:
        return self._parent.build()

    def tool(
        self,
        name: str,
        *,
        description: str | None = None,
        title: str | None = None,
        input_schema: dict[str, Any] | None = None,
        output_schema: dict[str, Any] | None = None,
        annotations: dict[str, Any] | None = None,
        terminal_policy: TerminalPolicy | None = None,
    ) -> McpToolBuilder[_P]:
        """A tool; add its scripted results, consumed in order, with ``text``, ``structured``,
        ``content``, ``error`` or ``result``."""
        fields = _given(
            name=name,
            description=description,
            title=title,
            input_schema=input_schema,
            output_schema=output_schema,
            annotations=annotations,
            terminal_policy=terminal_policy,
        )
        builder = McpToolBuilder(self, fields)
        self._tools.append(builder)
        return builder

    def resource(
        self,
        uri: str,
        name: str,
        *,
        text: str | None = None,
        blob: bytes | None = None,
        mime_type: str | None = None,
        title: str | None = None,
        description: str | None = None,
    ) -> McpServerBuilder[_P]:
        """A resource with ``text`` or ``blob`` (bytes, sent base64-encoded)."""
        encoded = base64.b64encode(blob).decode("ascii") if blob is not None else None
        self._resources.append(
            _given(
                uri=uri,
                name=name,
                text=text,
                blob=encoded,
                mime_type=mime_type,
                title=title,
                description=description,
            )
        )
        return self

    def resource_template(
        self,
        uri_template: str,
        name: str,
        *,
        mime_type: str | None = None,
        title: str | None = None,
        description: str | None = None,
    ) -> McpServerBuilder[_P]:
        self._templates.append(
            _given(
                uri_template=uri_template,
                name=name,
                mime_type=mime_type,
                title=title,
                description=description,
            )
        )
        return self

    def prompt(
        self,
        name: str,
        *messages: str | dict[str, Any],
        arguments: list[str | dict[str, Any]] | None = None,
        description: str | None = None,
        title: str | None = None,
    ) -> McpServerBuilder[_P]:
        """A prompt: each message a string (a user text message, ``{argument}`` placeholders filled by
        ``prompts/get``) or a message object; an argument a name (required) or an argument object."""
        wire_messages = [{"role": "user", "text": m} if isinstance(m, str) else dict(m) for m in messages]
        wire_arguments = [
            {"name": a, "required": True} if isinstance(a, str) else dict(a) for a in (arguments or [])
        ]
        self._prompts.append(
            _given(
                name=name,
                title=title,
                description=description,
                arguments=wire_arguments or None,
                messages=wire_messages,
            )
        )
        return self

    def to_dict(self) -> dict[str, Any]:
        data = dict(self._fields)
        if self._tools:
            data["tools"] = [tool.to_dict() for tool in self._tools]
        if self._resources:
            data["resources"] = list(self._resources)
        if self._templates:
            data["resource_templates"] = list(self._templates)
        if self._prompts:
            data["prompts"] = list(self._prompts)
        return data


class McpToolBuilder(Generic[_P]):
    """One tool's scripted results. Every result method takes the same options: ``when`` (a subset of
    the call's arguments), ``delay_ms``, ``progress`` (``[{"progress", "total", "message"}]``), ``elicit``
    (``{"message", "requested_schema"}``), ``sample`` (``{"messages", "max_tokens", "system_prompt"}``),
    ``list_roots``, ``stream_delivery``, ``fault`` and ``flood_count`` (docs/mcp.md)."""

    def __init__(self, server: McpServerBuilder[_P], fields: dict[str, Any]) -> None:
        self._server = server
        self._fields = fields
        self._results: list[dict[str, Any]] = []

    @property
    def server(self) -> McpServerBuilder[_P]:
        return self._server

    @property
    def config(self) -> _P:
        return self._server.config

    def tool(self, name: str, **fields: Any) -> McpToolBuilder[_P]:
        return self._server.tool(name, **fields)

    def resource(self, uri: str, name: str, **fields: Any) -> McpServerBuilder[_P]:
        return self._server.resource(uri, name, **fields)

    def prompt(self, name: str, *messages: str | dict[str, Any], **fields: Any) -> McpServerBuilder[_P]:
        return self._server.prompt(name, *messages, **fields)

    def mcp_server(self, name: str, **fields: Any) -> McpServerBuilder[_P]:
        return self._server.mcp_server(name, **fields)

    def a2a_agent(self, name: str, **fields: Any) -> Any:
        return self._server.a2a_agent(name, **fields)

    def scenario(self, id: str | None = None, **fields: Any) -> Any:
        return self._server.scenario(id, **fields)

    def conversation(self, id: str | None = None, **fields: Any) -> Any:
        return self._server.conversation(id, **fields)

    def build(self) -> Any:
        return self._server.build()

    def _add(self, result: dict[str, Any], options: dict[str, Any]) -> McpToolBuilder[_P]:
        when = options.pop("when", None)
        if when is not None:
            result["when"] = {"arguments": when}
        result.update(fixture_json(_given(**options)))  # a ``stream_delivery=stall(...)`` is dumped
        if result.get("list_roots") is False:
            del result["list_roots"]
        if result.get("delay_ms") == 0:
            del result["delay_ms"]
        self._results.append(result)
        return self

    def text(
        self, text: str, *, structured: dict[str, Any] | None = None, is_error: bool = False, **options: Any
    ) -> McpToolBuilder[_P]:
        result: dict[str, Any] = _given(text=text, structured=structured)
        if is_error:
            result["is_error"] = True
        return self._add(result, options)

    def structured(self, value: dict[str, Any], **options: Any) -> McpToolBuilder[_P]:
        """Structured content alone (its JSON is also the text block)."""
        return self._add({"structured": value}, options)

    def content(
        self,
        *blocks: dict[str, Any],
        structured: dict[str, Any] | None = None,
        is_error: bool = False,
        **options: Any,
    ) -> McpToolBuilder[_P]:
        """MCP content blocks (``{"type": "text", "text": ...}``, ``image``, ``audio``, ``resource_link``,
        ``resource``)."""
        result: dict[str, Any] = _given(content=list(blocks), structured=structured)
        if is_error:
            result["is_error"] = True
        return self._add(result, options)

    def error(self, code: int, message: str, data: Any = None, **options: Any) -> McpToolBuilder[_P]:
        """A JSON-RPC error answer (not a tool result with ``isError``: use ``text(..., is_error=True)``)."""
        return self._add({"error": _given(code=code, message=message, data=data)}, options)

    def result(self, fixture: dict[str, Any]) -> McpToolBuilder[_P]:
        """A result written as configuration JSON."""
        self._results.append(dict(fixture))
        return self

    def to_dict(self) -> dict[str, Any]:
        data = dict(self._fields)
        if self._results:
            data["results"] = list(self._results)
        return data
