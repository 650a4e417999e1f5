"""``Completion`` -> a Cohere v2 chat answer: one JSON body, or the SSE event stream
(docs/providers.md "Cohere").

JSON: ``{"id", "finish_reason", "message": {"role", "content" + "citations"? | "tool_plan" + "tool_calls"},
"usage"}``. Stream: one event per frame, each ``event: <type>`` plus ``data: <json with the same "type">``
and a blank line (the SDK reads the JSON ``type``): ``message-start``; for text ``content-start``, one
``content-delta`` per chunk, ``citation-start`` + ``citation-end`` per citation, ``content-end``; for
tool calls ``tool-plan-delta`` then per call ``tool-call-start`` (arguments ``""``), ``tool-call-delta``
per arguments chunk, ``tool-call-end``; finally ``message-end`` with the finish reason and usage, the
stream's terminal marker.

Reasoning (a fixture's ``reasoning``, docs/realistic-answers.md) is a ``thinking`` content block first:
``{"type": "thinking", "thinking"}`` before the text (the text block moves to index 1), or the only
content beside ``tool_plan`` and ``tool_calls``; streamed as its own ``content-start`` (type
``thinking``), one ``content-delta`` with ``delta.message.content.thinking`` and ``content-end`` at index
0. Cohere has no redacted reasoning and no signature: a redacted reasoning sends no block.

Cohere's models always state a plan before calling tools (``tool_plan``). A fixture that scripts tool
calls only gets a plan naming the tools (``I will use get_weather.``), so code that reads the plan sees
what a real model sends.
"""

from __future__ import annotations

from typing import Any

import orjson

from llmts.providers.base import Reply, classify_frames
from llmts.schema.neutral import ScriptedOutput, Usage

__all__ = [
    "FINISH_REASONS",
    "finish_reason",
    "render_chat",
    "render_chat_stream",
    "tool_plan",
    "usage_payload",
]

FINISH_REASONS = {"text": "COMPLETE", "json": "COMPLETE", "tool_calls": "TOOL_CALL"}

_JSON_HEADERS = ("Content-Type", "application/json")
_SSE_HEADERS = [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")]
_CONTENT_DELTA = (
    b'event: content-delta\ndata: {"type":"content-delta","index":0,"delta":{"message":{"content":{"text":'
)
# The text block's events when a thinking block (index 0) precedes it.
_AFTER_THINKING_DELTA = _CONTENT_DELTA.replace(b'"index":0', b'"index":1')
_MESSAGE_END = b"event: message-end\n"
_CONTENT_START = (
    b'event: content-start\ndata: {"type":"content-start","index":0,'
    b'"delta":{"message":{"content":{"type":"text","text":""}}}}\n\n'
)
_CONTENT_END = b'event: content-end\ndata: {"type":"content-end","index":0}\n\n'


def _thinking(output: ScriptedOutput) -> str | None:
    """The reasoning text Cohere shows (none for a redacted reasoning: Cohere has no such block)."""
    reasoning = output.reasoning
    return None if reasoning is None or reasoning.redacted else reasoning.thinking()


def finish_reason(output: ScriptedOutput) -> str:
    """Cohere's value: ``MAX_TOKENS`` for a ``length`` fixture; Cohere has no content-filter or refusal
    reason, so those (and ``stop``) end as the output's kind does."""
    return "MAX_TOKENS" if output.finish_reason == "length" else FINISH_REASONS[output.kind]


def usage_payload(usage: Usage) -> dict[str, Any]:
    """Cohere reports what it bills and what the model saw; llmts has no prompt template, so both agree."""
    tokens = {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}
    return {"billed_units": dict(tokens), "tokens": tokens, "cached_tokens": usage.cached_tokens}


def tool_plan(output: ScriptedOutput) -> str:
    """The plan stated before the calls: the scripted text if any, else one naming the tools."""
    if output.text:
        return output.text
    names = list(dict.fromkeys(call.name for call in output.tool_calls))
    return f"I will use {', '.join(names)}."


def _tool_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def render_chat(
    response_id: str,
    output: ScriptedOutput,
    usage: Usage,
    request_id: str,
    citations: list[dict[str, Any]],
) -> Reply:
    message: dict[str, Any] = {"role": "assistant"}
    thinking = _thinking(output)
    content: list[dict[str, Any]] = [] if thinking is None else [{"type": "thinking", "thinking": thinking}]
    if output.kind == "tool_calls":
        if content:
            message["content"] = content
        message["tool_plan"] = tool_plan(output)
        message["tool_calls"] = [_tool_call(c.id, c.name, c.arguments) for c in output.tool_calls]
    else:
        # JSON fixtures answer ``response_format`` requests: the JSON text is the text content.
        # A refusal fixture is the model's refusal sentence: Cohere has no separate refusal field.
        text = output.text if output.refusal is None else output.refusal
        message["content"] = [*content, {"type": "text", "text": text}]
        if citations:
            message["citations"] = citations
    payload = {
        "id": response_id,
        "finish_reason": finish_reason(output),
        "message": message,
        "usage": usage_payload(usage),
    }
    return Reply(200, [_JSON_HEADERS, ("x-request-id", request_id)], orjson.dumps(payload))


def _event(payload: dict[str, Any]) -> bytes:
    name: str = payload["type"]
    return b"event: " + name.encode() + b"\ndata: " + orjson.dumps(payload) + b"\n\n"


def _tool_frames(output: ScriptedOutput) -> list[bytes]:
    frames = [_event({"type": "tool-plan-delta", "delta": {"message": {"tool_plan": tool_plan(output)}}})]
    for index, call in enumerate(output.tool_calls):
        start = {"tool_calls": _tool_call(call.id, call.name, "")}
        frames.append(_event({"type": "tool-call-start", "index": index, "delta": {"message": start}}))
        for piece in call.arguments_chunks or (call.arguments,):
            if piece:
                delta = {"tool_calls": {"function": {"arguments": piece}}}
                frames.append(
                    _event({"type": "tool-call-delta", "index": index, "delta": {"message": delta}})
                )
        frames.append(_event({"type": "tool-call-end", "index": index}))
    return frames


def _thinking_frames(thinking: str) -> list[bytes]:
    start = {"message": {"content": {"type": "thinking", "thinking": ""}}}
    delta = {"message": {"content": {"thinking": thinking}}}
    return [
        _event({"type": "content-start", "index": 0, "delta": start}),
        _event({"type": "content-delta", "index": 0, "delta": delta}),
        _CONTENT_END,
    ]


def render_chat_stream(
    response_id: str,
    output: ScriptedOutput,
    usage: Usage,
    request_id: str,
    citations: list[dict[str, Any]],
) -> Reply:
    start = {"role": "assistant", "content": [], "tool_plan": "", "tool_calls": [], "citations": []}
    frames = [_event({"type": "message-start", "id": response_id, "delta": {"message": start}})]
    thinking = _thinking(output)
    delta_prefix = _CONTENT_DELTA
    if thinking is not None:
        frames.extend(_thinking_frames(thinking))
        delta_prefix = _AFTER_THINKING_DELTA
    if output.kind == "tool_calls":
        frames.extend(_tool_frames(output))
    else:
        index = b"0" if thinking is None else b"1"
        frames.append(_CONTENT_START.replace(b'"index":0', b'"index":' + index))
        chunks = output.chunks if output.refusal is None else (output.refusal,)
        frames.extend(delta_prefix + orjson.dumps(chunk) + b"}}}}\n\n" for chunk in chunks if chunk)
        for c_index, citation in enumerate(citations):
            delta = {"message": {"citations": citation}}
            frames.append(_event({"type": "citation-start", "index": c_index, "delta": delta}))
            frames.append(_event({"type": "citation-end", "index": c_index}))
        frames.append(_CONTENT_END.replace(b'"index":0', b'"index":' + index))
    end = {"finish_reason": finish_reason(output), "usage": usage_payload(usage)}
    frames.append(_event({"type": "message-end", "delta": end}))
    kinds = classify_frames(frames, delta_prefix, lambda frame: frame.startswith(_MESSAGE_END))
    return Reply(200, [*_SSE_HEADERS, ("x-request-id", request_id)], frames=frames, frame_kinds=kinds)
