"""``Completion`` -> an Anthropic ``Message`` JSON body (docs/providers.md).

Usage follows Anthropic's split: ``input_tokens`` counts only the uncached input, so that
``input_tokens + cache_creation_input_tokens + cache_read_input_tokens`` is the whole prompt (the neutral
``Usage.input_tokens``).
"""

from __future__ import annotations

from typing import Any

import orjson

from llmts.providers.base import Reply
from llmts.schema.neutral import NeutralReasoning, ScriptedOutput, Usage

__all__ = [
    "JSON_HEADERS",
    "STOP_REASONS",
    "content_blocks",
    "message_payload",
    "render_message",
    "stop_reason",
    "thinking_block",
    "tool_input",
    "usage_payload",
]

JSON_HEADERS = ("Content-Type", "application/json")
STOP_REASONS = {"text": "end_turn", "json": "end_turn", "tool_calls": "tool_use"}
# Neutral finish reasons other than ``stop``; Anthropic has no content filter stop, a filtered answer is a
# refusal (its classifiers' verdict).
_EARLY_STOPS = {"length": "max_tokens", "content_filter": "refusal", "refusal": "refusal"}


def stop_reason(output: ScriptedOutput) -> str:
    return _EARLY_STOPS.get(output.finish_reason) or STOP_REASONS[output.kind]


def thinking_block(reasoning: NeutralReasoning) -> dict[str, Any]:
    """``thinking`` with its signature, or ``redacted_thinking`` whose ``data`` is the opaque signature."""
    if reasoning.redacted:
        return {"type": "redacted_thinking", "data": reasoning.signature}
    return {"type": "thinking", "thinking": reasoning.thinking(), "signature": reasoning.signature}


def usage_payload(usage: Usage) -> dict[str, Any]:
    read, write = usage.cached_tokens, usage.cache_write_tokens
    return {
        "input_tokens": max(0, usage.input_tokens - read - write),
        "cache_creation_input_tokens": write,
        "cache_read_input_tokens": read,
        # llmts does not model cache lifetimes: every write counts as the default 5-minute ttl.
        "cache_creation": {"ephemeral_5m_input_tokens": write, "ephemeral_1h_input_tokens": 0},
        "output_tokens": usage.output_tokens,
        "service_tier": "standard",
    }


def tool_input(arguments: str) -> Any:
    """A tool call's arguments as the ``input`` object. Arguments that are not JSON are sent as scripted
    (a broken fixture stays visible instead of being repaired)."""
    try:
        return orjson.loads(arguments)
    except orjson.JSONDecodeError:
        return arguments


def content_blocks(output: ScriptedOutput) -> list[dict[str, Any]]:
    """Thinking first, then the text (a refusal's words are text too), then the tool calls."""
    blocks = [thinking_block(output.reasoning)] if output.reasoning is not None else []
    if output.refusal is not None:
        blocks.append({"type": "text", "text": output.refusal})
    elif output.kind != "tool_calls" or output.text:
        # JSON fixtures answer structured-output requests: the JSON text is the text block.
        blocks.append({"type": "text", "text": output.text})
    blocks.extend(
        {"type": "tool_use", "id": call.id, "name": call.name, "input": tool_input(call.arguments)}
        for call in output.tool_calls
    )
    return blocks


def message_payload(
    model: str, message_id: str, content: list[dict[str, Any]], stop_reason: str, usage: Usage
) -> dict[str, Any]:
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage_payload(usage),
    }


def render_message(
    model: str, message_id: str, output: ScriptedOutput | None, usage: Usage, request_id: str
) -> Reply:
    """A whole Message; ``output`` None is a cache warm-up (``max_tokens: 0``): no content."""
    if output is None:
        payload = message_payload(model, message_id, [], "max_tokens", usage)
    else:
        payload = message_payload(model, message_id, content_blocks(output), stop_reason(output), usage)
    return Reply(200, [JSON_HEADERS, ("request-id", request_id)], orjson.dumps(payload))
