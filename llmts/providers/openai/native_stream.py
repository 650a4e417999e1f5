"""A Response with native items -> its SSE event sequence (docs/providers.md).

``response.created``, ``response.in_progress``, then per output item:

* message: ``output_item.added``, ``content_part.added``, ``output_text.delta`` per piece (the counted
  content frames) with ``output_text.annotation.added`` per citation, in citation order, as soon as the
  text it anchors on was sent; ``output_text.done``, ``content_part.done``, ``output_item.done``;
* ``file_search_call`` / ``web_search_call``: added (in progress; no results yet, the action already),
  ``.in_progress``, ``.searching``, ``.completed``, done;
* ``code_interpreter_call``: added, ``.in_progress``, ``code_interpreter_call_code.delta`` per piece and
  ``code_interpreter_call_code.done`` when code is not null, ``.interpreting``, ``.completed``, done
  (logs and images arrive with the done item: no invented output deltas);

and ``response.completed`` (the terminal frame) with the exact bytes of the JSON answer.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import orjson

from llmts.providers.openai.response_events import ResponseEvents
from llmts.schema.faults import FrameKind

__all__ = ["NATIVE_ITEM_TYPES", "native_replay_frames", "native_stream_frames", "needs_native_stream"]

NATIVE_ITEM_TYPES = frozenset({"web_search_call", "file_search_call", "code_interpreter_call"})
_SEARCH_PHASES = (b"in_progress", b"searching", b"completed")


def _anchor(annotation: dict[str, Any]) -> int:
    return int(annotation["index"] if annotation["type"] == "file_citation" else annotation["end_index"])


def _message(events: ResponseEvents, index: int, item: dict[str, Any], pieces: Sequence[str]) -> None:
    part = item["content"][0]
    where = {"item_id": item["id"], "output_index": index, "content_index": 0}
    events.add_fields(
        b"response.output_item.added",
        {"output_index": index, "item": {**item, "status": "in_progress", "content": []}},
    )
    events.add_fields(
        b"response.content_part.added",
        {**where, "part": {"type": "output_text", "text": "", "annotations": [], "logprobs": []}},
    )
    annotations = part["annotations"]
    pending = 0
    sent = 0

    def flush(upto: int) -> None:
        nonlocal pending
        while pending < len(annotations) and _anchor(annotations[pending]) <= upto:
            events.add_fields(
                b"response.output_text.annotation.added",
                {**where, "annotation_index": pending, "annotation": annotations[pending]},
            )
            pending += 1

    flush(0)
    head = (
        b',"item_id":'
        + orjson.dumps(item["id"])
        + b',"output_index":'
        + str(index).encode()
        + b',"content_index":0,"delta":'
    )
    for piece in pieces:
        if piece:
            events.add(
                b"response.output_text.delta",
                head + orjson.dumps(piece) + b',"logprobs":[]',
                FrameKind.CONTENT,
            )
            sent += len(piece)
            flush(sent)
    flush(sys.maxsize)  # anchors beyond the pieces sent (a replay of an edited body): still announced
    events.add_fields(b"response.output_text.done", {**where, "text": part["text"], "logprobs": []})
    events.add_fields(b"response.content_part.done", {**where, "part": part})
    events.add_fields(b"response.output_item.done", {"output_index": index, "item": item})


def _search(events: ResponseEvents, index: int, item: dict[str, Any]) -> None:
    kind = item["type"].encode()
    if item["type"] == "file_search_call":
        added = {
            "id": item["id"],
            "type": item["type"],
            "status": "in_progress",
            "queries": [],
            "results": None,
        }
    else:  # the SDK's strict event validation requires the web search action up front
        added = {**item, "status": "in_progress"}
    events.add_fields(b"response.output_item.added", {"output_index": index, "item": added})
    for phase in _SEARCH_PHASES:
        events.add_fields(b"response." + kind + b"." + phase, {"output_index": index, "item_id": item["id"]})
    events.add_fields(b"response.output_item.done", {"output_index": index, "item": item})


def _code(events: ResponseEvents, index: int, item: dict[str, Any], pieces: Sequence[str]) -> None:
    where = {"output_index": index, "item_id": item["id"]}
    code = item["code"]
    added = {**item, "status": "in_progress", "code": "" if code is not None else None, "outputs": None}
    events.add_fields(b"response.output_item.added", {"output_index": index, "item": added})
    events.add_fields(b"response.code_interpreter_call.in_progress", where)
    if code is not None:
        for piece in pieces:
            if piece:
                events.add_fields(b"response.code_interpreter_call_code.delta", {**where, "delta": piece})
        events.add_fields(b"response.code_interpreter_call_code.done", {**where, "code": code})
    events.add_fields(b"response.code_interpreter_call.interpreting", where)
    events.add_fields(b"response.code_interpreter_call.completed", where)
    events.add_fields(b"response.output_item.done", {"output_index": index, "item": item})


def native_stream_frames(
    payload: dict[str, Any], completed_body: bytes, chunks: Sequence[Sequence[str]]
) -> tuple[list[bytes], list[FrameKind]]:
    """(frames, their kinds); ``chunks[i]``: how output item ``i`` streams (message or code pieces)."""
    events = ResponseEvents()
    in_progress = orjson.dumps(
        {**payload, "status": "in_progress", "completed_at": None, "output": [], "usage": None}
    )
    events.add(b"response.created", b',"response":' + in_progress, FrameKind.OTHER)
    events.add(b"response.in_progress", b',"response":' + in_progress, FrameKind.OTHER)
    for index, (item, pieces) in enumerate(zip(payload["output"], chunks, strict=True)):
        if item["type"] == "message":
            _message(events, index, item, pieces)
        elif item["type"] == "code_interpreter_call":
            _code(events, index, item, pieces)
        else:
            _search(events, index, item)
    events.add(b"response.completed", b',"response":' + completed_body, FrameKind.TERMINAL)
    return events.frames, events.kinds


def needs_native_stream(payload: dict[str, Any]) -> bool:
    """Whether a stored Response has native items or citations (the plain stream cannot replay it)."""
    for item in payload.get("output") or ():
        if item.get("type") in NATIVE_ITEM_TYPES:
            return True
        if item.get("type") == "message" and any(
            part.get("annotations") for part in item.get("content") or ()
        ):
            return True
    return False


def native_replay_frames(payload: dict[str, Any], body: bytes) -> tuple[list[bytes], list[FrameKind]]:
    """A stored native Response as a stream: one delta per message and per non-null code."""
    chunks: list[tuple[str, ...]] = []
    for item in payload["output"]:
        if item["type"] == "message":
            chunks.append((item["content"][0]["text"],))
        elif item["type"] == "code_interpreter_call" and item["code"] is not None:
            chunks.append((item["code"],))
        else:
            chunks.append(())
    return native_stream_frames(payload, body, chunks)
