"""Response object -> the Responses SSE event sequence (docs/providers.md).

``event: <type>`` + ``data: {"type", "sequence_number" (0, 1, 2...), ...}`` per event, no ``[DONE]``.
Item ids are the final response's, so they are stable across events; ``response.completed`` carries the
exact bytes of the JSON answer. The SDK's ``responses.stream()`` helper checks: created first, one response
id throughout, every added item done with the same type/id/call_id.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from llmts.providers.openai.native_stream import native_replay_frames, needs_native_stream
from llmts.providers.openai.response_events import ResponseEvents
from llmts.schema.faults import FrameKind

__all__ = ["SSE_HEADERS", "replay_frames", "response_stream_frames"]

SSE_HEADERS = [("Content-Type", "text/event-stream; charset=utf-8"), ("Cache-Control", "no-cache")]
_EMPTY_TEXT_PART = b'{"type":"output_text","text":"","annotations":[],"logprobs":[]}'


def _message_events(events: ResponseEvents, index: int, item: dict[str, Any], pieces: Sequence[str]) -> None:
    item_id = item["id"]
    part = item["content"][0]
    where = b'"item_id":' + orjson.dumps(item_id) + b',"output_index":' + str(index).encode()
    events.add_fields(
        b"response.output_item.added",
        {"output_index": index, "item": {**item, "status": "in_progress", "content": []}},
    )
    events.add(
        b"response.content_part.added", b"," + where + b',"content_index":0,"part":' + _EMPTY_TEXT_PART
    )
    head = b"," + where + b',"content_index":0,"delta":'
    for piece in pieces:
        if piece:
            events.add(
                b"response.output_text.delta",
                head + orjson.dumps(piece) + b',"logprobs":[]',
                FrameKind.CONTENT,
            )
    events.add(
        b"response.output_text.done",
        b"," + where + b',"content_index":0,"text":' + orjson.dumps(part["text"]) + b',"logprobs":[]',
    )
    events.add(
        b"response.content_part.done", b"," + where + b',"content_index":0,"part":' + orjson.dumps(part)
    )
    events.add_fields(b"response.output_item.done", {"output_index": index, "item": item})


def _function_call_events(
    events: ResponseEvents, index: int, item: dict[str, Any], pieces: Sequence[str]
) -> None:
    where = b'"item_id":' + orjson.dumps(item["id"]) + b',"output_index":' + str(index).encode()
    events.add_fields(
        b"response.output_item.added",
        {"output_index": index, "item": {**item, "status": "in_progress", "arguments": ""}},
    )
    head = b"," + where + b',"delta":'
    for piece in pieces:
        if piece:
            events.add(b"response.function_call_arguments.delta", head + orjson.dumps(piece))
    events.add(
        b"response.function_call_arguments.done",
        b","
        + where
        + b',"name":'
        + orjson.dumps(item["name"])
        + b',"arguments":'
        + orjson.dumps(item["arguments"]),
    )
    events.add_fields(b"response.output_item.done", {"output_index": index, "item": item})


def response_stream_frames(
    payload: dict[str, Any], completed_body: bytes, chunks: Sequence[Sequence[str]]
) -> tuple[list[bytes], list[FrameKind]]:
    """(frames, their kinds); ``chunks[i]``: how output item ``i`` streams (text or argument pieces)."""
    events = ResponseEvents()
    in_progress = orjson.dumps(
        {**payload, "status": "in_progress", "completed_at": None, "output": [], "usage": None}
    )
    events.add(b"response.created", b',"response":' + in_progress)
    events.add(b"response.in_progress", b',"response":' + in_progress)
    for index, (item, pieces) in enumerate(zip(payload["output"], chunks, strict=True)):
        if item["type"] == "message":
            _message_events(events, index, item, pieces)
        else:
            _function_call_events(events, index, item, pieces)
    events.add(b"response.completed", b',"response":' + completed_body, FrameKind.TERMINAL)
    return events.frames, events.kinds


def replay_frames(body: bytes, starting_after: int | None) -> tuple[list[bytes], list[FrameKind]]:
    """A stored response as a stream (``GET /responses/{id}?stream=true``): one delta per item."""
    payload = orjson.loads(body)
    if needs_native_stream(payload):
        frames, kinds = native_replay_frames(payload, body)
        start = starting_after + 1 if starting_after is not None and starting_after >= 0 else 0
        return frames[start:], kinds[start:]
    chunks = [
        (item["content"][0]["text"],) if item["type"] == "message" else (item["arguments"],)
        for item in payload["output"]
    ]
    frames, kinds = response_stream_frames(payload, body, chunks)
    # Frame i carries sequence number i.
    start = starting_after + 1 if starting_after is not None and starting_after >= 0 else 0
    return frames[start:], kinds[start:]
