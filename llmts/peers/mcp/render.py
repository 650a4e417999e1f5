"""The MCP wire shapes of a scripted server (the 2025-11-25 schema, trimmed to the negotiated revision):
``initialize``'s result, list items, tool results, resource contents, prompt messages, and cursors."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, TypeVar

import orjson

from llmts.peers.jsonrpc import INVALID_PARAMS, JsonRpcError
from llmts.peers.mcp.revisions import STRUCTURED_OUTPUT, TOOL_ANNOTATIONS, at_least
from llmts.schema.mcp import (
    McpPrompt,
    McpPromptArgument,
    McpResource,
    McpResourceTemplate,
    McpServer,
    McpTool,
    McpToolResult,
)
from llmts.schema.peer_limits import PEER_LIMITS

__all__ = [
    "call_result",
    "initialize_result",
    "page",
    "prompt_item",
    "prompt_messages",
    "resource_contents",
    "resource_item",
    "server_capabilities",
    "template_item",
    "tool_item",
]

_Item = TypeVar("_Item")
_PLACEHOLDER = re.compile(r"\{([A-Za-z0-9_.\-]+)\}")
# A prompt text once ``prompts/get`` filled its placeholders: no longer than a configured text may be.
_FILLED_CHARS = PEER_LIMITS["mcp_text_chars"]
_DIGITS = re.compile(r"[0-9]{1,9}")


def server_capabilities(version: str) -> dict[str, Any]:
    """Everything is declared whatever the configuration holds: a reconfiguration may add tools,
    resources or prompts later, and the client is told with ``list_changed``."""
    capabilities: dict[str, Any] = {
        "tools": {"listChanged": True},
        "resources": {"subscribe": True, "listChanged": True},
        "prompts": {"listChanged": True},
        "logging": {},
    }
    if at_least(version, TOOL_ANNOTATIONS):
        capabilities["completions"] = {}
    return capabilities


def initialize_result(server: McpServer, version: str) -> dict[str, Any]:
    result: dict[str, Any] = {
        "protocolVersion": version,
        "capabilities": server_capabilities(version),
        "serverInfo": {"name": server.name, "version": server.version},
    }
    if server.instructions is not None:
        result["instructions"] = server.instructions
    return result


def _titled(item: dict[str, Any], title: str | None, description: str | None, version: str) -> dict[str, Any]:
    if title is not None and at_least(version, STRUCTURED_OUTPUT):
        item["title"] = title
    if description is not None:
        item["description"] = description
    return item


def tool_item(tool: McpTool, version: str) -> dict[str, Any]:
    item = _titled({"name": tool.name}, tool.title, tool.description, version)
    item["inputSchema"] = tool.input_schema
    if tool.output_schema is not None and at_least(version, STRUCTURED_OUTPUT):
        item["outputSchema"] = tool.output_schema
    if tool.annotations is not None and at_least(version, TOOL_ANNOTATIONS):
        item["annotations"] = tool.annotations
    return item


def call_result(result: McpToolResult, version: str) -> dict[str, Any]:
    """A scripted result as ``CallToolResult`` (``result.error`` is answered as a JSON-RPC error)."""
    structured = result.structured
    if result.content is not None:
        content: list[dict[str, Any]] = list(result.content)
    elif result.text is not None:
        content = [{"type": "text", "text": result.text}]
    else:  # structured alone: its JSON is the text too, for clients that read only content
        content = [{"type": "text", "text": orjson.dumps(structured).decode()}]
    answer: dict[str, Any] = {"content": content}
    if structured is not None and at_least(version, STRUCTURED_OUTPUT):
        answer["structuredContent"] = structured
    answer["isError"] = result.is_error
    return answer


def resource_item(resource: McpResource, version: str) -> dict[str, Any]:
    item = _titled(
        {"uri": resource.uri, "name": resource.name}, resource.title, resource.description, version
    )
    if resource.mime_type is not None:
        item["mimeType"] = resource.mime_type
    return item


def template_item(template: McpResourceTemplate, version: str) -> dict[str, Any]:
    item = _titled(
        {"uriTemplate": template.uri_template, "name": template.name},
        template.title,
        template.description,
        version,
    )
    if template.mime_type is not None:
        item["mimeType"] = template.mime_type
    return item


def resource_contents(resource: McpResource) -> dict[str, Any]:
    contents: dict[str, Any] = {"uri": resource.uri}
    if resource.mime_type is not None:
        contents["mimeType"] = resource.mime_type
    if resource.text is not None:
        contents["text"] = resource.text
    else:
        contents["blob"] = resource.blob
    return {"contents": [contents]}


def _argument(argument: McpPromptArgument) -> dict[str, Any]:
    item: dict[str, Any] = {"name": argument.name}
    if argument.description is not None:
        item["description"] = argument.description
    item["required"] = argument.required
    return item


def prompt_item(prompt: McpPrompt, version: str) -> dict[str, Any]:
    item = _titled({"name": prompt.name}, prompt.title, prompt.description, version)
    item["arguments"] = [_argument(argument) for argument in prompt.arguments]
    return item


def _fill(text: str, arguments: dict[str, str]) -> str:
    """``text`` with its placeholders filled; a result longer than ``mcp_text_chars`` is invalid params
    (measured before it is built: a client's argument may fill thousands of placeholders)."""
    size = len(text)
    for match in _PLACEHOLDER.finditer(text):
        value = arguments.get(match[1])
        if value is not None:
            size += len(value) - len(match[0])
    if size > _FILLED_CHARS:
        raise JsonRpcError(
            INVALID_PARAMS, f"the prompt's text with these arguments exceeds {_FILLED_CHARS} characters"
        )
    return _PLACEHOLDER.sub(lambda match: arguments.get(match[1], match[0]), text)


def prompt_messages(prompt: McpPrompt, arguments: dict[str, str]) -> dict[str, Any]:
    """``prompts/get``: the messages with ``{argument}`` placeholders filled (unknown ones stay as
    written), each text at most ``mcp_text_chars`` long; a required argument left out is invalid params."""
    missing = [a.name for a in prompt.arguments if a.required and a.name not in arguments]
    if missing:
        raise JsonRpcError(INVALID_PARAMS, f"prompt {prompt.name!r} needs argument(s) {', '.join(missing)}")
    messages = []
    for message in prompt.messages:
        if message.text is not None:
            content: dict[str, Any] = {"type": "text", "text": _fill(message.text, arguments)}
        else:
            assert message.content is not None
            content = dict(message.content)
            if content.get("type") == "text":
                content["text"] = _fill(content["text"], arguments)
        messages.append({"role": message.role, "content": content})
    result: dict[str, Any] = {"messages": messages}
    if prompt.description is not None:
        result["description"] = prompt.description
    return result


def page(items: Sequence[_Item], cursor: object, size: int | None) -> tuple[Sequence[_Item], str | None]:
    """One page of a list method and the cursor of the next (None on the last page). A cursor is the
    decimal offset of the page it names, in ASCII digits (``str.isdigit`` also admits superscripts, which
    ``int`` cannot read); anything else is invalid params."""
    start = 0
    if cursor is not None:
        if not isinstance(cursor, str) or not _DIGITS.fullmatch(cursor) or int(cursor) > len(items):
            raise JsonRpcError(INVALID_PARAMS, "invalid cursor")
        start = int(cursor)
    if size is None:
        return items[start:], None
    end = start + size
    return items[start:end], (str(end) if end < len(items) else None)
