"""The Ollama adapter's pure pieces in memory: request parsing, NDJSON frames and their kinds, the
error renderers per route tree."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from llmts.errors import InvalidRequest, LlmtsError, ModelNotFound
from llmts.providers.adapters import ADAPTERS
from llmts.providers.ollama.parse import chat_request, generate_request
from llmts.providers.ollama.render import MALFORMED_LINE, render_chat, render_generate
from llmts.schema.faults import FrameKind
from llmts.schema.neutral import Completion, NeutralToolCall, ScriptedOutput, Usage

OLLAMA = next(adapter for adapter in ADAPTERS if adapter.namespace == "ollama")
HI = [{"role": "user", "content": "Hi"}]


def _completion(output: ScriptedOutput) -> Completion:
    return Completion(
        output=output, usage=Usage(input_tokens=5, output_tokens=3), response_id="r", created_at=0
    )


def test_stream_defaults_to_true_and_formats_map_to_response_formats() -> None:
    assert chat_request({"model": "m", "messages": HI}).stream is True
    assert chat_request({"model": "m", "messages": HI, "stream": False}).stream is False
    formats = [
        chat_request({"model": "m", "messages": HI, "format": f}).response_format for f in ("", "json", {})
    ]
    assert formats == ["text", "json_object", "json_schema"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"messages": HI}, "model is required"),
        ({"model": "m", "messages": HI, "stream": "yes"}, "stream must be a boolean"),
        ({"model": "m", "messages": HI, "format": "xml"}, "invalid format"),
        ({"model": "m", "messages": HI, "think": "max"}, "invalid think value"),
        ({"model": "m", "messages": [{"role": "bot", "content": "x"}]}, "messages[0].role"),
        ({"model": "m", "messages": [{"role": "user", "content": 3}]}, "messages[0].content"),
        (
            {
                "model": "m",
                "messages": [
                    {"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": "x"}}]}
                ],
            },
            "arguments must be an object",
        ),
        ({"model": "m", "messages": HI, "tools": [{"function": {}}]}, "tools[0].function.name"),
    ],
)
def test_invalid_requests_raise_a_400_naming_the_field(body: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        chat_request(body)
    assert message in caught.value.message and caught.value.http_status == 400


def test_tool_results_pair_with_calls_by_name_then_by_age() -> None:
    calls = [
        {"function": {"name": "a", "arguments": {"x": 1}}},
        {"function": {"name": "b", "arguments": {}}},
        {"function": {"name": "a", "arguments": {"x": 2}}},
    ]
    request = chat_request(
        {
            "model": "m",
            "messages": [
                *HI,
                {"role": "assistant", "content": "", "tool_calls": calls},
                {"role": "tool", "content": "1", "tool_name": "b"},
                {"role": "tool", "content": "2"},
                {"role": "tool", "content": "3", "tool_name": "a"},
            ],
        }
    )
    assistant, *results = request.messages[1:]
    assert [c.arguments for c in assistant.tool_calls] == ['{"x":1}', "{}", '{"x":2}']
    assert [r.tool_call_id for r in results] == ["b", "a", "a"]


def test_generate_takes_prompt_and_system() -> None:
    request = generate_request({"model": "m", "prompt": "Hi", "system": "Be brief."})
    assert [m.text for m in request.messages] == ["Hi"] and request.system == "Be brief."
    assert generate_request({"model": "m"}).messages == ()


def test_stream_frames_are_lines_with_counted_chunks_and_a_terminal_done_line() -> None:
    request = chat_request({"model": "m", "messages": HI})
    reply = render_chat(
        request, _completion(ScriptedOutput(kind="text", text="ab", chunks=("a", "", "b"))), "req"
    )

    assert reply.frames is not None and reply.malformed_frame == MALFORMED_LINE
    assert all(f.endswith(b"\n") and f.count(b"\n") == 1 for f in reply.frames)
    assert reply.frame_kinds == [FrameKind.CONTENT, FrameKind.CONTENT, FrameKind.TERMINAL]
    done = orjson.loads(reply.frames[-1])
    assert (done["done"], done["done_reason"], done["prompt_eval_count"], done["eval_count"]) == (
        True,
        "stop",
        5,
        3,
    )
    assert (
        done["total_duration"] == done["load_duration"] + done["prompt_eval_duration"] + done["eval_duration"]
    )


def test_tool_call_streams_have_no_counted_frames_and_generate_streams_use_response() -> None:
    call = NeutralToolCall(id="c", name="f", arguments='{"k":1}')
    chat = render_chat(
        chat_request({"model": "m", "messages": HI}),
        _completion(ScriptedOutput(kind="tool_calls", tool_calls=(call,))),
        "req",
    )
    generate = render_generate(
        generate_request({"model": "m", "prompt": "Hi"}),
        _completion(ScriptedOutput(kind="text", text="ok", chunks=("ok",))),
        "req",
    )

    assert chat.frame_kinds == [FrameKind.OTHER, FrameKind.TERMINAL]
    assert orjson.loads(chat.frames[0])["message"]["tool_calls"] == [
        {"function": {"name": "f", "arguments": {"k": 1}}}
    ]  # type: ignore[index]
    assert [orjson.loads(f)["response"] for f in generate.frames or []] == ["ok", ""]


def test_the_malformed_line_is_one_line_no_json_parser_accepts() -> None:
    assert MALFORMED_LINE.endswith(b"\n") and MALFORMED_LINE.count(b"\n") == 1
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(MALFORMED_LINE)


def test_errors_use_the_envelope_of_their_route_tree() -> None:
    native = OLLAMA.render_error_for("/ollama/api/chat")(ModelNotFound("model 'x' not found"), "req_1")
    compatible = OLLAMA.render_error_for("/ollama/v1/chat/completions")(ModelNotFound("gone"), "req_1")
    elsewhere = OLLAMA.render_error_for("/ollama/v1x")(LlmtsError("boom"), "req_1")

    assert (native.status, orjson.loads(native.body)) == (404, {"error": "model 'x' not found"})
    assert orjson.loads(compatible.body)["error"]["code"] == "model_not_found"
    assert set(orjson.loads(elsewhere.body)) == {"error"} and isinstance(
        orjson.loads(elsewhere.body)["error"], str
    )
