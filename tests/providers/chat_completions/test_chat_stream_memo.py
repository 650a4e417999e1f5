"""The Chat Completions stream renderer keeps a fixture's serialized frames in its ``render_memo``
(docs/architecture.md, "The server's hot path"): a fixture answered again renders the same bytes with the
new request's head, and a copy of the fixture (which shares the memo dict) never gets the original's.
The usage frame's byte template, and a whole answer assembled from memoized choices, equal what orjson
makes of the payload dicts."""

from __future__ import annotations

import gc
import weakref

import orjson

from llmts.providers.chat_completions.render import (
    chat_completion_payload,
    render_chat_completion,
    render_chat_stream,
    usage_bytes,
    usage_payload,
)
from llmts.schema.neutral import (
    Completion,
    NeutralMessage,
    NeutralReasoning,
    NeutralRequest,
    NeutralToolCall,
    ScriptedOutput,
    Usage,
)


def _request(include_usage: bool = False) -> NeutralRequest:
    return NeutralRequest(
        provider="openai",
        operation="chat.completions",
        model="gpt-4o",
        messages=(NeutralMessage(role="user", text="hi"),),
        stream=True,
        stream_include_usage=include_usage,
    )


def _completion(output: ScriptedOutput, response_id: str) -> Completion:
    usage = Usage(input_tokens=3, output_tokens=2)
    return Completion(output=output, usage=usage, response_id=response_id, created_at=1700000000)


def _deltas(frames: list[bytes]) -> list[tuple[str, object]]:
    events = [orjson.loads(frame[len(b"data: ") :]) for frame in frames if frame != b"data: [DONE]\n\n"]
    return [(event["id"], event["choices"][0]["delta"] if event["choices"] else None) for event in events]


def test_a_fixture_rendered_again_gets_the_new_head_and_its_own_deltas() -> None:
    output = ScriptedOutput(kind="text", text="Hello there", chunks=("Hello ", "there"))
    first = render_chat_stream(_request(), _completion(output, "one"), "req_1")
    [(owner, (rests, _))] = output.render_memo.values()  # the frames after the head, kept
    assert owner() is output and len(rests) == len(first.frames or ()) - 1  # all but [DONE]
    rests[1] = rests[1].replace(b"Hello ", b"HELLO ")  # what the next render reads, if it reads the memo
    probe = render_chat_stream(_request(), _completion(output, "probe"), "req_0")
    assert probe.frames is not None and b"HELLO " in probe.frames[1]
    rests[1] = rests[1].replace(b"HELLO ", b"Hello ")
    again = render_chat_stream(_request(), _completion(output, "two"), "req_2")
    assert first.frames is not None and again.frames is not None
    assert [delta for _, delta in _deltas(again.frames)] == [delta for _, delta in _deltas(first.frames)]
    assert {ident for ident, _ in _deltas(again.frames)} == {"chatcmpl-two"}
    assert first.frame_kinds == again.frame_kinds and first.frame_kinds is not again.frame_kinds
    with_usage = render_chat_stream(_request(include_usage=True), _completion(output, "three"), "req_3")
    assert with_usage.frames is not None and b'"usage":null' in with_usage.frames[0]


def test_a_copy_of_a_fixture_never_gets_the_originals_frames() -> None:
    output = ScriptedOutput(kind="text", text="Hello there", chunks=("Hello ", "there"))
    render_chat_stream(_request(), _completion(output, "one"), "req_1")
    copy = output.model_copy(update={"text": "Bye now", "chunks": ("Bye ", "now")})
    assert copy.render_memo is output.render_memo  # what makes the identity check necessary
    copied = render_chat_stream(_request(), _completion(copy, "two"), "req_2")
    original = render_chat_stream(_request(), _completion(output, "three"), "req_3")
    assert copied.frames is not None and original.frames is not None
    assert [d for _, d in _deltas(copied.frames)][1:3] == [{"content": "Bye "}, {"content": "now"}]
    assert [d for _, d in _deltas(original.frames)][1:3] == [{"content": "Hello "}, {"content": "there"}]


def test_a_one_off_answer_is_freed_when_its_response_is_over_not_by_the_garbage_collector() -> None:
    # An echoed or generated answer is made per request; when its memo named it strongly it was a
    # reference cycle, and a flood of 1 MB echoes kept hundreds of MB until a full collection
    # (docs/design/memory.md, "Memory beyond the accounted bytes").
    gc.disable()
    try:
        output = ScriptedOutput(kind="text", text="echo " * 1000, chunks=("echo " * 1000,))
        render_chat_stream(_request(), _completion(output, "one"), "req_1")
        render_chat_completion(_request(), _completion(output, "two"), "req_2")
        assert len(output.render_memo) == 2
        alive = weakref.ref(output)
        del output
        assert alive() is None
    finally:
        gc.enable()


def test_the_usage_template_is_what_orjson_makes_of_the_usage_payload() -> None:
    for usage in (
        Usage(input_tokens=0, output_tokens=0),
        Usage(input_tokens=12, output_tokens=345, cached_tokens=6, cache_write_tokens=7, reasoning_tokens=89),
    ):
        assert usage_bytes(usage) == orjson.dumps(usage_payload(usage))


def test_a_whole_answer_is_byte_identical_to_the_serialized_payload() -> None:
    call = NeutralToolCall(id="call_1", name="get_weather", arguments='{"city":"Paris"}')
    reasoning = NeutralReasoning(text="thinking about it")
    outputs = [
        ScriptedOutput(kind="text", text='Hello "there" \u00e9\n'),
        ScriptedOutput(kind="tool_calls", text="Let me look", tool_calls=(call,)),
        ScriptedOutput(kind="text", refusal="I cannot help with that"),
        ScriptedOutput(kind="text", text="42", reasoning=reasoning, finish_reason="length"),
    ]
    for output in outputs:
        for more in ((), (outputs[0],)):
            for field in (None, "reasoning"):
                request = _request().model_copy(update={"model": 'gpt "4o" \u00e9', "stream": False})
                completion = _completion(output, "abc").model_copy(update={"more_choices": more})
                for _ in range(2):  # the second time from the memo
                    body = render_chat_completion(request, completion, "req_1", field).body
                    assert body == orjson.dumps(chat_completion_payload(request, completion, field))
