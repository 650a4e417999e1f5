"""Amazon Titan Text's InvokeModel body and its answers (docs/providers.md, "AWS Bedrock").

Shapes per AWS's "Amazon Titan Text models" page of the Bedrock user guide:

* request ``{"inputText": str, "textGenerationConfig": {"temperature", "topP", "maxTokenCount",
  "stopSequences"}}`` (``inputText`` required; it is the one user message, ``User: ...\\nBot:`` and all);
* ``invoke``: ``{"inputTextTokenCount", "results": [{"tokenCount", "outputText", "completionReason"}]}``;
* ``invoke-with-response-stream``: one ``chunk`` per text chunk, ``{"outputText", "index": 0,
  "totalOutputTextTokenCount", "completionReason", "inputTextTokenCount"}`` with ``completionReason``
  null until the last, which also carries ``amazon-bedrock-invocationMetrics``; EOF ends the stream.

``completionReason`` is ``FINISH`` (what the service sends; the page lists it as ``FINISHED``),
``LENGTH`` for a fixture's ``finish_reason`` ``length`` and ``CONTENT_FILTERED`` for ``content_filter``
and ``refusal``. Titan Text has no tools, no system prompt and no prompt cache.
"""

from __future__ import annotations

from typing import Any

import orjson

from llmts.errors import InvalidRequest
from llmts.providers.base import Reply
from llmts.providers.bedrock.chunks import (
    INVOKE,
    INVOKE_STREAM,
    MALFORMED_CHUNK,
    chunk,
    invocation_metrics,
    invoke_headers,
    stream_headers,
)
from llmts.schema.faults import FrameKind
from llmts.schema.neutral import (
    Completion,
    NeutralRequest,
    ScriptedOutput,
    ToolChoice,
    build,
    neutral_message,
)

__all__ = ["parse_titan", "render_titan"]

_REASONS = {"length": "LENGTH", "content_filter": "CONTENT_FILTERED", "refusal": "CONTENT_FILTERED"}
_AUTO = ToolChoice()


def _malformed(detail: str) -> InvalidRequest:
    return InvalidRequest(f"Malformed input request: {detail}, please reformat your input and try again.")


def parse_titan(body: dict[str, Any], model: str, stream: bool) -> NeutralRequest:
    text = body.get("inputText")
    if text is None:
        raise _malformed("#: required key [inputText] not found")
    if not isinstance(text, str):
        raise _malformed("#/inputText: expected type: String")
    config = body.get("textGenerationConfig")
    if config is not None:
        if not isinstance(config, dict):
            raise _malformed("#/textGenerationConfig: expected type: JSONObject")
        count = config.get("maxTokenCount")
        if count is not None and (not isinstance(count, int) or isinstance(count, bool) or count < 0):
            raise _malformed("#/textGenerationConfig/maxTokenCount: expected an integer of at least 0")
    return build(
        NeutralRequest,
        provider="bedrock",
        operation=INVOKE_STREAM if stream else INVOKE,
        model=model,
        messages=(neutral_message(role="user", text=text),),
        tool_names=(),
        tool_choice=_AUTO,
        response_format="text",
        stream=stream,
        stream_include_usage=stream,
        preamble="",
        system="",
        cache_mode="none",
        cache_breakpoints=(),
        choices=1,
        reasoning_settings=None,
        exact_tokens=None,
    )


def _text(output: ScriptedOutput) -> str:
    return output.refusal if output.refusal is not None else output.text


def render_titan(request: NeutralRequest, completion: Completion, request_id: str) -> Reply:
    output, usage = completion.output, completion.usage
    reason = _REASONS.get(output.finish_reason, "FINISH")
    if not request.stream:
        result = {"tokenCount": usage.output_tokens, "outputText": _text(output), "completionReason": reason}
        payload = {"inputTextTokenCount": usage.input_tokens, "results": [result]}
        return Reply(200, invoke_headers(usage, request_id), orjson.dumps(payload))
    pieces = [piece for piece in output.chunks if piece] if output.refusal is None else []
    pieces = pieces or [_text(output)]
    frames: list[bytes] = []
    for number, piece in enumerate(pieces):
        last = number == len(pieces) - 1
        event: dict[str, Any] = {
            "outputText": piece,
            "index": 0,
            "totalOutputTextTokenCount": usage.output_tokens if last else None,
            "completionReason": reason if last else None,
            "inputTextTokenCount": usage.input_tokens if number == 0 else None,
        }
        if last:
            event["amazon-bedrock-invocationMetrics"] = invocation_metrics(usage)
        frames.append(chunk(orjson.dumps(event)))
    # Every chunk carries text; none is terminal (the stream ends at EOF).
    kinds = [FrameKind.CONTENT] * len(frames)
    return Reply(
        200, stream_headers(request_id), frames=frames, frame_kinds=kinds, malformed_frame=MALFORMED_CHUNK
    )
