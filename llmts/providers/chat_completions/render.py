"""``Completion`` -> OpenAI Chat Completions JSON or SSE frames (docs/providers.md).

Stream frames are assembled from byte templates: every frame is ``head + rest``, where the head (id,
created, model) is serialized once per request and the rests (a choice's deltas and tails) depend only on
the fixture, so they are serialized once per fixture and kept in its ``render_memo``.
"""

from __future__ import annotations

from typing import Any

import orjson

from llmts.providers.base import Reply
from llmts.schema.faults import FrameKind
from llmts.schema.neutral import Completion, NeutralRequest, ScriptedOutput, Usage, output_memo, remember

__all__ = [
    "chat_completion_payload",
    "render_chat_completion",
    "render_chat_stream",
    "usage_bytes",
    "usage_payload",
]

_JSON_HEADERS = ("Content-Type", "application/json")
_SSE_HEADERS = [("Content-Type", "text/event-stream; charset=utf-8"), ("Cache-Control", "no-cache")]
_DONE = b"data: [DONE]\n\n"
# Neutral finish reasons -> Chat's; a refusal ends with ``stop`` (the refusal is in ``message.refusal``).
_FINISH_REASONS = {"stop": "stop", "length": "length", "content_filter": "content_filter", "refusal": "stop"}


def _finish_reason(output: ScriptedOutput) -> str:
    if output.finish_reason == "stop" and output.kind == "tool_calls":
        return "tool_calls"
    return _FINISH_REASONS[output.finish_reason]


def usage_payload(usage: Usage) -> dict[str, Any]:
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
        "prompt_tokens_details": {
            "cached_tokens": usage.cached_tokens,
            "audio_tokens": 0,
            "cache_write_tokens": usage.cache_write_tokens,
        },
        "completion_tokens_details": {
            "reasoning_tokens": usage.reasoning_tokens,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


# ``usage_payload`` serialized by orjson, as a template: the stream's usage frame is built on every
# streamed request that asks for usage (a test checks the two stay byte-identical).
_USAGE_TEMPLATE = (
    b'{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d,"prompt_tokens_details":'
    b'{"cached_tokens":%d,"audio_tokens":0,"cache_write_tokens":%d},"completion_tokens_details":'
    b'{"reasoning_tokens":%d,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}'
)


def usage_bytes(usage: Usage) -> bytes:
    """``orjson.dumps(usage_payload(usage))``, without building the dict."""
    return _USAGE_TEMPLATE % (
        usage.input_tokens,
        usage.output_tokens,
        usage.input_tokens + usage.output_tokens,
        usage.cached_tokens,
        usage.cache_write_tokens,
        usage.reasoning_tokens,
    )


def _message(output: ScriptedOutput) -> dict[str, Any]:
    if output.kind == "tool_calls":
        return {
            "role": "assistant",
            "content": output.text or None,  # a mixed answer's text comes with its calls
            "refusal": None,
            "annotations": [],
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for call in output.tool_calls
            ],
        }
    if output.refusal is not None:
        return {"role": "assistant", "content": None, "refusal": output.refusal, "annotations": []}
    return {"role": "assistant", "content": output.text, "refusal": None, "annotations": []}


def _thinking(output: ScriptedOutput) -> str:
    """The fixture's reasoning as plain text (a redacted reasoning has none to show)."""
    reasoning = output.reasoning
    return reasoning.thinking() if reasoning is not None and not reasoning.redacted else ""


def _with_reasoning(message: dict[str, Any], output: ScriptedOutput, field: str | None) -> dict[str, Any]:
    if field is not None and (thinking := _thinking(output)):
        message[field] = thinking
    return message


def chat_completion_payload(
    request: NeutralRequest, completion: Completion, reasoning_field: str | None = None
) -> dict[str, Any]:
    """``reasoning_field``: where a surface that shows reasoning on this wire puts it (Ollama's
    OpenAI-compatible API: ``reasoning``); OpenAI's own Chat Completions shows none."""
    return {
        "id": "chatcmpl-" + completion.response_id,
        "object": "chat.completion",
        "created": completion.created_at,
        "model": request.model,
        "choices": [
            {
                "index": index,
                "message": _with_reasoning(_message(output), output, reasoning_field),
                "logprobs": None,
                "finish_reason": _finish_reason(output),
            }
            for index, output in enumerate((completion.output, *completion.more_choices))
        ],
        "usage": usage_payload(completion.usage),
        "service_tier": "default",
        "system_fingerprint": None,
    }


def _choice_bytes(index: int, output: ScriptedOutput, reasoning_field: str | None) -> bytes:
    """One serialized entry of ``choices``; it depends on the fixture alone, so it is kept in its memo."""
    key = ("chat.completion", index, reasoning_field)
    memo: bytes | None = output_memo(output, key)
    if memo is None:
        choice = {
            "index": index,
            "message": _with_reasoning(_message(output), output, reasoning_field),
            "logprobs": None,
            "finish_reason": _finish_reason(output),
        }
        memo = orjson.dumps(choice)
        remember(output, key, memo)
    return memo


def render_chat_completion(
    request: NeutralRequest, completion: Completion, request_id: str, reasoning_field: str | None = None
) -> Reply:
    """``orjson.dumps(chat_completion_payload(...))``, assembled from the per-request values and the
    fixture's memoized choices (a test keeps the two byte-identical)."""
    outputs = (completion.output, *completion.more_choices)
    body = b"".join(
        (
            b'{"id":"chatcmpl-',
            completion.response_id.encode(),
            b'","object":"chat.completion","created":',
            str(completion.created_at).encode(),
            b',"model":',
            orjson.dumps(request.model),
            b',"choices":[',
            b",".join(
                [_choice_bytes(index, output, reasoning_field) for index, output in enumerate(outputs)]
            ),
            b'],"usage":',
            usage_bytes(completion.usage),
            b',"service_tier":"default","system_fingerprint":null}',
        )
    )
    return Reply(200, [_JSON_HEADERS, ("x-request-id", request_id)], body)


def _choice_rests(
    usage_tail: bytes, index: int, output: ScriptedOutput, reasoning_field: str | None
) -> tuple[list[bytes], list[FrameKind]]:
    """One choice's frames after the head (role, reasoning where the surface shows it, content or
    tool-call deltas, finish) and their kinds."""
    delta_head = b'[{"index":' + str(index).encode() + b',"delta":'
    delta_tail = b',"logprobs":null,"finish_reason":null}]' + usage_tail

    def frame(delta: dict[str, Any]) -> bytes:
        return delta_head + orjson.dumps(delta) + delta_tail

    frames: list[bytes] = []
    thinking = _thinking(output) if reasoning_field is not None else ""
    leading = 1  # frames before the content deltas
    if output.refusal is not None:
        frames.append(frame({"role": "assistant", "content": None, "refusal": ""}))
        frames.append(frame({"refusal": output.refusal}))
    elif output.kind == "tool_calls" and not output.text:
        frames.append(frame({"role": "assistant", "content": None, "refusal": None}))
    else:
        frames.append(frame({"role": "assistant", "content": "", "refusal": None}))
        if thinking and reasoning_field is not None:  # before the content, as Ollama streams it
            frames.append(frame({"content": "", reasoning_field: thinking}))
        leading = len(frames)
        content_head = delta_head + b'{"content":'
        content_tail = b"}" + delta_tail
        frames.extend(content_head + orjson.dumps(chunk) + content_tail for chunk in output.chunks if chunk)
    # Delivery plans count the content deltas of plain-text answers; everything after them is ending.
    content_frames = len(frames) - leading if output.kind != "tool_calls" and output.refusal is None else 0
    for call_index, call in enumerate(output.tool_calls):
        # id, type and name only in the first delta of each index: the SDK helper concatenates strings.
        frames.append(
            frame(
                {
                    "tool_calls": [
                        {
                            "index": call_index,
                            "id": call.id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": ""},
                        }
                    ]
                }
            )
        )
        frames.extend(
            frame({"tool_calls": [{"index": call_index, "function": {"arguments": piece}}]})
            for piece in call.arguments_chunks
            if piece
        )
    finish = _finish_reason(output).encode()
    frames.append(delta_head + b'{},"logprobs":null,"finish_reason":"' + finish + b'"}]' + usage_tail)
    kinds = [FrameKind.OTHER] * leading + [FrameKind.CONTENT] * content_frames
    kinds += [FrameKind.OTHER] * (len(frames) - len(kinds))
    return frames, kinds


def _choice_frames(
    head: bytes, usage_tail: bytes, index: int, output: ScriptedOutput, reasoning_field: str | None
) -> tuple[list[bytes], list[FrameKind]]:
    key = ("chat.completions", usage_tail, index, reasoning_field)
    memo: tuple[list[bytes], list[FrameKind]] | None = output_memo(output, key)
    if memo is None:
        memo = _choice_rests(usage_tail, index, output, reasoning_field)
        remember(output, key, memo)
    rests, kinds = memo
    return [head + rest for rest in rests], list(kinds)


def render_chat_stream(
    request: NeutralRequest, completion: Completion, request_id: str, reasoning_field: str | None = None
) -> Reply:
    head = (
        b'data: {"id":"chatcmpl-'
        + completion.response_id.encode()
        + b'","object":"chat.completion.chunk","created":'
        + str(completion.created_at).encode()
        + b',"model":'
        + orjson.dumps(request.model)
        + b',"service_tier":"default","system_fingerprint":null,"choices":'
    )
    usage_tail = b',"usage":null}\n\n' if request.stream_include_usage else b"}\n\n"
    frames, kinds = _choice_frames(head, usage_tail, 0, completion.output, reasoning_field)
    if completion.more_choices:
        # n > 1: each chunk carries one choice; the choices advance side by side, as the API's do.
        per_choice = [(frames, kinds)] + [
            _choice_frames(head, usage_tail, index, output, reasoning_field)
            for index, output in enumerate(completion.more_choices, start=1)
        ]
        frames, kinds = [], []
        for step in range(max(len(choice_frames) for choice_frames, _ in per_choice)):
            for choice_frames, choice_kinds in per_choice:
                if step < len(choice_frames):
                    frames.append(choice_frames[step])
                    kinds.append(choice_kinds[step])
    if request.stream_include_usage:
        frames.append(head + b'[],"usage":' + usage_bytes(completion.usage) + b"}\n\n")
        kinds.append(FrameKind.OTHER)
    frames.append(_DONE)
    kinds.append(FrameKind.TERMINAL)
    return Reply(200, [*_SSE_HEADERS, ("x-request-id", request_id)], frames=frames, frame_kinds=kinds)
