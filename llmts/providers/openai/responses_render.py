"""``Completion`` -> OpenAI Response object (docs/providers.md), stored before the reply leaves.

One payload serves the JSON answer, the ``response.completed`` stream event and ``GET /responses/{id}``:
it is serialized once and those three are byte-identical.
"""

from __future__ import annotations

from typing import Any

import orjson

from llmts.providers.base import ProviderCall, Reply
from llmts.providers.openai.native_items import native_chunks, native_output
from llmts.providers.openai.native_stream import native_stream_frames
from llmts.providers.openai.responses_parse import ResponsesRequest
from llmts.providers.openai.responses_store import StoredResponse, save_stored
from llmts.providers.openai.responses_stream import SSE_HEADERS, response_stream_frames
from llmts.runtime.resident_size import json_size
from llmts.schema.neutral import Completion, NeutralMessage, NeutralReasoning, Usage, neutral_message

__all__ = ["render_response", "response_payload", "responses_usage"]

_JSON_HEADER = ("Content-Type", "application/json")


def responses_usage(usage: Usage) -> dict[str, Any]:
    return {
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {
            "cached_tokens": usage.cached_tokens,
            "cache_write_tokens": usage.cache_write_tokens,
        },
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
        "total_tokens": usage.input_tokens + usage.output_tokens,
    }


# Finish reasons that end a Response early: ``status: incomplete`` with this ``incomplete_details.reason``.
_INCOMPLETE = {"length": "max_output_tokens", "content_filter": "content_filter"}
_ENCRYPTED = "reasoning.encrypted_content"


def _reasoning_item(response_id: str, reasoning: NeutralReasoning, include: frozenset[str]) -> dict[str, Any]:
    """Summaries as ``summary_text`` parts; raw reasoning text (open-weight models) as ``content``."""
    item: dict[str, Any] = {
        "id": "rs_" + response_id,
        "type": "reasoning",
        "summary": []
        if reasoning.redacted
        else [{"type": "summary_text", "text": s} for s in reasoning.summary],
    }
    if reasoning.text and not reasoning.redacted:
        item["content"] = [{"type": "reasoning_text", "text": reasoning.text}]
    if _ENCRYPTED in include:
        item["encrypted_content"] = reasoning.signature
    return item


def _output(response_id: str, completion: Completion, include: frozenset[str]) -> list[dict[str, Any]]:
    """Reasoning first, then the message (text or refusal), then the function calls."""
    output = completion.output
    status = "incomplete" if output.finish_reason in _INCOMPLETE else "completed"
    items: list[dict[str, Any]] = []
    if output.reasoning is not None:
        items.append(_reasoning_item(response_id, output.reasoning, include))
    if output.refusal is not None:
        part: dict[str, Any] = {"type": "refusal", "refusal": output.refusal}
    elif output.kind != "tool_calls" or output.text:
        part = {"type": "output_text", "text": output.text, "annotations": [], "logprobs": []}
    else:
        part = {}
    if part:
        items.append(
            {
                "id": "msg_" + response_id,
                "type": "message",
                "status": status,
                "role": "assistant",
                "content": [part],
            }
        )
    items.extend(
        {
            "id": f"fc_{response_id}{index:04x}",
            "type": "function_call",
            "status": "completed",
            "arguments": call.arguments,
            "call_id": call.id,
            "name": call.name,
        }
        for index, call in enumerate(output.tool_calls)
    )
    return items


def response_payload(request: ResponsesRequest, completion: Completion) -> dict[str, Any]:
    response_id = completion.response_id
    incomplete = _INCOMPLETE.get(completion.output.finish_reason)
    return {
        "id": "resp_" + response_id,
        "object": "response",
        "created_at": completion.created_at,
        "status": "incomplete" if incomplete else "completed",
        "background": False,
        "completed_at": None if incomplete else completion.created_at,
        "error": None,
        "incomplete_details": {"reason": incomplete} if incomplete else None,
        "instructions": request.instructions,
        "model": request.model,
        "output": _output(response_id, completion, _include(request))
        if completion.output.native is None
        else native_output(response_id, completion.output.native, _include(request)),
        "previous_response_id": request.previous_response_id,
        "service_tier": "default",
        "store": request.store,
        "top_logprobs": 0,
        **request.echo,
        "usage": responses_usage(completion.usage),
    }


def _include(request: ResponsesRequest) -> frozenset[str]:
    return request.native.include if request.native is not None else frozenset()


def _assistant_turn(completion: Completion) -> NeutralMessage:
    output = completion.output
    return neutral_message(
        role="assistant",
        text=output.text,
        tool_calls=output.tool_calls,
        tool_call_id=None,
    )


def _input_items(request: ResponsesRequest, response_id: str) -> tuple[dict[str, Any], ...]:
    """The request's input items with ids, as ``GET /responses/{id}/input_items`` lists them."""
    items = []
    for index, item in enumerate(request.input_items):
        prefix = {"message": "msg_", "function_call": "fc_"}.get(item["type"], "fco_")
        items.append({"id": f"{prefix}{response_id}i{index:04x}", **item, "status": "completed"})
    return tuple(items)


def render_response(
    call: ProviderCall, request: ResponsesRequest, completion: Completion, store_namespace: str
) -> Reply:
    payload = response_payload(request, completion)
    body = orjson.dumps(payload)
    if request.store:
        # Commit before delivery: a later request may name this id as soon as the client has seen it.
        items = _input_items(request, completion.response_id)
        history = (*request.messages[request.history_start :], _assistant_turn(completion))
        stored = StoredResponse(body, history, items, json_size(orjson.dumps(items)) if items else 0)
        save_stored(call.session, store_namespace, payload["id"], stored)
    headers = [("x-request-id", call.request_id)]
    if request.stream:
        native = completion.output.native
        if native is not None:  # native items: their own event sequence (native_stream.py)
            frames, kinds = native_stream_frames(payload, body, native_chunks(native))
        else:
            frames, kinds = response_stream_frames(payload, body, _chunks(completion))
        return Reply(200, [*SSE_HEADERS, *headers], frames=frames, frame_kinds=kinds)
    return Reply(200, [_JSON_HEADER, *headers], body)


def _chunks(completion: Completion) -> list[tuple[str, ...]]:
    """How each output item streams: reasoning as one delta per part, the message's text chunks (a
    refusal in one piece), argument chunks per function call."""
    output = completion.output
    chunks: list[tuple[str, ...]] = []
    if output.reasoning is not None:
        chunks.append(())  # reasoning parts stream whole (responses_stream.py)
    if output.refusal is not None:
        chunks.append((output.refusal,))
    elif output.kind != "tool_calls" or output.text:
        chunks.append(output.chunks or (output.text,))
    chunks.extend(call.arguments_chunks or (call.arguments,) for call in output.tool_calls)
    return chunks
