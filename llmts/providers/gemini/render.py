"""``Completion`` -> Gemini ``GenerateContentResponse`` JSON, SSE frames or a streamed JSON array
(docs/providers.md).

google-genai validates every field's type with pydantic, so ints stay ints and ``args`` is an object.
Streams send one chunk per configured text chunk, or one chunk with all the (whole) function calls, then
a final chunk with an empty text part, ``finishReason`` and ``usageMetadata`` (real Gemini sends both
this shape and STOP on the last text chunk). ``?alt=sse`` frames are ``data: <json>`` lines
each followed by a blank line (CRLF, as Google sends them) with no ``event:``, comments or ``[DONE]``;
without ``alt`` the body is one JSON array written element by element.
"""

from __future__ import annotations

from typing import Any

import orjson

from llmts.providers.base import ProviderCall, Reply
from llmts.providers.gemini.parse import STREAM_SSE
from llmts.schema.faults import FrameKind
from llmts.schema.neutral import Completion, NeutralRequest, NeutralToolCall, ScriptedOutput, Usage

__all__ = ["render_generate", "usage_metadata"]

_JSON_HEADER = ("Content-Type", "application/json; charset=UTF-8")
_SSE_HEADER = ("Content-Type", "text/event-stream")
_HEAD = b'{"candidates":[{"content":{"parts":['
_SSE_START = b"data: "
_SSE_END = b"\r\n\r\n"
_EMPTY_TEXT = b'{"text":""}'


def usage_metadata(usage: Usage) -> dict[str, Any]:
    """Gemini counts thoughts beside the candidates; llmts's output tokens include the reasoning ones."""
    thoughts = min(usage.reasoning_tokens, usage.output_tokens)
    metadata: dict[str, Any] = {
        "promptTokenCount": usage.input_tokens,
        "candidatesTokenCount": usage.output_tokens - thoughts,
        "totalTokenCount": usage.input_tokens + usage.output_tokens,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": usage.input_tokens}],
    }
    if usage.cached_tokens > 0:
        metadata["cachedContentTokenCount"] = usage.cached_tokens
        metadata["cacheTokensDetails"] = [{"modality": "TEXT", "tokenCount": usage.cached_tokens}]
    if thoughts > 0:
        metadata["thoughtsTokenCount"] = thoughts
    return metadata


def _args(call: NeutralToolCall) -> Any:
    """Gemini ``args`` is a JSON object: a fixture with other arguments is wrapped as ``{"value": ...}``."""
    try:
        value = orjson.loads(call.arguments) if call.arguments else {}
    except orjson.JSONDecodeError:
        return {"value": call.arguments}
    return value if isinstance(value, dict) else {"value": value}


def _call_parts(output: ScriptedOutput) -> bytes:
    return b",".join(
        orjson.dumps({"functionCall": {"id": call.id, "name": call.name, "args": _args(call)}})
        for call in output.tool_calls
    )


def _text_part(text: str) -> bytes:
    return b'{"text":' + orjson.dumps(text) + b"}"


def _objects(request: NeutralRequest, completion: Completion) -> tuple[list[bytes], list[FrameKind]]:
    """The serialized response objects: the single one of a plain answer, or a stream's with their kinds."""
    tail = (
        b',"modelVersion":'
        + orjson.dumps(request.model)
        + b',"responseId":'
        + orjson.dumps(completion.response_id)
        + b"}"
    )
    last = (
        b'],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":'
        + orjson.dumps(usage_metadata(completion.usage))
        + tail
    )
    output = completion.output
    calls = _call_parts(output) if output.kind == "tool_calls" else None
    if not request.stream:
        return [_HEAD + (calls or _text_part(output.text)) + last], [FrameKind.TERMINAL]
    middle = b'],"role":"model"},"index":0}]' + tail
    if calls is not None:
        objects, kinds = [_HEAD + calls + middle], [FrameKind.OTHER]
    else:
        objects = [_HEAD + _text_part(chunk) + middle for chunk in output.chunks if chunk]
        kinds = [FrameKind.CONTENT] * len(objects)
    # A final chunk of its own (empty text: a part-less content would make chats drop the turn), so
    # delivery plans can cut after any text chunk and the terminal evidence means "STOP was sent".
    objects.append(_HEAD + _EMPTY_TEXT + last)
    kinds.append(FrameKind.TERMINAL)
    return objects, kinds


def render_generate(call: ProviderCall, request: NeutralRequest, completion: Completion) -> Reply:
    objects, kinds = _objects(request, completion)
    request_id = ("x-request-id", call.request_id)
    if not request.stream:
        return Reply(200, [_JSON_HEADER, request_id], objects[0])
    if request.operation == STREAM_SSE:
        frames = [_SSE_START + obj + _SSE_END for obj in objects]
        return Reply(200, [_SSE_HEADER, request_id], frames=frames, frame_kinds=kinds)
    # One JSON array, element by element; the closing bracket travels with the terminal element.
    frames = [b",\r\n" + obj for obj in objects]
    frames[0] = b"[" + objects[0]
    frames[-1] += b"]"
    return Reply(200, [_JSON_HEADER, request_id], frames=frames, frame_kinds=kinds)
