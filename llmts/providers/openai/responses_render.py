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
from llmts.schema.neutral import Completion, NeutralMessage, Usage, neutral_message

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


def _output(response_id: str, completion: Completion) -> list[dict[str, Any]]:
    output = completion.output
    if output.kind == "tool_calls":
        return [
            {
                "id": f"fc_{response_id}{index:04x}",
                "type": "function_call",
                "status": "completed",
                "arguments": call.arguments,
                "call_id": call.id,
                "name": call.name,
            }
            for index, call in enumerate(output.tool_calls)
        ]
    return [
        {
            "id": "msg_" + response_id,
            "type": "message",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": output.text, "annotations": [], "logprobs": []}],
        }
    ]


def response_payload(request: ResponsesRequest, completion: Completion) -> dict[str, Any]:
    response_id = completion.response_id
    return {
        "id": "resp_" + response_id,
        "object": "response",
        "created_at": completion.created_at,
        "status": "completed",
        "background": False,
        "completed_at": completion.created_at,
        "error": None,
        "incomplete_details": None,
        "instructions": request.instructions,
        "model": request.model,
        "output": _output(response_id, completion)
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
        text=output.text if output.kind != "tool_calls" else "",
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
        stored = StoredResponse(body, history, items, len(orjson.dumps(items)) if items else 0)
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
    """How each output item streams: text chunks for the message, argument chunks per function call."""
    output = completion.output
    if output.kind == "tool_calls":
        return [call.arguments_chunks or (call.arguments,) for call in output.tool_calls]
    return [output.chunks or (output.text,)]
