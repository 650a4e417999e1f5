"""``Completion`` -> Ollama ``/api/chat`` and ``/api/generate`` JSON, or NDJSON stream lines
(docs/providers.md, "Ollama").

A stream is one JSON object per line (``application/x-ndjson``), no blank lines: one line per text chunk
(``"done": false``), tool calls whole in one line (as Ollama sends them), then the terminal line with
``"done": true``, ``done_reason``, the token counts and the durations. Durations are derived from the
token counts (``_durations``), so two sessions with the same seed answer byte for byte the same.
One line is one frame: delivery plans count the chunk lines, the ``done`` line is the terminal marker,
and ``malformed_frame`` inserts a line that is not JSON.
"""

from __future__ import annotations

import time
from typing import Any

import orjson

from llmts.providers.base import Reply
from llmts.schema.faults import FrameKind
from llmts.schema.neutral import Completion, NeutralRequest, ScriptedOutput, Usage

__all__ = ["MALFORMED_LINE", "created_at", "render_chat", "render_generate", "render_load"]

_JSON_HEADERS = ("Content-Type", "application/json; charset=utf-8")
_NDJSON_HEADERS = ("Content-Type", "application/x-ndjson")
# A line the client's ``json.loads`` rejects (JSONDecodeError), then the stream goes on.
MALFORMED_LINE = b'{"llmts_malformed_frame": \n'
# Deterministic timings in nanoseconds: a fixed load, then per prompt token and per generated token.
_LOAD_NS = 1_000_000
_PROMPT_NS_PER_TOKEN = 250_000
_EVAL_NS_PER_TOKEN = 20_000_000
_CONTEXT_IDS = 32  # generate's ``context``: at most this many (meaningless, stable) token ids


def created_at(seconds: int) -> str:
    """Ollama's RFC 3339 timestamp of a completion's ``created_at`` (UTC, seconds)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def _durations(usage: Usage) -> dict[str, Any]:
    prompt = usage.input_tokens * _PROMPT_NS_PER_TOKEN
    evaluation = usage.output_tokens * _EVAL_NS_PER_TOKEN
    return {
        "total_duration": _LOAD_NS + prompt + evaluation,
        "load_duration": _LOAD_NS,
        "prompt_eval_count": usage.input_tokens,
        "prompt_eval_duration": prompt,
        "eval_count": usage.output_tokens,
        "eval_duration": evaluation,
    }


def _tool_calls(output: ScriptedOutput) -> list[dict[str, Any]]:
    # ``arguments`` is an object on this wire; fixtures' arguments are JSON object text.
    return [
        {"function": {"name": call.name, "arguments": orjson.loads(call.arguments or "{}")}}
        for call in output.tool_calls
    ]


def _thinking(output: ScriptedOutput) -> str:
    """The fixture's reasoning as Ollama's ``thinking`` text (redacted reasoning has none to show)."""
    reasoning = output.reasoning
    return reasoning.thinking() if reasoning is not None and not reasoning.redacted else ""


def _text(output: ScriptedOutput) -> str:
    # A refusal is plain content on this wire (Ollama has no refusal field).
    return output.text or (output.refusal or "")


def _message(output: ScriptedOutput, text: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if thinking := _thinking(output):
        message["thinking"] = thinking
    if output.kind == "tool_calls":
        message["tool_calls"] = _tool_calls(output)
    return message


def _chunks(output: ScriptedOutput) -> list[str]:
    text = _text(output)
    return [chunk for chunk in output.chunks if chunk] or ([text] if text else [])


def _head(request: NeutralRequest, completion: Completion) -> dict[str, Any]:
    return {"model": request.model, "created_at": created_at(completion.created_at)}


def _done(completion: Completion) -> dict[str, Any]:
    # Ollama stops for ``length`` (num_predict) or ``stop``; it has no content-filter or refusal reason.
    reason = "length" if completion.output.finish_reason == "length" else "stop"
    return {"done": True, "done_reason": reason, **_durations(completion.usage)}


def _stream(lines: list[dict[str, Any]], content: list[bool], request_id: str) -> Reply:
    frames = [orjson.dumps(line) + b"\n" for line in lines]
    kinds = [FrameKind.CONTENT if counted else FrameKind.OTHER for counted in content]
    kinds.append(FrameKind.TERMINAL)
    return Reply(
        200,
        [_NDJSON_HEADERS, ("x-request-id", request_id)],
        frames=frames,
        frame_kinds=kinds,
        malformed_frame=MALFORMED_LINE,
    )


def render_chat(request: NeutralRequest, completion: Completion, request_id: str) -> Reply:
    output = completion.output
    head = _head(request, completion)
    if not request.stream:
        payload = {**head, "message": _message(output, _text(output)), **_done(completion)}
        return Reply(200, [_JSON_HEADERS, ("x-request-id", request_id)], orjson.dumps(payload))
    lines: list[dict[str, Any]] = []
    content: list[bool] = []
    if thinking := _thinking(output):  # Ollama streams the thinking before the answer
        thought = {"role": "assistant", "content": "", "thinking": thinking}
        lines.append({**head, "message": thought, "done": False})
        content.append(False)
    for chunk in _chunks(output):  # the text (of a mixed answer too) comes before the calls
        lines.append({**head, "message": {"role": "assistant", "content": chunk}, "done": False})
        content.append(True)
    if output.kind == "tool_calls":
        calls = {"role": "assistant", "content": "", "tool_calls": _tool_calls(output)}
        lines.append({**head, "message": calls, "done": False})
        content.append(False)
    lines.append({**head, "message": {"role": "assistant", "content": ""}, **_done(completion)})
    return _stream(lines, content, request_id)


def _context(usage: Usage) -> list[int]:
    return list(range(1, min(usage.total_tokens, _CONTEXT_IDS) + 1))


def render_generate(request: NeutralRequest, completion: Completion, request_id: str) -> Reply:
    output = completion.output
    head = _head(request, completion)
    thinking = _thinking(output)
    if not request.stream:
        payload = {**head, "response": _text(output)}
        if thinking:
            payload["thinking"] = thinking
        payload.update({**_done(completion), "context": _context(completion.usage)})
        return Reply(200, [_JSON_HEADERS, ("x-request-id", request_id)], orjson.dumps(payload))
    chunks = _chunks(output)
    lines: list[dict[str, Any]] = []
    if thinking:
        lines.append({**head, "response": "", "thinking": thinking, "done": False})
    lines.extend({**head, "response": chunk, "done": False} for chunk in chunks)
    lines.append({**head, "response": "", **_done(completion), "context": _context(completion.usage)})
    return _stream(lines, [False] * bool(thinking) + [True] * len(chunks), request_id)


def render_load(request: NeutralRequest, timestamp: int, request_id: str) -> Reply:
    """The answer to a request without a prompt (no messages): Ollama loads the model and says so."""
    head = {"model": request.model, "created_at": created_at(timestamp)}
    if request.operation == "chat":
        payload: dict[str, Any] = {**head, "message": {"role": "assistant", "content": ""}}
    else:
        payload = {**head, "response": ""}
    payload.update({"done": True, "done_reason": "load"})
    if not request.stream:
        return Reply(200, [_JSON_HEADERS, ("x-request-id", request_id)], orjson.dumps(payload))
    return Reply(
        200,
        [_NDJSON_HEADERS, ("x-request-id", request_id)],
        frames=[orjson.dumps(payload) + b"\n"],
        frame_kinds=[FrameKind.TERMINAL],
        malformed_frame=MALFORMED_LINE,
    )
