"""Gemini Live, sans-IO: the routes and credentials, and every way a connection is refused or fails. The
service reports errors as a close code and reason (google-genai raises ``errors.APIError(code, reason)``),
so every bad message is a close reaction, never an exception (a hypothesis test feeds arbitrary JSON).
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest
from google.genai import errors, live
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from werkzeug.routing import Map, Rule

from llmts.errors import (
    InvalidRequest,
    LlmtsError,
    ModelNotFound,
    NoMatchingScenario,
    ProviderUnauthorized,
    RateLimitExceeded,
    ScriptedError,
)
from llmts.providers.gemini.adapter import GEMINI
from llmts.providers.gemini.live import conversation as live_conversation
from llmts.providers.gemini.live import speech
from llmts.providers.gemini.live.closes import BAD_KEY, unauthorized_after_upgrade
from llmts.providers.gemini.live.protocol import GeminiLiveProtocol
from llmts.providers.gemini.live.routes import LIVE_ROUTES, live_credential
from llmts.runtime.resident_size import text_size
from llmts.schema.neutral import NeutralToolCall
from tests.providers.gemini.live_harness import MODEL, SdkLoop, completion, offline_client, opening

SETUP = orjson.dumps({"setup": {"model": f"models/{MODEL}"}})
NOT_FOUND = f"models/{MODEL} is not found for API version v1, or is not supported for bidiGenerateContent."
SILENCE = {"silenceDurationMs": -1}
WS = "ws/google.ai.generativelanguage.{}.GenerativeService.{}"


# --- routes and credentials -----------------------------------------------------------------------


@pytest.mark.parametrize("version", ["v1", "v1alpha", "v1beta"])
@pytest.mark.parametrize("method", ["BidiGenerateContent", "BidiGenerateContentConstrained"])
@pytest.mark.parametrize("slashes", ["/", "//"])
def test_the_adapter_serves_every_version_both_methods_and_a_doubled_slash(
    version: str, method: str, slashes: str
) -> None:
    assert GEMINI.realtime_routes == LIVE_ROUTES
    routes = Map(
        [Rule(route.rule, endpoint=route) for route in LIVE_ROUTES], strict_slashes=False, merge_slashes=False
    ).bind("llmts")
    route, args = routes.match(f"/gemini{slashes}{WS.format(version, method)}")
    assert args == {"version": version, "method": method}
    assert route.subprotocol is None
    with pytest.raises(Exception, match="404"):
        routes.match(f"/gemini{slashes}{WS.format('v2', method)}")


def test_the_credential_is_the_header_the_query_or_an_ephemeral_token() -> None:
    def credential(query: str = "", **headers: str) -> str | None:
        return live_credential(opening(query=query, headers=headers).request)

    assert credential(**{"x-goog-api-key": "g-key"}) == "g-key"
    assert credential("key=q-key") == "q-key"
    assert credential(authorization="Token auth_tokens/abc") == "auth_tokens/abc"
    assert credential(authorization="Bearer nope") is None
    assert credential() is None


def test_a_refused_key_closes_1008_after_the_upgrade_and_the_sdk_raises_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loop = SdkLoop()
    loop.react(unauthorized_after_upgrade(ProviderUnauthorized("unknown key")))
    monkeypatch.setattr(live, "ws_connect", loop.connect)

    async def connect() -> None:
        async with offline_client("bad").aio.live.connect(model=MODEL, config={}):
            pass

    with pytest.raises(errors.APIError) as raised:
        asyncio.run(connect())
    assert (raised.value.code, raised.value.details) == (1008, BAD_KEY)


# --- errors of a turn -----------------------------------------------------------------------------


def scripted(status: int, message: str) -> ScriptedError:
    return ScriptedError(
        message, code="scripted", http_status=status, error_type=None, retry_after=None, should_retry=None
    )


@pytest.mark.parametrize(
    ("error", "close"),
    [
        (scripted(500, "Internal error encountered."), (1011, "Internal error encountered.")),
        (
            scripted(503, "The service is currently unavailable."),
            (1011, "The service is currently unavailable."),
        ),
        (
            RateLimitExceeded("Resource has been exhausted (e.g. check quota).", 3.0),
            (1011, "Resource has been exhausted (e.g. check quota)."),
        ),
        (
            scripted(400, "Request contains an invalid argument."),
            (1007, "Request contains an invalid argument."),
        ),
        (InvalidRequest("bad field"), (1007, "bad field")),
        (scripted(403, "The caller does not have permission"), (1008, "The caller does not have permission")),
        (ProviderUnauthorized("who?"), (1008, BAD_KEY)),
        (
            ModelNotFound("no such model"),
            (1008, NOT_FOUND),
        ),
        (NoMatchingScenario("no realtime scenario matches"), (1011, "no realtime scenario matches")),
        (LlmtsError(""), (1011, "Internal error encountered.")),
    ],
)
def test_a_failed_turn_closes_with_the_services_code(error: LlmtsError, close: tuple[int, str]) -> None:
    protocol = GeminiLiveProtocol(opening())
    protocol.receive(SETUP)
    turn = protocol.receive(b'{"realtime_input": {"text": "hi"}}').turn
    assert protocol.failed(turn, error).close == close
    assert protocol.receive(b'{"realtime_input": {"text": "again"}}') == protocol.receive(b"junk")
    assert protocol.receive(b"junk").close is None  # closed: nothing more happens


def test_a_long_reason_is_cut_to_123_bytes_at_a_character_boundary() -> None:
    protocol = GeminiLiveProtocol(opening())
    code, reason = protocol.failed(None, scripted(500, "é" * 200)).close or (0, "")
    assert code == 1011 and reason == "é" * 61 and len(reason.encode()) == 122


def test_a_scripted_error_reaches_the_sdk_as_an_api_error(monkeypatch: pytest.MonkeyPatch) -> None:
    loop = SdkLoop([scripted(500, "Internal error encountered.")])
    monkeypatch.setattr(live, "ws_connect", loop.connect)

    async def chat() -> None:
        async with offline_client("k").aio.live.connect(model=MODEL, config={}) as session:
            await session.send_client_content(turns={"role": "user", "parts": [{"text": "hi"}]})
            async for _ in session.receive():
                pass

    with pytest.raises(errors.APIError) as raised:
        asyncio.run(chat())
    assert (raised.value.code, raised.value.details) == (1011, "Internal error encountered.")


# --- invalid messages -----------------------------------------------------------------------------

BEFORE_SETUP = [
    (b"not json", "Invalid JSON payload received."),
    (b"\xff\xfe", "Invalid JSON payload received."),
    (b"", "Invalid JSON payload received."),
    (b"[1, 2]", "Expected an object, got [1,2]"),
    (b"{}", "A message needs one of setup"),
    (b'{"foo": 1}', 'Unknown name "foo": Cannot find field.'),
    (b'{"setup": {"model": "m"}, "client_content": {}}', "Oneof field 'message_type' is already set"),
    (b'{"client_content": {"turnComplete": true}}', "The first message must be setup."),
    (b'{"setup": 5}', "Invalid value at 'setup' (BidiGenerateContentSetup), 5"),
    (b'{"setup": {}}', "setup.model is required"),
    (b'{"setup": {"model": 5}}', "Invalid value at 'setup.model' (TYPE_STRING), 5"),
    (b'{"setup": {"model": "models/"}}', "Invalid value at 'setup.model'"),
    (
        b'{"setup": {"model": "m", "generationConfig": {"responseModalities": ["IMAGE"]}}}',
        "'setup.generation_config.response_modalities[0]' (Modality)",
    ),
    (  # an object where an enum value belongs (found by tests/fuzz/test_fuzz_realtime.py: was a 1011)
        b'{"setup": {"model": "m", "generationConfig": {"responseModalities": [{}]}}}',
        "'setup.generation_config.response_modalities[0]' (Modality), {}",
    ),
    (
        b'{"setup": {"model": "m", "tools": [{"functionDeclarations": [{}]}]}}',
        "function_declarations[0].name is required",
    ),
    (
        b'{"setup": {"model": "m", "realtimeInputConfig": {"activityHandling": "SOMETIMES"}}}',
        "(ActivityHandling)",
    ),
    (b'{"setup": {"model": "m", "realtimeInputConfig": {"activityHandling": []}}}', "(ActivityHandling), []"),
    (
        orjson.dumps(
            {"setup": {"model": "m", "realtime_input_config": {"automatic_activity_detection": SILENCE}}}
        ),
        "silence_duration_ms' (TYPE_INT32), -1",
    ),
    (b'{"setup": {"model": "m", "inputAudioTranscription": true}}', "'setup.input_audio_transcription'"),
]
AFTER_SETUP = [
    (SETUP, "setup may be sent only once"),
    (b'{"client_content": {"turns": "hello"}}', "Invalid value at 'client_content.turns' (Content)"),
    (
        b'{"client_content": {"turns": [{"role": "system", "parts": []}]}}',
        "Please use a valid role: user, model.",
    ),
    (
        b'{"client_content": {"turns": [{"parts": [{"text": 5}]}]}}',
        "'client_content.turns[0].parts[0].text' (TYPE_STRING)",
    ),
    (
        b'{"client_content": {"turns": [{"parts": [{"functionCall": {"name": "f"}}]}]}}',
        "function_call is only allowed in a model turn",
    ),
    (b'{"client_content": {"turnComplete": "yes"}}', "'client_content.turn_complete' (TYPE_BOOL), \"yes\""),
    (
        b'{"realtime_input": {"audio": {"data": "***"}}}',
        "'realtime_input.audio.data' (TYPE_BYTES), Base64 decoding failed",
    ),
    (b'{"realtime_input": {"audioStreamEnd": "true"}}', "'realtime_input.audio_stream_end' (TYPE_BOOL)"),
    (b'{"realtime_input": {"activityStart": {}}}', "activityStart needs automaticActivityDetection.disabled"),
    (
        b'{"tool_response": {"functionResponses": [{"response": {}}]}}',
        "needs the id (or the name) of the call",
    ),
    (
        b'{"tool_response": {"functionResponses": [{"id": "c", "response": [1]}]}}',
        "(google.protobuf.Struct), [1]",
    ),
    (b'{"contextUpdate": {"tools": {"tools": 3}}}', "'context_update.tools.tools' (Tool), 3"),
]


@pytest.mark.parametrize(("message", "reason"), BEFORE_SETUP + [(b"SETUP " + m, r) for m, r in AFTER_SETUP])
def test_an_invalid_message_closes_1007_with_the_services_wording_and_ends_the_connection(
    message: bytes, reason: str
) -> None:
    protocol = GeminiLiveProtocol(opening())
    if message.startswith(b"SETUP "):
        assert protocol.receive(SETUP).events
        message = message.removeprefix(b"SETUP ")
    reaction = protocol.receive(message)
    assert reaction.close is not None
    code, text = reaction.close
    assert code == 1007 and reason in text and len(text.encode()) <= 123
    assert (reaction.events, reaction.turn, reaction.cancel) == ([], None, None)
    assert protocol.receive(b'{"realtime_input": {"text": "more"}}').turn is None


def test_too_much_audio_without_an_end_of_speech_closes_1009(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(speech, "MAX_UTTERANCE_BYTES", 1_000)
    protocol = GeminiLiveProtocol(opening())
    protocol.receive(SETUP)
    chunk = orjson.dumps({"realtime_input": {"audio": {"data": "AQEB" * 100}}})  # 300 voiced bytes
    assert [protocol.receive(chunk).close for _ in range(3)] == [None, None, None]
    code, reason = protocol.receive(chunk).close or (0, "")
    assert code == 1009 and "without an end of speech" in reason


def test_an_invalid_setup_reaches_the_sdks_connect_as_an_api_error(monkeypatch: pytest.MonkeyPatch) -> None:
    loop = SdkLoop()
    monkeypatch.setattr(live, "ws_connect", loop.connect)

    async def connect() -> None:
        config: Any = {"response_modalities": ["IMAGE"]}
        async with offline_client("k").aio.live.connect(model=MODEL, config=config):
            pass

    with pytest.raises(errors.APIError) as raised:
        asyncio.run(connect())
    assert raised.value.code == 1007
    assert 'response_modalities[0]\' (Modality), "IMAGE"' in str(raised.value.details)


# --- arbitrary input ------------------------------------------------------------------------------

_KEYS = st.sampled_from(
    [
        "setup",
        "client_content",
        "clientContent",
        "realtime_input",
        "realtimeInput",
        "tool_response",
        "toolResponse",
        "contextUpdate",
        "model",
        "generationConfig",
        "responseModalities",
        "tools",
        "functionDeclarations",
        "name",
        "turns",
        "parts",
        "text",
        "role",
        "turnComplete",
        "functionCall",
        "functionResponse",
        "id",
        "args",
        "response",
        "audio",
        "mediaChunks",
        "video",
        "data",
        "mimeType",
        "activityStart",
        "activityEnd",
        "audioStreamEnd",
        "functionResponses",
        "realtimeInputConfig",
        "automaticActivityDetection",
        "disabled",
        "silenceDurationMs",
        "systemInstruction",
        "thought",
    ]
) | st.text(max_size=8)
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False)
    | st.text(max_size=12)
)
_JSON = st.recursive(
    _SCALARS | st.sampled_from(["AQEB", "AAAA", "TEXT", "AUDIO", "user", "model", "models/m"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=5),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=_JSON, after_setup=st.booleans(), raw=st.binary(max_size=32))
def test_arbitrary_json_or_bytes_never_raise(value: Any, after_setup: bool, raw: bytes) -> None:
    for message in (
        orjson.dumps(value),
        raw,
        orjson.dumps({"setup": value}),
        orjson.dumps({"realtimeInput": value}),
    ):
        protocol = GeminiLiveProtocol(opening())
        if after_setup:
            protocol.receive(SETUP)
        reaction = protocol.receive(message)
        if reaction.close is not None:
            code, reason = reaction.close
            assert code in (1007, 1009) and reason and len(reason.encode()) <= 123


_VALID = st.sampled_from(
    [
        SETUP,
        orjson.dumps(
            {
                "setup": {
                    "model": MODEL,
                    "realtimeInputConfig": {"automaticActivityDetection": {"disabled": True}},
                }
            }
        ),
        orjson.dumps(
            {"setup": {"model": MODEL, "inputAudioTranscription": {}, "outputAudioTranscription": {}}}
        ),
        b'{"client_content": {"turns": [{"role": "user", "parts": [{"text": "hi"}]}], "turnComplete": true}}',
        b'{"client_content": {"turns": [{"role": "model", "parts": [{"functionCall": {"name": "f"}}]}]}}',
        b'{"realtime_input": {"audio": {"data": "AQEBAQ==", "mime_type": "audio/pcm;rate=16000"}}}',
        b'{"realtime_input": {"audio": {"data": "' + b"A" * 21_336 + b'"}}}',  # 16,002 zero bytes
        b'{"realtime_input": {"audioStreamEnd": true}}',
        b'{"realtime_input": {"activityStart": {}}}',
        b'{"realtime_input": {"activityEnd": {}}}',
        b'{"realtime_input": {"text": "typed"}}',
        b'{"tool_response": {"functionResponses": [{"id": "c1", "name": "f", "response": {}}]}}',
        b'{"contextUpdate": {"systemInstruction": {"parts": [{"text": "new"}]}}}',
    ]
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    messages=st.lists(_VALID | _JSON.map(orjson.dumps), max_size=10),
    answers=st.lists(st.sampled_from(["text", "call", "interrupt", "fail"]), min_size=10, max_size=10),
)
def test_any_sequence_of_messages_and_answers_never_raises(messages: list[bytes], answers: list[str]) -> None:
    """Turns answered with text or a call, cut after one event, or failed, in any order of messages."""
    protocol = GeminiLiveProtocol(opening())
    for message, how in zip(messages, answers, strict=False):
        reaction = protocol.receive(message)
        _check_charge(protocol)
        if reaction.close is not None:
            assert reaction.close[0] in (1007, 1009)
        turn = reaction.turn
        if turn is None:
            continue
        if how == "fail":
            assert protocol.failed(turn, scripted(503, "unavailable")).close == (1011, "unavailable")
            continue
        calls = (NeutralToolCall(id="c1", name="f", arguments='{"a": 1}'),) if how == "call" else ()
        events = protocol.answer(
            turn, completion("one two three", chunks=("one", " two three"), tool_calls=calls)
        )
        if how == "interrupt":
            protocol.interrupted(turn, events[:1], "turn_detected")
        _check_charge(protocol)


def _check_charge(protocol: GeminiLiveProtocol) -> None:
    """What the connection is charged (``realtime_bytes``) stays the size of what it holds."""
    held = sum(map(live_conversation._resident, protocol._conversation.messages))
    setup = protocol._setup
    if setup is not None:
        held += text_size(setup.system) + text_size(setup.tools_json)
    assert protocol.retained_bytes() == held


def test_a_message_nested_deeper_than_the_limit_closes_1007_not_1011() -> None:
    """orjson writes only 254 levels, and a protocol echoes and journals what it is sent: a deeper tool
    schema once escaped as a traceback and a 1011 close."""
    import json

    from llmts.providers.gemini.live.client_messages import LiveInvalid, parse_message

    deep: dict[str, object] = {"type": "object"}
    for _ in range(300):
        deep = {"type": "object", "properties": {"a": deep}}
    setup = {
        "setup": {
            "model": "models/m",
            "tools": [{"functionDeclarations": [{"name": "f", "parameters": deep}]}],
        }
    }
    with pytest.raises(LiveInvalid) as refused:
        parse_message(json.dumps(setup).encode())
    assert refused.value.code == 1007 and "deeper than 64 levels" in refused.value.reason
