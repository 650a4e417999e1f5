"""Gemini Live through google-genai's ``client.aio.live.connect`` against a real gunicorn+gevent server over
TLS (the Live client always dials ``wss://``; docs/realtime.md, docs/tls.md): text, audio, a tool round
trip, an interruption and the WebSocket faults, each message parsed by the SDK itself."""

from __future__ import annotations

import asyncio
import base64
import functools
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from google.genai import errors, types
from websockets.exceptions import ConnectionClosedError

from llmts.client import SessionClient
from llmts.runtime.media.audio import speech_pcm
from tests.support.configure import script

MODEL = "gemini-live-2.5-flash-preview"


def _run(test: Callable[[], Awaitable[Any]]) -> Any:
    return asyncio.run(asyncio.wait_for(test(), 30))


# One realtime scenario answering the given responses in order; top-level fields as keywords.
_configure = functools.partial(script, scenario={"id": "live", "operation": "realtime"})


async def _turn(live: Any) -> list[types.LiveServerMessage]:
    return [message async for message in live.receive()]


def _text(messages: list[types.LiveServerMessage]) -> str:
    return "".join(
        part.text or ""
        for message in messages
        if message.server_content and message.server_content.model_turn
        for part in message.server_content.model_turn.parts or ()
    )


def _audio(messages: list[types.LiveServerMessage]) -> bytes:
    return b"".join(
        part.inline_data.data or b""
        for message in messages
        if message.server_content and message.server_content.model_turn
        for part in message.server_content.model_turn.parts or ()
        if part.inline_data
    )


def test_a_text_turn_with_usage(tls_session: SessionClient) -> None:
    _configure(tls_session, {"text": "Hello from Live.", "chunks": ["Hello", " from Live."]})
    client = tls_session.gemini_client(api_key="g-key")

    async def talk() -> list[types.LiveServerMessage]:
        config = types.LiveConnectConfig(response_modalities=[types.Modality.TEXT])
        async with client.aio.live.connect(model=MODEL, config=config) as live:
            assert live.session_id
            await live.send_client_content(
                turns=types.Content(role="user", parts=[types.Part(text="hi")]), turn_complete=True
            )
            return await _turn(live)

    messages = _run(talk)
    assert _text(messages) == "Hello from Live."
    assert messages[-1].server_content is not None and messages[-1].server_content.turn_complete
    assert any(m.server_content and m.server_content.generation_complete for m in messages)
    usage = messages[-1].usage_metadata
    assert usage is not None and usage.response_token_count and usage.total_token_count
    [entry] = tls_session.requests(operation="realtime")
    assert entry["provider"] == "gemini" and entry["model"] == MODEL and entry["success"] is True
    assert [event["type"] for event in entry["client_events"]][-1] == "clientContent"


def test_an_audio_turn_carries_generated_pcm_and_its_transcription(tls_session: SessionClient) -> None:
    _configure(tls_session, {"text": "Sunny and warm.", "audio": "generated"})
    client = tls_session.gemini_client(api_key="g-key")

    async def talk() -> list[types.LiveServerMessage]:
        config = types.LiveConnectConfig(
            response_modalities=[types.Modality.AUDIO],
            output_audio_transcription=types.AudioTranscriptionConfig(),
        )
        async with client.aio.live.connect(model=MODEL, config=config) as live:
            await live.send_client_content(
                turns=types.Content(role="user", parts=[types.Part(text="weather?")]), turn_complete=True
            )
            return await _turn(live)

    messages = _run(talk)
    audio = _audio(messages)
    assert audio == speech_pcm("Sunny and warm.")
    heard = "".join(
        m.server_content.output_transcription.text or ""
        for m in messages
        if m.server_content and m.server_content.output_transcription
    )
    assert heard.replace(" ", "") == "Sunnyandwarm."


def test_a_tool_round_trip_inside_one_receive_loop(tls_session: SessionClient) -> None:
    _configure(
        tls_session,
        {"tool_calls": [{"id": "fc_1", "name": "get_weather", "arguments": {"city": "Rome"}}]},
        {"text": "Rome is sunny."},
    )
    client = tls_session.gemini_client(api_key="g-key")
    weather = types.FunctionDeclaration(
        name="get_weather",
        description="weather",
        parameters=types.Schema(
            type=types.Type.OBJECT, properties={"city": types.Schema(type=types.Type.STRING)}
        ),
    )

    async def talk() -> tuple[list[types.FunctionCall], str]:
        config = types.LiveConnectConfig(
            response_modalities=[types.Modality.TEXT], tools=[types.Tool(function_declarations=[weather])]
        )
        calls: list[types.FunctionCall] = []
        text = ""
        async with client.aio.live.connect(model=MODEL, config=config) as live:
            await live.send_client_content(
                turns=types.Content(role="user", parts=[types.Part(text="weather in Rome?")]),
                turn_complete=True,
            )
            async for message in live.receive():
                if message.tool_call:
                    calls.extend(message.tool_call.function_calls or ())
                    await live.send_tool_response(
                        function_responses=[
                            types.FunctionResponse(id=call.id, name=call.name, response={"sky": "clear"})
                            for call in message.tool_call.function_calls or ()
                        ]
                    )
                text += _text([message])
        return calls, text

    calls, text = _run(talk)
    assert [(c.id, c.name, c.args) for c in calls] == [("fc_1", "get_weather", {"city": "Rome"})]
    assert text == "Rome is sunny."
    entries = tls_session.requests(operation="realtime", order="asc")
    assert entries[1]["tool_results"][0]["call_id"] == "fc_1"


def test_a_new_turn_interrupts_the_answer_in_flight(tls_session: SessionClient) -> None:
    _configure(
        tls_session,
        {
            "text": "one two three",
            "chunks": ["one", " two", " three"],
            "stream_delivery": {"mode": "delay_then_continue", "after_content_frames": 1, "delay_ms": 5000},
        },
        {"text": "Sure."},
    )
    client = tls_session.gemini_client(api_key="g-key")

    async def talk() -> tuple[list[types.LiveServerMessage], list[types.LiveServerMessage]]:
        config = types.LiveConnectConfig(response_modalities=[types.Modality.TEXT])
        async with client.aio.live.connect(model=MODEL, config=config) as live:
            await live.send_client_content(
                turns=types.Content(role="user", parts=[types.Part(text="count")]), turn_complete=True
            )
            first: list[types.LiveServerMessage] = []
            async for message in live.receive():
                first.append(message)
                if _text([message]):
                    await live.send_client_content(
                        turns=types.Content(role="user", parts=[types.Part(text="stop")]), turn_complete=True
                    )
                if message.server_content and message.server_content.interrupted:
                    break
            return first, await _turn(live)

    first, second = _run(talk)
    assert first[-1].server_content is not None and first[-1].server_content.interrupted
    assert "three" not in _text(first)
    assert _text(second) == "Sure."


@pytest.mark.parametrize(
    ("plan", "raised"),
    [
        ({"mode": "close", "code": 1011, "reason": "Internal error encountered."}, errors.APIError),
        ({"mode": "abort_connection"}, errors.APIError),
        ({"mode": "malformed_event"}, ValueError),
    ],
)
def test_faults_reach_the_live_client(tls_session: SessionClient, plan: dict[str, Any], raised: type) -> None:
    _configure(tls_session, {"text": "a b", "chunks": ["a", " b"], "stream_delivery": plan})
    client = tls_session.gemini_client(api_key="g-key")

    async def talk() -> None:
        config = types.LiveConnectConfig(response_modalities=[types.Modality.TEXT])
        async with client.aio.live.connect(model=MODEL, config=config) as live:
            await live.send_client_content(
                turns=types.Content(role="user", parts=[types.Part(text="go")]), turn_complete=True
            )
            await _turn(live)

    with pytest.raises(raised) as caught:
        _run(talk)
    if plan["mode"] == "close":
        assert isinstance(caught.value, errors.APIError) and caught.value.code == 1011
    [entry] = tls_session.requests(operation="realtime")
    assert entry["success"] is False and entry["emitted_content_frames"] == 1


def test_a_wrong_key_is_closed_with_1008(tls_session: SessionClient) -> None:
    tls_session.configure({"provider_credentials": {"gemini": "g-right"}})
    client = tls_session.gemini_client(api_key="g-wrong")

    async def talk() -> None:
        async with client.aio.live.connect(model=MODEL, config=types.LiveConnectConfig()) as live:
            await _turn(live)

    # A close before setupComplete reaches connect() as the websockets error; after it, receive() raises
    # google-genai's APIError: which one depends on when the SDK reads, so both are accepted.
    with pytest.raises((ConnectionClosedError, errors.APIError)) as caught:
        _run(talk)
    refused = caught.value
    if isinstance(refused, ConnectionClosedError):
        assert refused.rcvd is not None
        code, reason = refused.rcvd.code, refused.rcvd.reason
    else:
        # google-genai raises APIError(code, reason): a string response, so the reason is its details and
        # its message (read from a JSON body) is None.
        code, reason = refused.code, refused.details
    assert code == 1008 and reason == "API key not valid. Please pass a valid API key."


def test_scripted_audio_bytes_are_sent_as_given(tls_session: SessionClient) -> None:
    pcm = bytes(range(256)) * 100
    _configure(tls_session, {"audio": base64.b64encode(pcm).decode(), "transcript": "beep"})
    client = tls_session.gemini_client(api_key="g-key")

    async def talk() -> list[types.LiveServerMessage]:
        config = types.LiveConnectConfig(response_modalities=[types.Modality.AUDIO])
        async with client.aio.live.connect(model=MODEL, config=config) as live:
            await live.send_client_content(
                turns=types.Content(role="user", parts=[types.Part(text="beep")]), turn_complete=True
            )
            return await _turn(live)

    messages = _run(talk)
    audio = _audio(messages)
    assert audio == pcm
