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

import base64
import binascii
from typing import Any

import orjson

from llmts.providers.base import ProviderCall, Reply
from llmts.providers.gemini.parse import STREAM_SSE
from llmts.schema.faults import FrameKind
from llmts.schema.neutral import (
    Completion,
    NeutralReasoning,
    NeutralRequest,
    NeutralToolCall,
    ScriptedOutput,
    Usage,
)

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


def _call_parts(output: ScriptedOutput) -> list[bytes]:
    return [
        orjson.dumps({"functionCall": {"id": call.id, "name": call.name, "args": _args(call)}})
        for call in output.tool_calls
    ]


def _text_part(text: str) -> bytes:
    return b'{"text":' + orjson.dumps(text) + b"}"


_FINISH_REASONS = {"stop": "STOP", "length": "MAX_TOKENS", "content_filter": "SAFETY", "refusal": "SAFETY"}
_SAFETY_CATEGORIES = (
    "HARM_CATEGORY_HATE_SPEECH",
    "HARM_CATEGORY_DANGEROUS_CONTENT",
    "HARM_CATEGORY_HARASSMENT",
    "HARM_CATEGORY_SEXUALLY_EXPLICIT",
)
# A SAFETY stop names the category that blocked the answer (llmts: dangerous content) in its ratings.
_BLOCKED_RATINGS = orjson.dumps(
    [
        {"category": category, "probability": "HIGH", "blocked": True}
        if category == "HARM_CATEGORY_DANGEROUS_CONTENT"
        else {"category": category, "probability": "NEGLIGIBLE"}
        for category in _SAFETY_CATEGORIES
    ]
)


def _signature(reasoning: NeutralReasoning) -> str:
    """``thoughtSignature`` is bytes on the wire (base64): a fixture's non-base64 signature is encoded."""
    try:
        base64.b64decode(reasoning.signature, validate=True)
    except (binascii.Error, ValueError):
        return base64.b64encode(reasoning.signature.encode()).decode()
    return reasoning.signature


def _thought_part(reasoning: NeutralReasoning) -> bytes:
    text = orjson.dumps(reasoning.thinking())
    return (
        b'{"text":'
        + text
        + b',"thought":true,"thoughtSignature":'
        + orjson.dumps(_signature(reasoning))
        + b"}"
    )


def _signed(parts: list[bytes], reasoning: NeutralReasoning | None) -> list[bytes]:
    """A redacted thought sends no thought text, only its signature on the first answer part (as Gemini
    does when thoughts are not included)."""
    if reasoning is None or not reasoning.redacted:
        return parts
    parts = parts or [_EMPTY_TEXT]
    parts[0] = parts[0][:-1] + b',"thoughtSignature":' + orjson.dumps(_signature(reasoning)) + b"}"
    return parts


def _answer_parts(output: ScriptedOutput) -> list[bytes]:
    """Thought part, text part (a refusal's words), function calls: a whole answer's parts."""
    plain = output.kind != "tool_calls" or bool(output.text)
    parts = [_text_part(output.refusal if output.refusal is not None else output.text)] if plain else []
    parts.extend(_call_parts(output))
    reasoning = output.reasoning
    if reasoning is not None and not reasoning.redacted:
        parts.insert(0, _thought_part(reasoning))
    return _signed(parts, reasoning)


def _stream_parts(output: ScriptedOutput) -> tuple[list[bytes], list[FrameKind]]:
    """Each streamed chunk's parts: the thought alone, then one per text chunk (a refusal whole), then
    the calls together; a redacted thought's signature rides on the first of them."""
    chunks: list[bytes] = []
    kinds: list[FrameKind] = []
    reasoning = output.reasoning
    if reasoning is not None and not reasoning.redacted:
        chunks.append(_thought_part(reasoning))
        kinds.append(FrameKind.OTHER)
    if output.refusal is not None:
        chunks.append(_text_part(output.refusal))
        kinds.append(FrameKind.OTHER)
    elif output.kind != "tool_calls" or output.text:
        kind = FrameKind.CONTENT if output.kind != "tool_calls" else FrameKind.OTHER
        for chunk in output.chunks:
            if chunk:
                chunks.append(_text_part(chunk))
                kinds.append(kind)
    if output.tool_calls:
        chunks.append(b",".join(_call_parts(output)))
        kinds.append(FrameKind.OTHER)
    if reasoning is not None and reasoning.redacted and chunks:
        chunks[0] = _signed([chunks[0]], reasoning)[0]
    return chunks, kinds


def _objects(request: NeutralRequest, completion: Completion) -> tuple[list[bytes], list[FrameKind]]:
    """The serialized response objects: the single one of a plain answer, or a stream's with their kinds."""
    tail = (
        b',"modelVersion":'
        + orjson.dumps(request.model)
        + b',"responseId":'
        + orjson.dumps(completion.response_id)
        + b"}"
    )
    output = completion.output
    finish = _FINISH_REASONS[output.finish_reason]
    ratings = b',"safetyRatings":' + _BLOCKED_RATINGS if finish == "SAFETY" else b""
    last = (
        b'],"role":"model"},"finishReason":"'
        + finish.encode()
        + b'"'
        + ratings
        + b',"index":0}],"usageMetadata":'
        + orjson.dumps(usage_metadata(completion.usage))
        + tail
    )
    if not request.stream:
        return [_HEAD + b",".join(_answer_parts(output)) + last], [FrameKind.TERMINAL]
    middle = b'],"role":"model"},"index":0}]' + tail
    parts, kinds = _stream_parts(output)
    objects = [_HEAD + part + middle for part in parts]
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
