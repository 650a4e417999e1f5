"""InvokeModel and InvokeModelWithResponseStream: the body family follows the model id.

* ``amazon.nova-*`` (any profile prefix or ARN naming it): Amazon Nova's ``messages-v1`` body
  (``llmts/providers/bedrock/nova.py``);
* ``amazon.titan-text-*`` and ``amazon.titan-tg1-*``: Amazon Titan Text
  (``llmts/providers/bedrock/titan.py``);
* anything else: the Anthropic-on-Bedrock body, below.

The Anthropic body is Anthropic's Messages body without ``model`` and ``stream`` (the path names the model,
the route decides streaming) and with ``anthropic_version`` (``bedrock-2023-05-31``), so it is parsed and
rendered by the shared Anthropic Messages wire, ``llmts/providers/anthropic_messages/`` (docs/architecture.md,
"Shared wire modules"). What differs is Bedrock's:

* ``invoke`` answers the Anthropic Message JSON with Bedrock's ``X-Amzn-Bedrock-*`` token headers;
* ``invoke-with-response-stream`` wraps each Anthropic stream event's JSON in an event-stream ``chunk``
  message ``{"bytes": "<base64>"}`` (no ``ping``), the last (``message_stop``) carrying
  ``amazon-bedrock-invocationMetrics``. The stream has **no terminal marker**: it ends at EOF after
  ``message_stop``, exactly as the service does (every body family), so no frame is classified terminal
  and a verification that requires one is refused for this operation (docs/providers.md, "AWS Bedrock").
"""

from __future__ import annotations

from typing import Any

import orjson

from llmts.errors import InvalidRequest
from llmts.providers.anthropic_messages.parse import parse_prompt
from llmts.providers.anthropic_messages.render import render_message
from llmts.providers.anthropic_messages.stream import render_message_stream
from llmts.providers.base import ProviderCall, Reply
from llmts.providers.bedrock.chunks import (
    INVOKE,
    INVOKE_STREAM,
    MALFORMED_CHUNK,
    chunk,
    invocation_metrics,
    invoke_headers,
    stream_headers,
)
from llmts.providers.bedrock.embeddings import operation_of_model, parse_model_invoke, render_model_invoke
from llmts.providers.bedrock.nova import parse_nova, render_nova
from llmts.providers.bedrock.titan import parse_titan, render_titan
from llmts.schema.faults import FrameKind
from llmts.schema.neutral import Completion, NeutralRequest, build, reasoning_settings

__all__ = ["INVOKE", "INVOKE_STREAM", "MALFORMED_CHUNK", "invoke_family", "parse_invoke", "render_invoke"]

_TEXT_DELTA = b'"type":"text_delta"'
_DATA = b"\ndata: "
_TITAN_TEXT = ("amazon.titan-text-", "amazon.titan-tg1-")


def invoke_family(model: str) -> str:
    """``nova``, ``titan`` or ``anthropic``: which InvokeModel body ``model`` takes (its base model id may
    follow an inference-profile prefix such as ``us.`` or sit at the end of an ARN)."""
    if "amazon.nova-" in model:
        return "nova"
    if any(prefix in model for prefix in _TITAN_TEXT):
        return "titan"
    return "anthropic"


def parse_invoke(call: ProviderCall, stream: bool) -> NeutralRequest:
    model = call.request.args["model"]
    operation = operation_of_model(model)
    if operation is not None:  # an embedding or rerank model (llmts/providers/bedrock/embeddings.py)
        if stream:
            raise InvalidRequest(f"The model {model} does not support response streaming.")
        return parse_model_invoke(call.request.json_object(), model, operation)
    body = call.request.json_object()
    family = invoke_family(model)
    if family == "nova":
        return parse_nova(body, model, stream)
    if family == "titan":
        return parse_titan(body, model, stream)
    return _parse_anthropic(body, model, stream)


def _parse_anthropic(body: dict[str, Any], model: str, stream: bool) -> NeutralRequest:
    if not isinstance(body.get("anthropic_version"), str):
        raise InvalidRequest("Malformed input request: #: required key [anthropic_version] not found")
    max_tokens = body.get("max_tokens")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        raise InvalidRequest("Malformed input request: #/max_tokens: expected an integer of at least 1")
    # The cached body is shared with the strict rules: the model goes into a copy.
    prompt = parse_prompt({**body, "model": model})
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
        reasoning_settings=reasoning_settings(body.get("thinking")),
        exact_tokens=None,
    )


def render_invoke(call: ProviderCall, request: NeutralRequest, completion: Completion) -> Reply:
    if completion.output.result is not None:
        return render_model_invoke(call, request, completion)
    family = invoke_family(request.model)
    if family == "nova":
        return render_nova(request, completion, call.request_id)
    if family == "titan":
        return render_titan(request, completion, call.request_id)
    message_id = "msg_bdrk_" + completion.response_id
    usage = completion.usage
    if not request.stream:
        reply = render_message(request.model, message_id, completion.output, usage, call.request_id)
        reply.headers = invoke_headers(usage, call.request_id)
        return reply
    sse = render_message_stream(request.model, message_id, completion.output, usage, call.request_id)
    frames: list[bytes] = []
    kinds: list[FrameKind] = []
    for frame in sse.frames or ():
        event = frame[frame.index(_DATA) + len(_DATA) :].rstrip(b"\n")
        if event == b'{"type":"ping"}':
            continue
        if event == b'{"type":"message_stop"}':
            stop = {"type": "message_stop", "amazon-bedrock-invocationMetrics": invocation_metrics(usage)}
            event = orjson.dumps(stop)
        frames.append(chunk(event))
        # No frame is terminal: the stream ends at EOF (see the module docstring).
        kinds.append(FrameKind.CONTENT if _TEXT_DELTA in event else FrameKind.OTHER)
    return Reply(
        200,
        stream_headers(call.request_id),
        frames=frames,
        frame_kinds=kinds,
        malformed_frame=MALFORMED_CHUNK,
    )
