"""InvokeModel and InvokeModelWithResponseStream for the Anthropic-on-Bedrock body.

The body is Anthropic's Messages body without ``model`` and ``stream`` (the path names the model, the route
decides streaming) and with ``anthropic_version`` (``bedrock-2023-05-31``), so it is parsed and rendered by
the Anthropic wire modules (the one import of another provider's package, docs/architecture.md
"Providers and the adapter registry"). What differs is Bedrock's:

* ``invoke`` answers the Anthropic Message JSON with Bedrock's ``X-Amzn-Bedrock-*`` token headers;
* ``invoke-with-response-stream`` wraps each Anthropic stream event's JSON in an event-stream ``chunk``
  message ``{"bytes": "<base64>"}`` (no ``ping``), the last (``message_stop``) carrying
  ``amazon-bedrock-invocationMetrics``. The stream has **no terminal marker**: it ends at EOF after
  ``message_stop``, exactly as the service does, so no frame is classified terminal and a verification
  that requires one is refused for this operation (docs/providers.md, "AWS Bedrock").
"""

from __future__ import annotations

import base64
from typing import Any

import orjson

from llmts.errors import InvalidRequest
from llmts.providers.anthropic.parse import parse_prompt
from llmts.providers.anthropic.render import render_message
from llmts.providers.anthropic.stream import render_message_stream
from llmts.providers.base import ProviderCall, Reply
from llmts.providers.bedrock.embeddings import operation_of_model, parse_model_invoke, render_model_invoke
from llmts.providers.bedrock.eventstream import event_message, with_broken_crc
from llmts.providers.bedrock.render import LATENCY_MS
from llmts.providers.bedrock.stream import EVENTSTREAM_HEADERS
from llmts.schema.faults import FrameKind
from llmts.schema.neutral import Completion, NeutralRequest, build, reasoning_settings

__all__ = ["INVOKE", "INVOKE_STREAM", "MALFORMED_CHUNK", "parse_invoke", "render_invoke"]

INVOKE = "invoke"
INVOKE_STREAM = "invoke-with-response-stream"
_TEXT_DELTA = b'"type":"text_delta"'
_DATA = b"\ndata: "


def _chunk(event: bytes) -> bytes:
    return event_message(b"chunk", b'{"bytes":"' + base64.b64encode(event) + b'"}')


MALFORMED_CHUNK = with_broken_crc(
    _chunk(b'{"type":"content_block_delta","index":0,"delta":{"type":"text_delta"')
)


def parse_invoke(call: ProviderCall, stream: bool) -> NeutralRequest:
    model = call.request.args["model"]
    operation = operation_of_model(model)
    if operation is not None:  # an embedding or rerank model (llmts/providers/bedrock/embeddings.py)
        if stream:
            raise InvalidRequest(f"The model {model} does not support response streaming.")
        return parse_model_invoke(call.request.json_object(), model, operation)
    body = call.request.json_object()
    if not isinstance(body.get("anthropic_version"), str):
        raise InvalidRequest("Malformed input request: #: required key [anthropic_version] not found")
    max_tokens = body.get("max_tokens")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        raise InvalidRequest("Malformed input request: #/max_tokens: expected an integer of at least 1")
    prompt = parse_prompt({**body, "model": call.request.args["model"]})  # the shared body stays as sent
    return build(
        NeutralRequest,
        provider="bedrock",
        operation=INVOKE_STREAM if stream else INVOKE,
        model=prompt.model,
        messages=prompt.messages,
        tool_names=prompt.tool_names,
        tool_choice=prompt.tool_choice,
        response_format="text",
        stream=stream,
        stream_include_usage=stream,
        preamble=prompt.preamble,
        system=prompt.system,
        cache_mode="explicit",
        cache_breakpoints=prompt.cache_breakpoints,
        choices=1,
        in_stream_faults=False,
        reasoning_settings=reasoning_settings(body.get("thinking")),
    )


def _metrics(completion: Completion) -> dict[str, Any]:
    usage = completion.usage
    return {
        "inputTokenCount": usage.input_tokens,
        "outputTokenCount": usage.output_tokens,
        "invocationLatency": LATENCY_MS,
        "firstByteLatency": LATENCY_MS,
    }


def render_invoke(call: ProviderCall, request: NeutralRequest, completion: Completion) -> Reply:
    if completion.output.result is not None:
        return render_model_invoke(call, request, completion)
    message_id = "msg_bdrk_" + completion.response_id
    usage = completion.usage
    if not request.stream:
        reply = render_message(request.model, message_id, completion.output, usage, call.request_id)
        reply.headers = [
            ("Content-Type", "application/json"),
            ("x-amzn-RequestId", call.request_id),
            ("X-Amzn-Bedrock-Invocation-Latency", str(LATENCY_MS)),
            ("X-Amzn-Bedrock-Input-Token-Count", str(usage.input_tokens)),
            ("X-Amzn-Bedrock-Output-Token-Count", str(usage.output_tokens)),
        ]
        return reply
    sse = render_message_stream(request.model, message_id, completion.output, usage, call.request_id)
    frames: list[bytes] = []
    kinds: list[FrameKind] = []
    for frame in sse.frames or ():
        event = frame[frame.index(_DATA) + len(_DATA) :].rstrip(b"\n")
        if event == b'{"type":"ping"}':
            continue
        if event == b'{"type":"message_stop"}':
            stop = {"type": "message_stop", "amazon-bedrock-invocationMetrics": _metrics(completion)}
            event = orjson.dumps(stop)
        frames.append(_chunk(event))
        # No frame is terminal: the stream ends at EOF (see the module docstring).
        kinds.append(FrameKind.CONTENT if _TEXT_DELTA in event else FrameKind.OTHER)
    return Reply(
        200,
        [EVENTSTREAM_HEADERS, ("x-amzn-RequestId", call.request_id)],
        frames=frames,
        frame_kinds=kinds,
        malformed_frame=MALFORMED_CHUNK,
    )
