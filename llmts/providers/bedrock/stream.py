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
from llmts.providers.bedrock.render import LATENCY_MS, reasoning_block, stop_reason, usage_payload
from llmts.schema.faults import FrameKind
from llmts.schema.neutral import ScriptedOutput, Usage

__all__ = ["EVENTSTREAM_HEADERS", "MALFORMED_EVENT", "render_converse_stream", "stream_events"]

EVENTSTREAM_HEADERS = ("Content-Type", "application/vnd.amazon.eventstream")
MALFORMED_EVENT = with_broken_crc(
    event_message(b"contentBlockDelta", b'{"contentBlockIndex":0,"delta":{"text":"llmts malformed"}}')
)
_MESSAGE_START = event_message(b"messageStart", b'{"role":"assistant"}')


def _event(name: bytes, payload: dict[str, Any]) -> bytes:
    return event_message(name, orjson.dumps(payload))


def stream_events(
    output: ScriptedOutput, final_usage: dict[str, Any]
) -> list[tuple[FrameKind, bytes, dict[str, Any]]]:
    """The ConverseStream events after ``messageStart`` as (frame kind, event name, payload); the last two,
    ``messageStop`` and ``metadata`` (carrying ``final_usage``), are TERMINAL. Amazon Nova's InvokeModel
    stream sends the same events as JSON chunks (``llmts/providers/bedrock/nova.py``)."""
    events: list[tuple[FrameKind, bytes, dict[str, Any]]] = []
    index = 0
    if output.reasoning is not None:  # one reasoning block first: its text (or redacted blob), signature
        reasoning = output.reasoning
        if reasoning.redacted:
            pieces = [{"redactedContent": reasoning_block(reasoning)["redactedContent"]}]
        else:
            pieces = [{"text": reasoning.thinking()}, {"signature": reasoning.signature}]
        for piece in pieces:
            delta = {"contentBlockIndex": 0, "delta": {"reasoningContent": piece}}
            events.append((FrameKind.OTHER, b"contentBlockDelta", delta))
        events.append((FrameKind.OTHER, b"contentBlockStop", {"contentBlockIndex": 0}))
        index = 1
    text = output.refusal if output.refusal is not None else output.text
    if text or output.kind != "tool_calls":  # text blocks have no contentBlockStart, as the service sends
        chunks = [chunk for chunk in output.chunks if chunk] if output.refusal is None else []
        for chunk in chunks or [text]:
            delta = {"contentBlockIndex": index, "delta": {"text": chunk}}
            events.append((FrameKind.CONTENT, b"contentBlockDelta", delta))
        events.append((FrameKind.OTHER, b"contentBlockStop", {"contentBlockIndex": index}))
        index += 1
    for call in output.tool_calls:
        start = {"toolUse": {"toolUseId": call.id, "name": call.name}}
        events.append((FrameKind.OTHER, b"contentBlockStart", {"contentBlockIndex": index, "start": start}))
        for argument in [p for p in call.arguments_chunks if p] or [call.arguments]:
            delta = {"contentBlockIndex": index, "delta": {"toolUse": {"input": argument}}}
            events.append((FrameKind.OTHER, b"contentBlockDelta", delta))
        events.append((FrameKind.OTHER, b"contentBlockStop", {"contentBlockIndex": index}))
        index += 1
    events.append((FrameKind.TERMINAL, b"messageStop", {"stopReason": stop_reason(output)}))
    events.append((FrameKind.TERMINAL, b"metadata", final_usage))
    return events


def render_converse_stream(output: ScriptedOutput, usage: Usage, request_id: str) -> Reply:
    final = {"usage": usage_payload(usage), "metrics": {"latencyMs": LATENCY_MS}}
    frames = [_MESSAGE_START]
    kinds = [FrameKind.OTHER]
    for kind, name, payload in stream_events(output, final):
        frames.append(_event(name, payload))
        kinds.append(kind)
    return Reply(
        200,
        [EVENTSTREAM_HEADERS, ("x-amzn-RequestId", request_id)],
        frames=frames,
        frame_kinds=kinds,
        malformed_frame=MALFORMED_EVENT,
    )
