"""The OpenAI Realtime protocol, sans-IO: audio - generated speech and its formats, input audio with
server VAD and manual commits, and answers cut short by response.cancel or by the user's speech. Server
events are validated strictly against the SDK's models (tests/providers/openai/realtime_support.py)."""

from __future__ import annotations

import base64
import warnings
from array import array

import pytest

from llmts.providers.openai.realtime.audio import encode_output, input_transcript
from llmts.runtime.media.audio import speech_pcm
from llmts.schema.faults import FrameKind
from tests.providers.openai.realtime_support import (
    Client,
    completion,
    event_types,
    silence_b64,
    speech_b64,
    text_client,
    tool_call,
)

# --- audio ---------------------------------------------------------------------------------------------


def test_an_audio_turn_interleaves_generated_speech_with_its_transcript() -> None:
    client = Client.connect()
    client.say("hello")
    turn = client.respond()
    assert turn.audio
    text = "Hello there, this is a spoken answer long enough for several audio deltas"
    written, events = client.answer(turn, completion(text, chunks=()))
    types = event_types(events)
    assert types[:3] == [
        "response.output_item.added",
        "conversation.item.added",
        "response.content_part.added",
    ]
    assert types[-6:] == [
        "response.output_audio.done",
        "response.output_audio_transcript.done",
        "response.content_part.done",
        "response.output_item.done",
        "conversation.item.done",
        "response.done",
    ]
    middle = events[3:-6]
    audio = [base64.b64decode(e["delta"]) for e in middle if e["type"] == "response.output_audio.delta"]
    transcript = [e["delta"] for e in middle if e["type"] == "response.output_audio_transcript.delta"]
    assert len(audio) + len(transcript) == len(middle)
    assert (
        b"".join(audio) == speech_pcm(text)
        and all(len(chunk) <= 24_000 for chunk in audio)
        and len(audio) > 2
    )
    assert "".join(transcript) == text and len(transcript) == len(text.split())
    # interleaved, not one kind after the other
    assert (
        event_types(middle)[:2] != event_types(middle)[-2:]
        and "response.output_audio.delta" in event_types(middle)[:3]
    )
    assert all(w.kind is FrameKind.CONTENT for w in written[3:-6])
    assert events[-6 + 1]["transcript"] == text
    assert events[-3]["item"]["content"] == [{"type": "output_audio", "transcript": text}]
    assert events[2]["part"] == {"type": "audio", "transcript": ""}
    assert events[-4]["part"] == {"type": "audio", "transcript": text}
    usage = events[-1]["response"]["usage"]
    assert usage["output_token_details"] == {"text_tokens": 0, "audio_tokens": 7}
    assert events[-1]["response"]["audio"]["output"] == {
        "format": {"type": "audio/pcm", "rate": 24000},
        "voice": "marin",
    }


def test_scripted_audio_bytes_are_sent_as_they_are() -> None:
    client = Client.connect()
    client.say("hello")
    pcm = bytes(range(256)) * 200  # 51 200 bytes: three deltas
    _, events = client.answer(client.respond(), completion("Scripted words", audio_pcm=pcm))
    audio = [base64.b64decode(e["delta"]) for e in events if e["type"] == "response.output_audio.delta"]
    assert b"".join(audio) == pcm and [len(chunk) for chunk in audio] == [24_000, 24_000, 3_200]


@pytest.mark.parametrize(("kind", "silence"), [("audio/pcmu", 0xFF), ("audio/pcma", 0xD5)])
def test_a_g711_output_format_gets_g711_audio_at_8_khz(kind: str, silence: int) -> None:
    client = Client.connect()
    update = {"type": "realtime", "audio": {"output": {"format": {"type": kind}}}}
    assert client.types({"type": "session.update", "session": update}) == ["session.updated"]
    client.say("hello")
    _, events = client.answer(client.respond(), completion("", audio_pcm=bytes(4800)))
    audio = b"".join(
        base64.b64decode(e["delta"]) for e in events if e["type"] == "response.output_audio.delta"
    )
    assert audio == bytes([silence]) * 800  # 100 ms: every third of 2400 samples
    assert events[-1]["response"]["audio"]["output"]["format"] == {"type": kind}


def test_the_g711_encoders_match_the_standard_librarys() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        audioop = pytest.importorskip("audioop")  # gone from Python 3.13
    every_sample = array("h", range(-32768, 32768)).tobytes()
    tripled = array("h", [s for s in range(-32768, 32768) for _ in range(3)]).tobytes()
    assert encode_output(tripled, {"type": "audio/pcmu"}) == audioop.lin2ulaw(every_sample, 2)
    assert encode_output(tripled, {"type": "audio/pcma"}) == audioop.lin2alaw(every_sample, 2)
    assert encode_output(every_sample, {"type": "audio/pcm", "rate": 24000}) == every_sample


# --- cancellation and interruption ---------------------------------------------------------------------


def test_response_cancel_without_an_active_response_is_an_error() -> None:
    client = text_client()
    error = client.error({"type": "response.cancel", "event_id": "evt_c"})
    assert error["code"] == "response_cancel_not_active" and error["event_id"] == "evt_c"
    client.say("hi")
    turn = client.respond()
    assert client.error({"type": "response.cancel", "response_id": "resp_other"})["code"] == (
        "response_cancel_not_active"
    )
    reaction, events = client.send({"type": "response.cancel", "response_id": turn.response_id})
    assert events == [] and reaction.cancel == "client_cancelled"


def test_a_cancelled_text_answer_is_closed_where_it_was_cut() -> None:
    client = text_client()
    client.say("hi")
    turn = client.respond()
    written = client.protocol.answer(
        turn, completion("Hello there friend", chunks=("Hello", " there", " friend"))
    )
    delivered = written[:5]  # up to the second text delta
    client._take([event.data for event in delivered])
    assert client.send({"type": "response.cancel"})[0].cancel == "client_cancelled"
    closing = client.interrupt(turn, delivered, "client_cancelled")
    assert event_types(closing) == [
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "conversation.item.done",
        "response.done",
    ]
    assert closing[0]["text"] == "Hello there" and closing[1]["part"] == {
        "type": "text",
        "text": "Hello there",
    }
    assert closing[2]["item"]["status"] == "incomplete"
    done = closing[-1]["response"]
    assert done["status"] == "cancelled" and done["status_details"]["reason"] == "client_cancelled"
    assert done["output"] == [closing[2]["item"]]
    # the conversation keeps what was delivered, and another response may start
    client.say("go on")
    assert [m.text for m in client.respond().neutral.messages] == ["hi", "Hello there", "go on"]


def test_a_cancel_before_the_answer_was_rendered_ends_the_response_empty() -> None:
    client = text_client()
    client.say("hi")
    turn = client.respond()
    client.send({"type": "response.cancel"})
    [done] = client.interrupt(turn, [], "client_cancelled")
    assert done["type"] == "response.done" and done["response"]["status"] == "cancelled"
    assert done["response"]["output"] == [] and len(client.protocol.conversation) == 1
    client.respond()


def test_items_never_announced_leave_the_conversation_and_faults_in_between_are_ignored() -> None:
    client = text_client()
    client.say("hi")
    turn = client.respond()
    calls = (tool_call("a", "{}", "call_1"),)
    written = client.protocol.answer(turn, completion("Checking.", tool_calls=calls))
    delivered = written[:3]
    client._take([event.data for event in delivered])
    from llmts.providers.realtime import ServerEvent

    noise = ServerEvent(b"{not json", FrameKind.OTHER)  # a fault plan's malformed event
    closing = client.interrupt(turn, [delivered[0], noise, *delivered[1:]], "turn_detected")
    assert event_types(closing)[-1] == "response.done"
    assert closing[-1]["response"]["status_details"]["reason"] == "turn_detected"
    assert [item["type"] for item in closing[-1]["response"]["output"]] == ["message"]
    assert [item.kind for item in client.protocol.conversation.items()] == ["message", "message"]


def test_nothing_to_close_once_response_done_went() -> None:
    client = text_client()
    client.say("hi")
    turn = client.respond()
    written = client.protocol.answer(turn, completion("Hi"))
    assert client.protocol.interrupted(turn, written, "client_cancelled") == []
    assert client.protocol.active is None
    # a cancel the driver acts on after it finished the turn closes nothing either
    client.say("again")
    turn = client.respond()
    client.answer(turn, completion("Hi"))
    assert client.protocol.interrupted(turn, [], "client_cancelled") == []
    assert "answer" not in turn.context  # its events were let go


def test_speech_interrupts_an_audio_answer() -> None:
    client = Client.connect()
    client.say("tell me a story")
    turn = client.respond()
    written = client.protocol.answer(turn, completion("Once upon a time there was a test server"))
    delivered = written[:6]
    client._take([event.data for event in delivered])
    reaction, events = client.send({"type": "input_audio_buffer.append", "audio": speech_b64(100)})
    assert event_types(events) == ["input_audio_buffer.speech_started"] and reaction.cancel == "turn_detected"
    closing = client.interrupt(turn, delivered, "turn_detected")
    assert event_types(closing) == [
        "response.output_audio.done",
        "response.output_audio_transcript.done",
        "response.content_part.done",
        "response.output_item.done",
        "conversation.item.done",
        "response.done",
    ]
    assert closing[-1]["response"]["status_details"] == {"type": "cancelled", "reason": "turn_detected"}
    item = client.protocol.conversation.items()[-1]
    sent = sum(
        len(base64.b64decode(e["delta"]))
        for e in client.received
        if e["type"] == "response.output_audio.delta"
    )
    assert item.audio_ms == sent // 48 and item.wire["status"] == "incomplete"
    # the user's speech then ends and is answered
    reaction, events = client.send({"type": "input_audio_buffer.append", "audio": silence_b64(200)})
    assert event_types(events)[0] == "input_audio_buffer.speech_stopped" and reaction.turn is not None


def test_speech_does_not_interrupt_when_interrupt_response_is_off_or_the_answer_is_out_of_band() -> None:
    client = Client.connect()
    client.say("hi")
    turn = client.respond({"conversation": "none"})
    reaction, _ = client.send({"type": "input_audio_buffer.append", "audio": speech_b64(100)})
    assert reaction.cancel is None
    client.protocol.finished(turn)
    off = {
        "type": "realtime",
        "audio": {"input": {"turn_detection": {"type": "server_vad", "interrupt_response": False}}},
    }
    client.send({"type": "session.update", "session": off})
    client.respond()
    client.send({"type": "input_audio_buffer.clear"})
    reaction, events = client.send({"type": "input_audio_buffer.append", "audio": speech_b64(100)})
    assert event_types(events) == ["input_audio_buffer.speech_started"] and reaction.cancel is None
    # speech ending while a response is active starts no second one
    reaction, events = client.send({"type": "input_audio_buffer.append", "audio": silence_b64(300)})
    assert "input_audio_buffer.committed" in event_types(events) and reaction.turn is None


# --- input audio and server VAD ------------------------------------------------------------------------


def test_server_vad_speech_then_silence_commits_and_answers() -> None:
    client = text_client()
    reaction, events = client.send({"type": "input_audio_buffer.append", "audio": silence_b64(500)})
    assert events == [] and reaction.turn is None
    reaction, [started] = client.send({"type": "input_audio_buffer.append", "audio": speech_b64(400)})
    assert started["type"] == "input_audio_buffer.speech_started" and reaction.cancel is None
    assert started["audio_start_ms"] == 200  # 500 ms of silence, of which prefix_padding_ms (300) is kept
    assert client.send({"type": "input_audio_buffer.append", "audio": speech_b64(100)})[1] == []
    assert client.send({"type": "input_audio_buffer.append", "audio": silence_b64(100)})[1] == []
    assert client.send({"type": "input_audio_buffer.append", "audio": speech_b64(100)})[1] == []  # a pause
    assert client.send({"type": "input_audio_buffer.append", "audio": silence_b64(100)})[1] == []
    reaction, events = client.send({"type": "input_audio_buffer.append", "audio": silence_b64(100)})
    assert event_types(events) == [
        "input_audio_buffer.speech_stopped",
        "input_audio_buffer.committed",
        "conversation.item.added",
        "conversation.item.done",
        "response.created",
    ]
    item_id = started["item_id"]
    assert events[0]["item_id"] == events[1]["item_id"] == events[2]["item"]["id"] == item_id
    assert events[0]["audio_end_ms"] == 500 + 400 + 100 + 100 + 100 + 100 + 100
    assert events[2]["item"]["role"] == "user" and events[2]["item"]["content"] == [
        {"type": "input_audio", "transcript": None}
    ]
    turn = reaction.turn
    assert turn is not None and events[-1]["response"]["id"] == turn.response_id
    committed = (300 + 400 + 100 + 100 + 100 + 100 + 100) * 48
    assert turn.neutral.messages[-1].text == input_transcript(committed)
    assert turn.client_events[1:] == [
        {"type": "input_audio_buffer.append", "events": 7, "audio_bytes": (500 + 400 + 500) * 48},
        {"type": "input_audio_buffer.committed", "item_id": item_id, "audio_bytes": committed},
    ]


def test_semantic_vad_waits_500_ms_and_create_response_false_commits_only() -> None:
    client = text_client(
        audio={"input": {"turn_detection": {"type": "semantic_vad", "create_response": False}}}
    )
    client.send({"type": "input_audio_buffer.append", "audio": speech_b64(100)})
    assert client.send({"type": "input_audio_buffer.append", "audio": silence_b64(400)})[1] == []
    reaction, events = client.send({"type": "input_audio_buffer.append", "audio": silence_b64(100)})
    assert event_types(events)[:2] == ["input_audio_buffer.speech_stopped", "input_audio_buffer.committed"]
    assert "response.created" not in event_types(events) and reaction.turn is None


def test_input_transcription_when_the_session_enables_it() -> None:
    client = text_client(audio={"input": {"transcription": {"model": "gpt-4o-transcribe"}}})
    client.send({"type": "input_audio_buffer.append", "audio": speech_b64(100)})
    _, events = client.send({"type": "input_audio_buffer.append", "audio": silence_b64(200)})
    assert event_types(events)[4] == "conversation.item.input_audio_transcription.completed"
    transcription = events[4]
    assert transcription["transcript"] == input_transcript(300 * 48)
    assert (
        transcription["usage"] == {"type": "duration", "seconds": 0.3} and transcription["content_index"] == 0
    )
    _, [retrieved] = client.send({"type": "conversation.item.retrieve", "item_id": transcription["item_id"]})
    assert retrieved["item"]["content"][0]["transcript"] == transcription["transcript"]


def test_manual_commit_and_clear() -> None:
    client = text_client(audio={"input": {"turn_detection": None}})
    error = client.error({"type": "input_audio_buffer.commit", "event_id": "evt_e"})
    assert error["code"] == "input_audio_buffer_commit_empty" and error["event_id"] == "evt_e"
    assert "0.00ms" in error["message"]
    assert client.send({"type": "input_audio_buffer.append", "audio": speech_b64(50)})[1] == []
    assert client.error({"type": "input_audio_buffer.commit"})["code"] == "input_audio_buffer_commit_empty"
    client.send({"type": "input_audio_buffer.append", "audio": silence_b64(50)})  # no VAD: silence is kept
    reaction, events = client.send({"type": "input_audio_buffer.commit"})
    assert event_types(events) == [
        "input_audio_buffer.committed",
        "conversation.item.added",
        "conversation.item.done",
    ]
    assert reaction.turn is None  # a commit never starts a response
    assert client.protocol.conversation.items()[0].text == input_transcript(4800)
    client.send({"type": "input_audio_buffer.append", "audio": speech_b64(200)})
    assert client.types({"type": "input_audio_buffer.clear"}) == ["input_audio_buffer.cleared"]
    assert client.error({"type": "input_audio_buffer.commit"})["code"] == "input_audio_buffer_commit_empty"
    turn = client.respond()
    item_id = client.protocol.conversation.items()[0].id
    # refused events are summarised with their error; appends fold; audio is counted, never kept
    assert turn.client_events[1:] == [
        {
            "type": "input_audio_buffer.commit",
            "event_id": "evt_e",
            "error": "input_audio_buffer_commit_empty",
        },
        {"type": "input_audio_buffer.append", "events": 1, "audio_bytes": 2400},
        {"type": "input_audio_buffer.commit", "error": "input_audio_buffer_commit_empty"},
        {"type": "input_audio_buffer.append", "events": 1, "audio_bytes": 2400},
        {"type": "input_audio_buffer.commit", "item_id": item_id, "audio_bytes": 4800},
        {"type": "input_audio_buffer.append", "events": 1, "audio_bytes": 9600},
        {"type": "input_audio_buffer.clear", "audio_bytes": 9600},
        {"type": "input_audio_buffer.commit", "error": "input_audio_buffer_commit_empty"},
        {"type": "response.create", "conversation": "auto"},
    ]


def test_a_manual_commit_during_vad_speech_ends_the_segment_without_a_response() -> None:
    client = text_client()
    _, [started] = client.send({"type": "input_audio_buffer.append", "audio": speech_b64(200)})
    reaction, events = client.send({"type": "input_audio_buffer.commit"})
    assert event_types(events) == [
        "input_audio_buffer.speech_stopped",
        "input_audio_buffer.committed",
        "conversation.item.added",
        "conversation.item.done",
    ]
    assert events[1]["item_id"] == started["item_id"] and reaction.turn is None


def test_g711_input_silence_is_its_zero_level() -> None:
    client = text_client(audio={"input": {"format": {"type": "audio/pcmu"}}})
    assert (
        client.send({"type": "input_audio_buffer.append", "audio": base64.b64encode(b"\xff" * 800).decode()})[
            1
        ]
        == []
    )
    _, [started] = client.send(
        {"type": "input_audio_buffer.append", "audio": base64.b64encode(b"\x10" * 800).decode()}
    )
    assert started["audio_start_ms"] == 0  # 100 ms of mu-law silence, all kept as padding
    _, events = client.send(
        {"type": "input_audio_buffer.append", "audio": base64.b64encode(b"\x7f" * 1600).decode()}
    )
    assert events[0]["type"] == "input_audio_buffer.speech_stopped" and events[0]["audio_end_ms"] == 400
