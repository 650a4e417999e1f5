"""``Completion`` -> Bedrock ConverseStream event-stream messages (``application/vnd.amazon.eventstream``).

One frame is one event-stream message (``eventstream.py``). Order, as the service sends it:
``messageStart``; for text, ``contentBlockDelta`` per chunk and ``contentBlockStop`` (no block start);
per tool call, ``contentBlockStart`` with ``toolUseId``/``name``, ``contentBlockDelta`` with
``toolUse.input`` pieces, ``contentBlockStop``; ``messageStop`` with the stop reason; ``metadata`` with
usage and metrics. ``messageStop`` and ``metadata`` are the terminal frames (journal
``terminal_marker_observed``); the text deltas are the content frames delivery plans count. The
malformed frame of the ``malformed_frame`` plan is a well-framed ``contentBlockDelta`` whose message CRC
is wrong: botocore's decoder raises ``ChecksumMismatch``.
"""

from __future__ import annotations

from typing import Any

import orjson

from llmts.providers.base import Reply
from llmts.providers.bedrock.eventstream import event_message, with_broken_crc
from llmts.providers.bedrock.render import LATENCY_MS, STOP_REASONS, usage_payload
from llmts.schema.faults import FrameKind
from llmts.schema.neutral import ScriptedOutput, Usage

__all__ = ["EVENTSTREAM_HEADERS", "MALFORMED_EVENT", "render_converse_stream"]

EVENTSTREAM_HEADERS = ("Content-Type", "application/vnd.amazon.eventstream")
MALFORMED_EVENT = with_broken_crc(
    event_message(b"contentBlockDelta", b'{"contentBlockIndex":0,"delta":{"text":"llmts malformed"}}')
)
_MESSAGE_START = event_message(b"messageStart", b'{"role":"assistant"}')


def _event(name: bytes, payload: dict[str, Any]) -> bytes:
    return event_message(name, orjson.dumps(payload))


def render_converse_stream(output: ScriptedOutput, usage: Usage, request_id: str) -> Reply:
    frames = [_MESSAGE_START]
    kinds = [FrameKind.OTHER]
    if output.kind == "tool_calls":
        for index, call in enumerate(output.tool_calls):
            start = {"toolUse": {"toolUseId": call.id, "name": call.name}}
            frames.append(_event(b"contentBlockStart", {"contentBlockIndex": index, "start": start}))
            pieces = [piece for piece in call.arguments_chunks if piece] or [call.arguments]
            frames.extend(
                _event(b"contentBlockDelta", {"contentBlockIndex": index, "delta": {"toolUse": {"input": p}}})
                for p in pieces
            )
            frames.append(_event(b"contentBlockStop", {"contentBlockIndex": index}))
        kinds.extend([FrameKind.OTHER] * (len(frames) - 1))
    else:
        chunks = [chunk for chunk in output.chunks if chunk] or [output.text]
        frames.extend(
            _event(b"contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": chunk}})
            for chunk in chunks
        )
        kinds.extend([FrameKind.CONTENT] * len(chunks))
        frames.append(_event(b"contentBlockStop", {"contentBlockIndex": 0}))
        kinds.append(FrameKind.OTHER)
    frames.append(_event(b"messageStop", {"stopReason": STOP_REASONS[output.kind]}))
    frames.append(_event(b"metadata", {"usage": usage_payload(usage), "metrics": {"latencyMs": LATENCY_MS}}))
    kinds.extend((FrameKind.TERMINAL, FrameKind.TERMINAL))
    return Reply(
        200,
        [EVENTSTREAM_HEADERS, ("x-amzn-RequestId", request_id)],
        frames=frames,
        frame_kinds=kinds,
        malformed_frame=MALFORMED_EVENT,
    )
