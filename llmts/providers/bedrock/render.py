"""``Completion`` -> a Bedrock Converse JSON body (botocore's ``ConverseResponse``).

Usage follows the Anthropic-on-Bedrock split: ``inputTokens`` is the uncached input, so that
``inputTokens + cacheReadInputTokens + cacheWriteInputTokens`` is the whole prompt (the neutral
``Usage.input_tokens``) and ``totalTokens`` adds the output.
"""

from __future__ import annotations

from typing import Any

import orjson

from llmts.providers.base import Reply
from llmts.schema.neutral import ScriptedOutput, Usage

__all__ = ["JSON_HEADERS", "STOP_REASONS", "content_blocks", "render_converse", "tool_input", "usage_payload"]

JSON_HEADERS = ("Content-Type", "application/json")
STOP_REASONS = {"text": "end_turn", "json": "end_turn", "tool_calls": "tool_use"}
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


def content_blocks(output: ScriptedOutput) -> list[dict[str, Any]]:
    if output.kind == "tool_calls":
        return [
            {"toolUse": {"toolUseId": call.id, "name": call.name, "input": tool_input(call.arguments)}}
            for call in output.tool_calls
        ]
    # JSON fixtures answer structured-output requests: the JSON text is the text block.
    return [{"text": output.text}]


def render_converse(output: ScriptedOutput, usage: Usage, request_id: str) -> Reply:
    payload = {
        "output": {"message": {"role": "assistant", "content": content_blocks(output)}},
        "stopReason": STOP_REASONS[output.kind],
        "usage": usage_payload(usage),
        "metrics": {"latencyMs": LATENCY_MS},
    }
    return Reply(200, [JSON_HEADERS, ("x-amzn-RequestId", request_id)], orjson.dumps(payload))
