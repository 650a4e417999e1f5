"""``Completion`` -> Anthropic Messages SSE frames (docs/providers.md).

Every event carries an ``event:`` line (the SDK drops events without one) and ends with a blank line. One
frame is one event. Order: ``message_start``, per block ``content_block_start`` / deltas /
``content_block_stop`` (a ``ping`` after the first block start, as the API sends it), ``message_delta``
with the stop reason and cumulative usage, ``message_stop``.
"""

from __future__ import annotations

from typing import Any

import orjson

from llmts.providers.anthropic_messages.render import stop_reason as _stop_reason
from llmts.providers.anthropic_messages.render import thinking_block, usage_payload
from llmts.providers.base import Reply, classify_frames
from llmts.schema.neutral import ScriptedOutput, Usage

__all__ = ["render_message_stream"]

_SSE_HEADERS = [("Content-Type", "text/event-stream; charset=utf-8"), ("Cache-Control", "no-cache")]
_PING = b'event: ping\ndata: {"type":"ping"}\n\n'
_MESSAGE_STOP = b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
_TEXT_START = b',"content_block":{"type":"text","text":""}}\n\n'
_DELTA_HEAD = b'event: content_block_delta\ndata: {"type":"content_block_delta","index":'
_TEXT_DELTA = b',"delta":{"type":"text_delta","text":'
_JSON_DELTA = b',"delta":{"type":"input_json_delta","partial_json":'
_START_HEAD = b'event: content_block_start\ndata: {"type":"content_block_start","index":'
_STOP_HEAD = b'event: content_block_stop\ndata: {"type":"content_block_stop","index":'
# The SDK skips frames without an ``event:`` line, so a malformed frame must name an event it parses.
_MALFORMED = b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":\n\n'
# Delivery plans count the text deltas of block 0 (only plain-text answers carry plans).
_TEXT_DELTA_FRAME = _DELTA_HEAD + b"0" + _TEXT_DELTA


def _event(name: bytes, payload: dict[str, Any]) -> bytes:
    return b"event: " + name + b"\ndata: " + orjson.dumps(payload) + b"\n\n"


_THINKING_DELTA = b',"delta":{"type":"thinking_delta","thinking":'
_SIGNATURE_DELTA = b',"delta":{"type":"signature_delta","signature":'


def _thinking(output: ScriptedOutput, frames: list[bytes]) -> None:
    """Block 0: ``thinking`` streamed as one thinking_delta + one signature_delta, or a whole
    ``redacted_thinking`` block (the API sends those complete in their start event)."""
    reasoning = output.reasoning
    assert reasoning is not None
    block = thinking_block(reasoning)
    if reasoning.redacted:
        frames.append(_START_HEAD + b'0,"content_block":' + orjson.dumps(block) + b"}\n\n")
        frames.append(_PING)
    else:
        start = {"type": "thinking", "thinking": "", "signature": ""}
        frames.append(_START_HEAD + b'0,"content_block":' + orjson.dumps(start) + b"}\n\n")
        frames.append(_PING)
        frames.append(_DELTA_HEAD + b"0" + _THINKING_DELTA + orjson.dumps(block["thinking"]) + b"}}\n\n")
        frames.append(_DELTA_HEAD + b"0" + _SIGNATURE_DELTA + orjson.dumps(block["signature"]) + b"}}\n\n")
    frames.append(_STOP_HEAD + b"0}\n\n")


def _blocks(output: ScriptedOutput) -> list[bytes]:
    """Thinking, text (chunked; a refusal's words in one piece), then tool_use blocks, in that order;
    the ping follows the first block start, as the API sends it."""
    frames: list[bytes] = []
    position = 0
    if output.reasoning is not None:
        _thinking(output, frames)
        position = 1
    if output.refusal is not None:
        pieces: tuple[str, ...] = (output.refusal,)
    elif output.kind != "tool_calls" or output.text:
        pieces = output.chunks
    else:
        pieces = ()
    if output.refusal is not None or output.kind != "tool_calls" or output.text:
        index = str(position).encode()
        frames.append(_START_HEAD + index + _TEXT_START)
        if position == 0:
            frames.append(_PING)
        frames.extend(_DELTA_HEAD + index + _TEXT_DELTA + orjson.dumps(c) + b"}}\n\n" for c in pieces if c)
        frames.append(_STOP_HEAD + index + b"}\n\n")
        position += 1
    for call in output.tool_calls:
        index = str(position).encode()
        block = {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}
        frames.append(_START_HEAD + index + b',"content_block":' + orjson.dumps(block) + b"}\n\n")
        if position == 0:
            frames.append(_PING)
        # The API opens every tool input with an empty piece; the SDK accumulates the pieces as JSON.
        pieces = ("", *(piece for piece in call.arguments_chunks if piece))
        frames.extend(_DELTA_HEAD + index + _JSON_DELTA + orjson.dumps(p) + b"}}\n\n" for p in pieces)
        frames.append(_STOP_HEAD + index + b"}\n\n")
        position += 1
    return frames


def render_message_stream(
    model: str, message_id: str, output: ScriptedOutput | None, usage: Usage, request_id: str
) -> Reply:
    """The stream of one Message; ``output`` None is a cache warm-up (``max_tokens: 0``): no blocks."""
    totals = usage_payload(usage)
    start_usage = dict(totals, output_tokens=0)
    message: dict[str, Any] = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": start_usage,
    }
    frames = [_event(b"message_start", {"type": "message_start", "message": message})]
    if output is None:
        frames.append(_PING)
        stop_reason = "max_tokens"
    else:
        frames.extend(_blocks(output))
        stop_reason = _stop_reason(output)
    # message_delta usage is cumulative: the helper overwrites its snapshot with every non-null count.
    delta_usage = {
        "input_tokens": totals["input_tokens"],
        "cache_creation_input_tokens": totals["cache_creation_input_tokens"],
        "cache_read_input_tokens": totals["cache_read_input_tokens"],
        "output_tokens": totals["output_tokens"],
    }
    frames.append(
        _event(
            b"message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": delta_usage,
            },
        )
    )
    frames.append(_MESSAGE_STOP)
    kinds = classify_frames(frames, _TEXT_DELTA_FRAME, _MESSAGE_STOP.__eq__)
    return Reply(
        200,
        [*_SSE_HEADERS, ("request-id", request_id)],
        frames=frames,
        frame_kinds=kinds,
        malformed_frame=_MALFORMED,
    )
