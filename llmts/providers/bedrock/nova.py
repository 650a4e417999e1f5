"""Amazon Nova's InvokeModel body (``messages-v1``) and its answers (docs/providers.md, "AWS Bedrock").

The request is Converse-shaped (``messages`` with ``content: [{"text"}, {"toolUse"}, {"toolResult"},
{"cachePoint"}]``, ``system``, ``toolConfig``) plus ``schemaVersion`` and ``inferenceConfig``, so it is
parsed by the Converse parser (``converse_request``). The answers, per AWS's "Using the Invoke API" and
"Response structure highlights" pages of the Amazon Nova user guide:

* ``invoke``: ``{"output": {"message": {"role", "content"}}, "stopReason", "usage"}``; ``usage`` names the
  cache counters ``cacheReadInputTokenCount``/``cacheWriteInputTokenCount`` (Converse says
  ``...InputTokens``);
* ``invoke-with-response-stream``: one ``chunk`` per ConverseStream event, its JSON keyed by the event
  name (``{"messageStart": {...}}``, ``{"contentBlockDelta": {...}}``, ``contentBlockStart`` for tool
  calls, ``contentBlockStop``, ``messageStop``, ``metadata``); the last chunk (``metadata``) also carries
  ``amazon-bedrock-invocationMetrics``. No chunk is a terminal marker: the operation's streams end at EOF.
"""

from __future__ import annotations

from typing import Any

import orjson

from llmts.errors import InvalidRequest
from llmts.providers.base import Reply
from llmts.providers.bedrock.chunks import (
    INVOKE,
    INVOKE_STREAM,
    MALFORMED_CHUNK,
    chunk,
    invocation_metrics,
    invoke_headers,
    stream_headers,
)
from llmts.providers.bedrock.parse import converse_request
from llmts.providers.bedrock.render import content_blocks, stop_reason
from llmts.providers.bedrock.stream import stream_events
from llmts.schema.faults import FrameKind
from llmts.schema.neutral import Completion, NeutralRequest, Usage

__all__ = ["parse_nova", "render_nova"]

_MESSAGE_START = chunk(b'{"messageStart":{"role":"assistant"}}')


def _malformed(detail: str) -> InvalidRequest:
    return InvalidRequest(f"Malformed input request: {detail}, please reformat your input and try again.")


def parse_nova(body: dict[str, Any], model: str, stream: bool) -> NeutralRequest:
    config = body.get("inferenceConfig")
    if config is not None:
        if not isinstance(config, dict):
            raise _malformed("#/inferenceConfig: expected type: JSONObject")
        for key in ("maxTokens", "max_new_tokens"):
            value = config.get(key)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
                raise _malformed(f"#/inferenceConfig/{key}: expected an integer of at least 1")
    version = body.get("schemaVersion")
    if version is not None and version != "messages-v1":
        raise _malformed(f"#/schemaVersion: {orjson.dumps(version).decode()} is not a valid enum value")
    return converse_request(body, model, INVOKE_STREAM if stream else INVOKE, stream)


def _usage(usage: Usage) -> dict[str, Any]:
    read, write = usage.cached_tokens, usage.cache_write_tokens
    uncached = max(0, usage.input_tokens - read - write)
    return {
        "inputTokens": uncached,
        "outputTokens": usage.output_tokens,
        "totalTokens": uncached + read + write + usage.output_tokens,
        "cacheReadInputTokenCount": read,
        "cacheWriteInputTokenCount": write,
    }


def render_nova(request: NeutralRequest, completion: Completion, request_id: str) -> Reply:
    output, usage = completion.output, completion.usage
    if not request.stream:
        payload = {
            "output": {"message": {"role": "assistant", "content": content_blocks(output)}},
            "stopReason": stop_reason(output),
            "usage": _usage(usage),
        }
        return Reply(200, invoke_headers(usage, request_id), orjson.dumps(payload))
    frames = [_MESSAGE_START]
    kinds = [FrameKind.OTHER]
    for kind, name, payload in stream_events(output, {"usage": _usage(usage), "metrics": {}}):
        event: dict[str, Any] = {name.decode(): payload}
        if name == b"metadata":
            event["amazon-bedrock-invocationMetrics"] = invocation_metrics(usage)
        frames.append(chunk(orjson.dumps(event)))
        # No frame is terminal: InvokeModel streams end at EOF (llmts/providers/bedrock/invoke.py).
        kinds.append(FrameKind.OTHER if kind is FrameKind.TERMINAL else kind)
    return Reply(
        200, stream_headers(request_id), frames=frames, frame_kinds=kinds, malformed_frame=MALFORMED_CHUNK
    )
