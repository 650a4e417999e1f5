"""Bedrock Converse request -> ``NeutralRequest`` (botocore's ``bedrock-runtime`` model, ``ConverseRequest``).

Lenient where SDKs add fields (unknown keys and block kinds are ignored), strict where the service answers
``ValidationException`` (wrong types, missing ``messages``, unknown roles, blocks in the wrong role). The
model id comes from the path (botocore URL-encodes it; ``:``, ``.``, ``us.``/``eu.`` profile prefixes and
ARNs arrive decoded).

Mapping:

* ``system`` text blocks and ``toolConfig.tools`` become the preamble (prompt-cache segment 0);
* a user message's ``toolResult`` blocks become ``tool`` messages (``tool_call_id`` = ``toolUseId``;
  ``text`` parts joined, ``json`` parts as compact JSON), followed by a ``user`` message with its text;
* an assistant message's ``toolUse`` blocks become its ``tool_calls``;
* a ``cachePoint`` block is an explicit cache breakpoint after what precedes it (segment 0 for ``system``
  and ``tools``, 1 + i for ``messages[i]`` of the neutral request);
* ``outputConfig.textFormat`` of type ``json_schema`` asks for structured output.
"""

from __future__ import annotations

from typing import Any

import orjson

from llmts.errors import InvalidRequest
from llmts.providers.base import ProviderCall
from llmts.schema.neutral import (
    NeutralMessage,
    NeutralRequest,
    NeutralToolCall,
    ResponseFormat,
    ToolChoice,
    build,
    neutral_message,
    reasoning_settings,
)

__all__ = ["CONVERSE", "MAX_CACHE_POINTS", "converse_request", "invalid", "parse_converse"]

CONVERSE = "converse"
# The service rejects more cachePoint blocks than this in one request.
MAX_CACHE_POINTS = 4

_AUTO = ToolChoice()
_REQUIRED = ToolChoice(mode="required")
_NO_CALLS: tuple[NeutralToolCall, ...] = ()


def invalid(message: str) -> InvalidRequest:
    """A ``ValidationException`` worded like the service's (``1 validation error detected: ...``)."""
    return InvalidRequest(message)


def _constraint(path: str, rule: str) -> InvalidRequest:
    return invalid(f"1 validation error detected: Value at '{path}' failed to satisfy constraint: {rule}")


def _blocks(value: Any, path: str) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise _constraint(path, "Member must be a list")
    for index, block in enumerate(value):
        if not isinstance(block, dict):
            raise _constraint(f"{path}.{index + 1}.member", "Member must be a structure")
    return value


def _text(block: dict[str, Any], path: str) -> str:
    text = block["text"]
    if not isinstance(text, str):
        raise _constraint(f"{path}.text", "Member must be a string")
    return text


def _tool_result(block: Any, path: str) -> tuple[str, str]:
    if not isinstance(block, dict) or not isinstance(block.get("toolUseId"), str):
        raise _constraint(f"{path}.toolUseId", "Member must not be null")
    parts = []
    for index, part in enumerate(_blocks(block.get("content", []), f"{path}.content")):
        if "text" in part:
            parts.append(_text(part, f"{path}.content.{index + 1}.member"))
        elif "json" in part:
            parts.append(orjson.dumps(part["json"]).decode())
    return block["toolUseId"], "".join(parts)


def _tool_use(block: Any, path: str) -> NeutralToolCall:
    if not isinstance(block, dict):
        raise _constraint(path, "Member must be a structure")
    call_id, name, arguments = block.get("toolUseId"), block.get("name"), block.get("input")
    if not isinstance(call_id, str) or not call_id:
        raise _constraint(f"{path}.toolUseId", "Member must not be null")
    if not isinstance(name, str) or not name:
        raise _constraint(f"{path}.name", "Member must not be null")
    return build(
        NeutralToolCall,
        id=call_id,
        name=name,
        arguments=orjson.dumps(arguments if arguments is not None else {}).decode(),
        arguments_chunks=(),
    )


class _Points:
    """Cache breakpoints (neutral segment numbers) and how many ``cachePoint`` blocks set them."""

    __slots__ = ("count", "segments")

    def __init__(self) -> None:
        self.segments: set[int] = set()
        self.count = 0

    def add(self, block: dict[str, Any], segment: int | None, path: str) -> None:
        """Count a ``cachePoint`` block; ``segment`` None: its caller places the breakpoint later."""
        point = block["cachePoint"]
        if not isinstance(point, dict) or point.get("type") != "default":
            raise _constraint(f"{path}.cachePoint.type", "Member must satisfy enum value set: [default]")
        self.count += 1
        if segment is not None:
            self.segments.add(segment)


def _append_message(out: list[NeutralMessage], message: Any, index: int, points: _Points) -> None:
    path = f"messages.{index + 1}.member"
    if not isinstance(message, dict):
        raise _constraint(path, "Member must be a structure")
    role = message.get("role")
    if role not in ("user", "assistant"):
        raise _constraint(f"{path}.role", "Member must satisfy enum value set: [user, assistant]")
    texts: list[str] = []
    calls: list[NeutralToolCall] = []
    results = 0
    pending_point = False
    for b_index, block in enumerate(_blocks(message.get("content"), f"{path}.content")):
        b_path = f"{path}.content.{b_index + 1}.member"
        if "text" in block:
            texts.append(_text(block, b_path))
        elif "toolUse" in block:
            if role != "assistant":
                raise invalid("A conversation must alternate: toolUse blocks belong to assistant messages.")
            calls.append(_tool_use(block["toolUse"], f"{b_path}.toolUse"))
        elif "toolResult" in block:
            if role != "user":
                raise invalid("toolResult blocks belong to user messages.")
            call_id, text = _tool_result(block["toolResult"], f"{b_path}.toolResult")
            out.append(neutral_message(role="tool", text=text, tool_calls=_NO_CALLS, tool_call_id=call_id))
            results += 1
        elif "cachePoint" in block:
            # A point after tool results alone ends the prefix there; otherwise after this message.
            if not texts and not calls and results:
                points.add(block, len(out), b_path)
            else:
                points.add(block, None, b_path)
                pending_point = True
        # image, document, reasoningContent, video...: nothing llmts matches on.
    if role == "assistant":
        out.append(
            neutral_message(role="assistant", text="".join(texts), tool_calls=tuple(calls), tool_call_id=None)
        )
    elif texts or not results:
        out.append(neutral_message(role="user", text="".join(texts), tool_calls=_NO_CALLS, tool_call_id=None))
    if pending_point:
        points.segments.add(len(out))


def _system(raw: Any, points: _Points) -> str:
    if raw is None:
        return ""
    parts = []
    for index, block in enumerate(_blocks(raw, "system")):
        if "text" in block:
            parts.append(_text(block, f"system.{index + 1}.member"))
        elif "cachePoint" in block:
            points.add(block, 0, f"system.{index + 1}.member")
    return "\n".join(parts)


def _tools(config: Any, points: _Points) -> tuple[tuple[str, ...], str, ToolChoice]:
    if config is None:
        return (), "", _AUTO
    if not isinstance(config, dict):
        raise _constraint("toolConfig", "Member must be a structure")
    names: list[str] = []
    specs: list[Any] = []
    for index, tool in enumerate(_blocks(config.get("tools"), "toolConfig.tools")):
        if "cachePoint" in tool:
            points.add(tool, 0, f"toolConfig.tools.{index + 1}.member")
            continue
        spec = tool.get("toolSpec")
        name = spec.get("name") if isinstance(spec, dict) else None
        if not isinstance(name, str) or not name:
            raise _constraint(f"toolConfig.tools.{index + 1}.member.toolSpec.name", "Member must not be null")
        names.append(name)
        specs.append(spec)
    choice = config.get("toolChoice")
    if choice is None or (isinstance(choice, dict) and "auto" in choice):
        tool_choice = _AUTO
    elif isinstance(choice, dict) and "any" in choice:
        tool_choice = _REQUIRED
    elif isinstance(choice, dict) and isinstance(choice.get("tool"), dict):
        name = choice["tool"].get("name")
        if not isinstance(name, str) or not name:
            raise _constraint("toolConfig.toolChoice.tool.name", "Member must not be null")
        tool_choice = build(ToolChoice, mode="function", name=name)
    else:
        raise _constraint("toolConfig.toolChoice", "Member must be one of auto, any, tool")
    return tuple(names), orjson.dumps(specs).decode() if specs else "", tool_choice


def _response_format(body: dict[str, Any]) -> ResponseFormat:
    config = body.get("outputConfig")
    if config is None:
        return "text"
    text_format = config.get("textFormat") if isinstance(config, dict) else None
    if text_format is None:
        return "text"
    if not isinstance(text_format, dict) or text_format.get("type") != "json_schema":
        raise _constraint("outputConfig.textFormat.type", "Member must satisfy enum value set: [json_schema]")
    structure = text_format.get("structure")
    schema = structure.get("jsonSchema") if isinstance(structure, dict) else None
    if not isinstance(schema, dict) or not isinstance(schema.get("schema"), str):
        raise _constraint("outputConfig.textFormat.structure.jsonSchema.schema", "Member must not be null")
    return "json_schema"


def _reasoning_settings(body: dict[str, Any]) -> dict[str, Any] | None:
    """Claude's ``thinking`` passed through ``additionalModelRequestFields`` (scalars only)."""
    extra = body.get("additionalModelRequestFields")
    return reasoning_settings(extra.get("thinking")) if isinstance(extra, dict) else None


def parse_converse(call: ProviderCall, operation: str, stream: bool) -> NeutralRequest:
    return converse_request(call.request.json_object(), call.request.args["model"], operation, stream)


def converse_request(body: dict[str, Any], model: str, operation: str, stream: bool) -> NeutralRequest:
    """A Converse-shaped body (also Amazon Nova's InvokeModel body, ``llmts/providers/bedrock/nova.py``)."""
    raw_messages = body.get("messages")
    if raw_messages is None:
        raise _constraint("messages", "Member must not be null")
    if not isinstance(raw_messages, list) or not raw_messages:
        raise _constraint("messages", "Member must have length greater than or equal to 1")
    points = _Points()
    tool_names, tools_text, tool_choice = _tools(body.get("toolConfig"), points)
    system = _system(body.get("system"), points)
    messages: list[NeutralMessage] = []
    for index, message in enumerate(raw_messages):
        _append_message(messages, message, index, points)
    if points.count > MAX_CACHE_POINTS:
        raise invalid(
            f"A maximum of {MAX_CACHE_POINTS} cachePoint blocks may be provided. Found {points.count}."
        )
    preamble = f"{tools_text}\n{system}" if tools_text and system else tools_text or system
    return build(
        NeutralRequest,
        provider="bedrock",
        operation=operation,
        model=model,
        messages=tuple(messages),
        tool_names=tool_names,
        tool_choice=tool_choice,
        response_format=_response_format(body),
        stream=stream,
        stream_include_usage=stream,
        preamble=preamble,
        system=system,
        cache_mode="explicit",
        cache_breakpoints=tuple(sorted(points.segments)),
        choices=1,
        reasoning_settings=_reasoning_settings(body),
        exact_tokens=None,
    )
