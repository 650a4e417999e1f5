"""Record and replay, in memory (docs/recording.md): request comparison and the closest recorded request,
redaction, the recording's bounds, its export as a configuration, and the ``recorded`` fixture's rules."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from pydantic import ValidationError

from llmts.errors import FixtureMismatch, NoRecordedMatch
from llmts.runtime import RandomIds, Session, SystemClock
from llmts.runtime.conversations import Caller
from llmts.runtime.operations.embeddings import EmbeddingsInput
from llmts.runtime.operations.moderation import ModerationInput
from llmts.runtime.operations.rerank import RerankInput
from llmts.runtime.operations.transcription import TranscriptionInput
from llmts.runtime.plans import RecordedCandidate
from llmts.runtime.recording import (
    REDACTED,
    Exchange,
    Recorder,
    Redactor,
    closest_recorded,
    first_difference,
    kept_headers,
    recorded_request,
)
from llmts.runtime.recording.export import recording_configuration
from llmts.schema.config import SessionConfig
from llmts.schema.neutral import (
    NeutralMessage,
    NeutralRequest,
    NeutralToolCall,
    OperationInput,
    OperationRequest,
)
from llmts.schema.recorded import RecordedRequest, RecordingSettings
from llmts.transport.evidence import DeliveryEvidence
from llmts.transport.pacing import StreamPacing, deliver_paced
from llmts.transport.waiting import WaitOutcome
from llmts.transport.writer import deliver_stream


def _request(*texts: str, model: str = "gpt-4o", stream: bool = False, **extra: Any) -> NeutralRequest:
    messages = tuple(
        NeutralMessage(role="user" if i % 2 == 0 else "assistant", text=t) for i, t in enumerate(texts)
    )
    return NeutralRequest(
        provider="openai",
        operation="chat.completions",
        model=model,
        messages=messages,
        stream=stream,
        **extra,
    )


def _tool_request(result: str, arguments: str = '{"city":"Paris"}') -> NeutralRequest:
    call = NeutralToolCall(id="call_1", name="get_weather", arguments=arguments)
    messages = (
        NeutralMessage(role="user", text="weather?"),
        NeutralMessage(role="assistant", tool_calls=(call,)),
        NeutralMessage(role="tool", text=result, tool_call_id="call_1"),
    )
    return NeutralRequest(provider="openai", operation="chat.completions", model="gpt-4o", messages=messages)


def test_an_equal_request_has_no_difference() -> None:
    assert (
        first_difference(recorded_request(_request("hi", "yo", "again")), _request("hi", "yo", "again"))
        is None
    )
    assert first_difference(recorded_request(_tool_request("sunny")), _tool_request("sunny")) is None


@pytest.mark.parametrize(
    ("sent", "expected"),
    [
        (_request("hi", model="gpt-4o-mini"), "model: recorded 'gpt-4o', sent 'gpt-4o-mini'"),
        (_request("hi", stream=True), "stream: recorded false, sent true"),
        (_request("hi", system="Be brief"), "system differs at character 0"),
        (_request("hello"), "messages[0].text differs at character 1: recorded 'hi', sent 'hello'"),
        (
            _request("hi", "yo"),
            "messages: recorded 1, sent 2 (the first extra one, messages[1], is assistant 'yo')",
        ),
        (_request(), "messages: recorded 1, sent 0 (messages[0] is missing)"),
        (
            NeutralRequest(provider="openai", operation="responses", model="gpt-4o", messages=()),
            "operation: recorded chat.completions, sent responses",
        ),
    ],
)
def test_the_first_difference_names_the_field(sent: NeutralRequest, expected: str) -> None:
    difference = first_difference(recorded_request(_request("hi")), sent)
    assert difference is not None and difference.startswith(expected)


def test_tool_results_and_calls_are_compared() -> None:
    recorded = recorded_request(_tool_request("sunny"))
    assert first_difference(recorded, _tool_request("rain")) == (
        "messages[2].text differs at character 0: recorded 'sunny', sent 'rain'"
    )
    moved = first_difference(recorded, _tool_request("sunny", '{"city":"Rome"}'))
    assert moved is not None and moved.startswith(
        "messages[1].tool_calls[0].arguments differs at character 9"
    )


def test_the_closest_recorded_request_shares_the_most() -> None:
    candidates = [
        RecordedCandidate("scenario 'a' response 0", "openai", recorded_request(_request("What is 2+2?"))),
        RecordedCandidate("scenario 'a' response 1", "openai", recorded_request(_request("What is 3+3?"))),
        RecordedCandidate("scenario 'b' response 0", "anthropic", recorded_request(_request("What is 3+4?"))),
        RecordedCandidate("scenario 'c' response 0", None, recorded_request(_request("x", model="o3"))),
    ]
    where, difference = closest_recorded(candidates, _request("What is 3+4?")) or ("", "")
    assert where == "scenario 'a' response 1"
    assert difference is not None and "character 10" in difference
    assert closest_recorded(candidates[2:3], _request("What is 3+4?")) is None  # another provider's


def test_selection_in_a_replaying_session_explains_misses() -> None:
    session = Session("s", clock=SystemClock(), ids=RandomIds())
    recorded = {
        "status": 200,
        "headers": [["Content-Type", "application/json"]],
        "body": "{}",
        "request": recorded_request(_request("hi")).model_dump(mode="json"),
    }
    session.configure(SessionConfig.model_validate({"scenarios": [{"responses": [{"recorded": recorded}]}]}))
    with pytest.raises(NoRecordedMatch) as missed:
        session.admit(_request("ho"), Caller())
    assert (
        "the closest recorded request is scenario 'scenario_0' response 0: messages[0].text"
        in missed.value.message
    )
    session.admit(_request("hi"), Caller())
    with pytest.raises(NoRecordedMatch) as again:
        session.admit(_request("hi"), Caller())
    assert "is this same request, already replayed" in again.value.message


def test_a_recorded_fixture_without_its_request_fits_by_stream_only() -> None:
    session = Session("s", clock=SystemClock(), ids=RandomIds())
    frames = {"status": 200, "frames": ["data: 1\n\n"]}
    session.configure(SessionConfig.model_validate({"scenarios": [{"responses": [{"recorded": frames}]}]}))
    with pytest.raises(FixtureMismatch) as mismatch:
        session.admit(_request("hi"), Caller())
    assert "is a recorded stream but the request does not stream" in mismatch.value.message
    assert session.admit(_request("anything", stream=True), Caller()).response is not None


def _exchange(**changes: Any) -> Exchange:
    values: dict[str, Any] = {
        "provider": "openai",
        "conversation_id": None,
        "request": recorded_request(_request("hi")),
        "status": 200,
        "headers": (("Content-Type", "application/json"),),
        "body": b'{"ok":true}',
        "frames": None,
    }
    values.update(changes)
    return Exchange(**values)


def test_redaction_removes_credentials_patterns_and_secret_headers() -> None:
    redactor = Redactor(["tok_[0-9]+"])
    exchange = _exchange(
        request=recorded_request(_request("key sk-abcdef and tok_12")),
        headers=(("Set-Cookie", "a=b"), ("x-trace", "tok_99"), ("Date", "now"), ("x-request-id", "r1")),
        body=b"sk-abcdef \xff tok_77",
    )
    clean = redactor.exchange(exchange, ("sk-abcdef",))
    assert clean.request.messages[0].text == f"key {REDACTED} and {REDACTED}"
    assert clean.headers == (("x-trace", REDACTED), ("x-request-id", "r1"))
    assert clean.body == REDACTED.encode() + b" \xff " + REDACTED.encode()  # non-UTF-8 bytes survive
    assert kept_headers(
        [("Authorization", "x"), ("x-api-key", "y"), ("Content-Length", "3"), ("a", "b")]
    ) == (("a", "b"),)
    # A 3-character credential is not searched for.
    short = Redactor([]).exchange(_exchange(body=b"abc"), ("abc",))
    assert short.body == b"abc"


def test_the_recorder_is_bounded() -> None:
    recorder = Recorder(RecordingSettings(max_exchanges=2, max_bytes=4096))
    size = _exchange().retained_bytes()
    assert 640 < size < 1024
    assert recorder.fits(size)
    recorder.keep(_exchange(), size)
    assert not recorder.fits(4096)
    recorder.keep(_exchange(), size)
    assert recorder.full and not recorder.fits(1)
    recorder.clear()
    assert recorder.retained_bytes == 0 and not recorder.full


def test_the_export_is_scenarios_and_graphs_that_configure_loads() -> None:
    binary = (b"\x00\x01event", b"\x02\xff")
    exchanges = [
        _exchange(first_byte_seconds=0.2, duration_seconds=0.5),
        _exchange(request=recorded_request(_request("x", model="o3/mini"))),
        _exchange(
            conversation_id="trip a",
            request=recorded_request(_request("go")),
            frames=(b"a", b"b"),
            body=None,
            first_byte_seconds=0.1,
            duration_seconds=0.6,
        ),
        _exchange(
            conversation_id="trip a", request=recorded_request(_tool_request("sunny")), provider="openai"
        ),
        _exchange(
            provider="bedrock", request=recorded_request(_request("b", model="m")), frames=binary, body=None
        ),
    ]
    config, omitted = recording_configuration(exchanges, pacing=True)
    assert omitted == 0
    loaded = SessionConfig.model_validate(config)
    assert [(s.id, s.provider, s.model) for s in loaded.scenarios] == [
        ("rec-openai-gpt-4o", "openai", "gpt-4o"),
        ("rec-openai-o3-mini", "openai", "o3/mini"),
        ("rec-bedrock-m", "bedrock", "m"),
    ]
    assert loaded.scenarios[0].responses[0].delay_ms == 500
    bedrock = loaded.scenarios[2].responses[0].recorded
    assert bedrock is not None and bedrock.encoding == "base64" and bedrock.frame_bytes() == list(binary)
    assert base64.b64decode(config["scenarios"][2]["responses"][0]["recorded"]["frames"][0]) == binary[0]
    (graph,) = loaded.conversations
    assert (graph.id, graph.conversation_id, graph.provider) == ("rec-openai-trip-a", "trip a", "openai")
    first, second = graph.steps
    assert first.when.model_dump() == {"turn": 1, "latest_role": "user", "latest_user_equals": "go"}
    assert first.then == ["s2"] and second.complete
    assert second.when.model_dump() == {
        "turn": 2,
        "latest_role": "tool",
        "tool_result": {"name": "get_weather", "call_id": "call_1"},
    }
    assert first.response.pacing is not None and first.response.pacing.ttft_ms == 100
    assert first.response.pacing.tokens_per_second is not None
    assert not loaded.strict_requests
    plain, _ = recording_configuration(exchanges)
    assert "pacing" not in str(plain) and "delay_ms" not in str(plain)


def test_the_export_leaves_out_what_a_graph_cannot_hold() -> None:
    talk = [
        _exchange(conversation_id="long", request=recorded_request(_request(f"q{i}"))) for i in range(257)
    ]
    config, omitted = recording_configuration(talk)
    assert omitted == 1 and len(config["conversations"][0]["steps"]) == 256
    SessionConfig.model_validate(config)


_BODY = {"status": 200, "body": "{}"}


@pytest.mark.parametrize(
    ("response", "message"),
    [
        ({"recorded": {"status": 200, "body": "x", "frames": ["y"]}}, "exactly one of body or frames"),
        ({"recorded": {"status": 200}}, "exactly one of body or frames"),
        ({"recorded": {"status": 429, "frames": ["x"]}}, "needs a 2xx status"),
        ({"recorded": {**_BODY, "headers": [["Transfer-Encoding", "chunked"]]}}, "describes a connection"),
        ({"recorded": {**_BODY, "headers": [["bad name", "x"]]}}, "not an HTTP token"),
        ({"recorded": {**_BODY, "headers": [["x", "a\r\nb"]]}}, "line break"),
        ({"recorded": {"status": 200, "body": "!!", "encoding": "base64"}}, "not valid base64"),
        ({"recorded": _BODY, "text": "hi"}, "exactly one of"),
        ({"recorded": _BODY, "usage": {"output_tokens": 1}}, "cannot be combined with recorded"),
        ({"recorded": _BODY, "pacing": {"ttft_ms": 5}}, "pacing applies to a recorded stream"),
        (
            {
                "recorded": {"status": 200, "frames": ["a"]},
                "stream_delivery": {"mode": "early_clean_end", "after_content_frames": 1},
            },
            "cannot be combined with recorded",
        ),
    ],
)
def test_recorded_fixtures_are_validated(response: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError) as bad:
        SessionConfig.model_validate({"scenarios": [{"responses": [response]}]})
    assert message in str(bad.value)


def test_recording_settings_are_validated() -> None:
    for recording in (
        {"max_exchanges": 0},
        {"max_bytes": 10},
        {"redact": ["("]},
        {"read_timeout_seconds": 0},
    ):
        with pytest.raises(ValidationError):
            SessionConfig.model_validate({"record": True, "recording": recording})
    config = SessionConfig.model_validate({"record": True, "upstreams": {"openai": "https://api.openai.com"}})
    assert config.model_dump(mode="json") == {
        "provider_credentials": {},
        "scenarios": [],
        "upstreams": {"openai": "https://api.openai.com"},
        "record": True,
    }
    assert "upstreams" not in SessionConfig().model_dump()


def test_a_recorded_stream_keeps_its_frames_as_separate_writes() -> None:
    from llmts.schema.faults import FrameKind

    frames = [b"a", b"bb", b"ccc"]
    kinds = [FrameKind.OTHER, FrameKind.OTHER, FrameKind.TERMINAL]
    done: list[DeliveryEvidence] = []
    evidence = DeliveryEvidence()
    written = list(deliver_stream(frames, kinds, None, None, evidence, done.append, separate=True))
    assert written == frames and evidence.emitted_frames == 3 and evidence.terminal_marker_observed
    coalesced = list(deliver_stream(frames, kinds, None, None, DeliveryEvidence(), done.append))
    assert coalesced == [b"abbccc"]
    pacing = StreamPacing(0.001, 0.0, 3, None, lambda: False)
    clock = iter([float(i) for i in range(100)])
    paced = list(
        deliver_paced(
            frames,
            kinds,
            pacing,
            None,
            DeliveryEvidence(),
            wait=lambda *_: WaitOutcome.ELAPSED,
            clock=lambda: next(clock) * 0.0,
            separate=True,
        )
    )
    assert paced == frames  # due together, still written one by one


def test_record_request_summary_keeps_tool_calls() -> None:
    summary: RecordedRequest = recorded_request(_tool_request("sunny"))
    assert summary.model_dump(mode="json")["messages"][1] == {
        "role": "assistant",
        "tool_calls": [{"id": "call_1", "name": "get_weather", "arguments": '{"city":"Paris"}'}],
    }


def test_other_operations_become_scenarios_of_their_operation() -> None:
    embed = NeutralRequest(
        provider="openai", operation="embeddings", model="text-embedding-3-small", messages=()
    )
    exchanges = [
        _exchange(request=recorded_request(embed)),
        _exchange(conversation_id="c1", request=recorded_request(embed)),
        _exchange(),
    ]
    config, _ = recording_configuration(exchanges)
    loaded = SessionConfig.model_validate(config)
    served = [(s.id, s.served_operation(), len(s.responses)) for s in loaded.scenarios]
    assert served == [
        ("rec-openai-embeddings-text-embedding-3-small", "embeddings", 2),
        ("rec-openai-gpt-4o", "chat", 1),
    ]
    assert not loaded.conversations  # graphs answer chat only


def _operation(operation: str = "embeddings", **fields: Any) -> OperationRequest:
    """An operation request with its typed input; the texts default to ("the cat", "the dog")."""
    texts = fields.pop("inputs", ("the cat", "the dog"))
    given: OperationInput
    if operation == "embeddings":
        given = EmbeddingsInput(texts, **fields)
    elif operation == "rerank":
        given = RerankInput(fields.pop("query", ""), texts, **fields)
    elif operation == "moderation":
        given = ModerationInput(texts, **fields)
    else:
        given = TranscriptionInput(fields.pop("upload", b""), **fields)
    return OperationRequest(provider="openai", operation=operation, model="m", messages=(), input=given)


@pytest.mark.parametrize(
    ("sent", "expected"),
    [
        (
            _operation(inputs=("the cat", "the cow")),
            "inputs[1] differs at character 4: recorded 'the dog', sent 'the cow'",
        ),
        (_operation(inputs=("the cat",)), "inputs: recorded 2, sent 1"),
        (_operation(dimensions=32), "dimensions: recorded 64, sent 32"),
        (_operation(dimensions=64, default_dimensions=1536), None),  # the model's default is not compared
        (_operation(), "dimensions: recorded 64, sent none"),
        (
            _operation("transcription", upload=b"x", prompt="the cat"),
            "the uploaded file differs: recorded sha256 none, sent 2d711642b7",
        ),
    ],
    ids=["input-text", "input-count", "option-value", "model-default", "option-absent", "upload"],
)
def test_operation_requests_compare_inputs_options_and_uploads(
    sent: OperationRequest, expected: str | None
) -> None:
    recorded = recorded_request(_operation(dimensions=64))
    if sent.operation == "transcription":  # an upload: compared against the same request without one
        recorded = recorded_request(_operation("transcription", upload=b"", prompt="the cat"))
    difference = first_difference(recorded, sent)
    assert difference is None if expected is None else expected in str(difference)


def test_operation_request_summaries_round_trip_and_redact() -> None:
    summary = recorded_request(_operation("rerank", query="sk-abcdef docs", top_n=2))
    document = summary.model_dump(mode="json")
    assert document["options"] == {"top_n": 2}
    moderation = _operation("moderation", inputs=("a", ""), image_inputs=(1,))
    assert recorded_request(moderation).model_dump(mode="json")["options"] == {"image_inputs": [1]}
    upload = recorded_request(_operation("transcription", upload=b"audio", language="english")).model_dump(
        mode="json"
    )
    assert upload["options"] == {"language": "english"}
    assert len(upload["upload_sha256"]) == 64 and "audio" not in str(upload)
    assert RecordedRequest.model_validate(document) == summary  # what configure loads back
    assert "inputs" not in recorded_request(_request("hi")).model_dump(mode="json")  # chat keeps its shape
    clean = Redactor([]).exchange(_exchange(request=summary), ("sk-abcdef",))
    assert clean.request.query == f"{REDACTED} docs"
    rerank = recorded_request(_operation("rerank", inputs=("a", "b")))
    closest = closest_recorded(
        [
            RecordedCandidate("scenario 'r' response 0", "openai", rerank),
            RecordedCandidate("scenario 'r' response 1", "openai", recorded_request(_operation("rerank"))),
        ],
        _operation("rerank", inputs=("the cat", "the dot")),
    )
    assert closest is not None and closest[0] == "scenario 'r' response 1"


def test_an_option_that_lists_names_loads_back_and_is_bounded() -> None:
    """An operation input whose option is a tuple of strings (e.g. a classifier's labels) records as a
    list of names (``OptionValue``), loads back, and is bounded like the inputs."""
    document = {
        "operation": "classification",
        "model": "m",
        "inputs": ["a"],
        "options": {"labels": ["x", "y"]},
    }
    loaded = RecordedRequest.model_validate(document)
    assert loaded.options == {"labels": ["x", "y"]}
    assert RecordedRequest.model_validate(loaded.model_dump(mode="json")) == loaded
    assert RecordedRequest.model_validate({**document, "options": {"n": [1, 2]}}).options == {"n": [1, 2]}
    with pytest.raises(ValidationError, match="at most 4096 items"):
        RecordedRequest.model_validate({**document, "options": {"labels": ["x"] * 4097}})
