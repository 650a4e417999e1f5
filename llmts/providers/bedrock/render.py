"""``Completion`` -> a Bedrock Converse JSON body (botocore's ``ConverseResponse``).

Usage follows the Anthropic-on-Bedrock split: ``inputTokens`` is the uncached input, so that
``inputTokens + cacheReadInputTokens + cacheWriteInputTokens`` is the whole prompt (the neutral
``Usage.input_tokens``) and ``totalTokens`` adds the output.
"""

from __future__ import annotations

import base64
from typing import Any

import orjson

from llmts.providers.base import Reply
from llmts.schema.neutral import NeutralReasoning, ScriptedOutput, Usage

__all__ = [
    "JSON_HEADERS",
    "STOP_REASONS",
    "content_blocks",
    "reasoning_block",
    "render_converse",
    "stop_reason",
    "tool_input",
    "usage_payload",
]

JSON_HEADERS = ("Content-Type", "application/json")
STOP_REASONS = {"text": "end_turn", "json": "end_turn", "tool_calls": "tool_use"}
# A fixture's ``finish_reason`` other than ``stop``, as Converse's ``stopReason``.
_EARLY_STOPS = {"length": "max_tokens", "content_filter": "content_filtered", "refusal": "content_filtered"}
# llmts answers at once; a fixed latency keeps bodies deterministic.
LATENCY_MS = 1


def usage_payload(usage: Usage) -> dict[str, Any]:
    read, write = usage.cached_tokens, usage.cache_write_tokens
    uncached = max(0, usage.input_tokens - read - write)
    return {
        "inputTokens": uncached,
        "outputTokens": usage.output_tokens,
        "totalTokens": uncached + read + write + usage.output_tokens,
        "cacheReadInputTokens": read,
        "cacheWriteInputTokens": write,
    }


def tool_input(arguments: str) -> Any:
    """A tool call's arguments as the ``input`` document; arguments that are not JSON are sent as scripted."""
    try:
        return orjson.loads(arguments)
    except orjson.JSONDecodeError:
        return arguments


def stop_reason(output: ScriptedOutput) -> str:
    return _EARLY_STOPS.get(output.finish_reason) or STOP_REASONS[output.kind]


def reasoning_block(reasoning: NeutralReasoning) -> dict[str, Any]:
    """``reasoningText`` with its signature, or ``redactedContent`` (a blob: base64 on the wire)."""
    if reasoning.redacted:
        return {"redactedContent": base64.b64encode(reasoning.signature.encode()).decode()}
    return {"reasoningText": {"text": reasoning.thinking(), "signature": reasoning.signature}}


def content_blocks(output: ScriptedOutput) -> list[dict[str, Any]]:
    """Reasoning first, then the text (a refusal's text; the JSON text of a ``json`` fixture), then the
    tool calls (a mixed answer has both)."""
    blocks: list[dict[str, Any]] = []
    if output.reasoning is not None:
        blocks.append({"reasoningContent": reasoning_block(output.reasoning)})
    text = output.refusal if output.refusal is not None else output.text
    if text or output.kind != "tool_calls":
        blocks.append({"text": text})
    blocks.extend(
        {"toolUse": {"toolUseId": call.id, "name": call.name, "input": tool_input(call.arguments)}}
        for call in output.tool_calls
    )
    return blocks


def render_converse(output: ScriptedOutput, usage: Usage, request_id: str) -> Reply:
    payload = {
        "output": {"message": {"role": "assistant", "content": content_blocks(output)}},
        "stopReason": stop_reason(output),
        "usage": usage_payload(usage),
        "metrics": {"latencyMs": LATENCY_MS},
    }
    return Reply(200, [JSON_HEADERS, ("x-amzn-RequestId", request_id)], orjson.dumps(payload))
