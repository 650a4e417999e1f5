"""Does a scripted output make sense for this request? A real model could not answer a request that forbids
tools with a tool call, or call a tool the request never declared; a fixture that would do so is drift in the
test's script, reported as 409 ``llm_test_server_fixture_mismatch`` before any state advances."""

from __future__ import annotations

import orjson

from llmts.errors import FixtureMismatch, NoRecordedMatch
from llmts.runtime.native.fit import check_native_fits
from llmts.runtime.operations import check_result_fits, content_frames
from llmts.runtime.recording.match import first_difference
from llmts.schema.faults import CONNECTION_MODES, StreamDelivery
from llmts.schema.neutral import NeutralRequest, RecordedOutput, ScriptedOutput
from llmts.schema.operations import REALTIME

__all__ = ["check_delivery_fits", "check_output_fits"]


def check_output_fits(request: NeutralRequest, output: ScriptedOutput, where: str) -> None:
    if output.recorded is not None:  # an upstream's answer: it fits the request it was recorded for
        _check_recorded_fits(request, output.recorded, where)
    if output.result is not None:  # an operation's answer; scenarios serve one operation each
        check_result_fits(request, output, where)
        return
    if check_native_fits(request, output, where):  # ``items`` fixtures (OpenAI Responses native tools)
        return
    if output.lenient:  # a scripted misbehaving model breaks the request's rules on purpose
        return
    choice = request.tool_choice
    if output.kind == "tool_calls":
        if choice.mode == "none":
            raise FixtureMismatch(f"{where} calls a tool but the request set tool_choice to none")
        declared = request.tool_names
        for call in output.tool_calls:
            if call.name not in declared:
                listed = ", ".join(declared) if declared else "no tools"
                raise FixtureMismatch(
                    f"{where} calls tool {call.name!r} but the request declares {listed}", param="tools"
                )
            if choice.mode == "function" and call.name != choice.name:
                raise FixtureMismatch(
                    f"{where} calls tool {call.name!r} but the request forces tool {choice.name!r}",
                    param="tool_choice",
                )
        return
    if output.refusal is not None:
        return  # a model may refuse whatever the request asked for
    if choice.mode in ("required", "function"):
        raise FixtureMismatch(
            f"{where} answers with {output.kind} but the request requires a tool call", param="tool_choice"
        )
    # A truncated answer (finish_reason length) is cut mid-JSON, as a real model's is.
    if request.response_format != "text" and output.kind == "text" and output.finish_reason != "length":
        try:
            orjson.loads(output.text)
        except orjson.JSONDecodeError:
            raise FixtureMismatch(
                f"{where} answers with text that is not JSON but the request asks for "
                f"response_format {request.response_format}",
                param="response_format",
            ) from None


def check_delivery_fits(
    request: NeutralRequest,
    plan: StreamDelivery,
    where: str,
    output: ScriptedOutput | None = None,
    *,
    in_stream: bool,
) -> None:
    """In-stream plans need a plain-text stream (SSE events, NDJSON lines) on a route that declares it
    (``in_stream``: the server's word, from the request's route); connection faults fit anything. A media
    answer's content frames depend on the request (an image stream's ``partial_images``): its boundary
    must be reachable."""
    if plan.mode in CONNECTION_MODES:
        return
    if not request.stream:
        raise FixtureMismatch(
            f"{where} has a {plan.mode} stream_delivery plan but the request is not streaming"
        )
    if not in_stream:
        raise FixtureMismatch(
            f"{where} has a {plan.mode} stream_delivery plan, which does not apply to "
            f"{request.provider} {request.operation} streams"
        )
    if request.operation == REALTIME:
        return  # a realtime turn's plan counts its content events, whatever the answer (docs/realtime.md)
    if request.tool_names or any(m.tool_calls or m.role == "tool" for m in request.messages):
        raise FixtureMismatch(f"{where} has a stream_delivery plan but the request declares or carries tools")
    if request.response_format != "text":
        raise FixtureMismatch(
            f"{where} has a stream_delivery plan but the request asks for structured output"
        )
    if output is not None and plan.in_stream:
        frames = content_frames(request, output)
        if frames is not None and plan.after_content_frames > frames:
            raise FixtureMismatch(
                f"{where}: after_content_frames {plan.after_content_frames} is unreachable: the streamed "
                f"answer has {frames} content frame(s) (an image stream counts its partial images)"
            )


def _check_recorded_fits(request: NeutralRequest, recorded: RecordedOutput, where: str) -> None:
    """The request equals the recorded one (docs/recording.md); without a recorded request (a hand-written
    ``recorded`` fixture), a stream answers only a streaming request and a 2xx body only a whole one."""
    if recorded.request is not None:
        difference = first_difference(recorded.request, request)
        if difference is not None:
            raise NoRecordedMatch(f"{where} was recorded for another request: {difference}")
        return
    streamed = recorded.frames is not None
    if streamed != request.stream and (streamed or recorded.status < 400):
        raise FixtureMismatch(
            f"{where} is a recorded {'stream' if streamed else 'whole answer'} but the request "
            f"{'does not stream' if streamed else 'streams'}",
            param="stream",
        )
