"""OpenAI Realtime audio input through the official openai SDK against a real gunicorn+gevent server
(docs/realtime.md): server VAD (a non-silent PCM16 chunk starts speech, ``silence_duration_ms`` of zeros
ends it), manual commits and clears, and a barge-in that cancels the answer being spoken, then truncates
it. Every server event is checked strictly with the SDK's own models."""

from __future__ import annotations

import base64
import functools
import time
from typing import Any

from llmts.client import SessionClient
from llmts.runtime.media.audio import speech_pcm
from tests.realtime.support import check_openai_event, events_until, text_of
from tests.support.configure import script

MODEL = "gpt-realtime"
# 24 kHz PCM16 (the session's default input format): 48 bytes a millisecond.
SPEECH = speech_pcm("hello there")
SILENCE_300MS = bytes(48 * 300)  # past the default server VAD's 200 ms of silence


# One realtime scenario answering the given responses in order; top-level fields as keywords.
_configure = functools.partial(script, scenario={"id": "voice", "operation": "realtime"})


def _connect(session: SessionClient) -> Any:
    return session.openai_client(max_retries=0).realtime.connect(model=MODEL)


def _update(connection: Any, **session: Any) -> dict[str, Any]:
    connection.session.update(session={"type": "realtime", **session})
    updated = check_openai_event(connection.recv())
    assert updated["type"] == "session.updated", updated
    return updated


def _append(connection: Any, pcm: bytes) -> None:
    connection.input_audio_buffer.append(audio=base64.b64encode(pcm).decode())


def test_server_vad_turns_speech_then_silence_into_a_committed_item_and_a_response(
    llmts_session: SessionClient,
) -> None:
    _configure(llmts_session, {"text": "I heard you.", "chunks": ["I heard", " you."]})
    with _connect(llmts_session) as connection:
        created = check_openai_event(connection.recv())
        vad = created["session"]["audio"]["input"]["turn_detection"]
        assert vad["type"] == "server_vad" and vad["create_response"] is True
        _update(connection, output_modalities=["text"])
        _append(connection, bytes(48 * 400))  # silence before speech starts nothing
        _append(connection, SPEECH)
        _append(connection, SILENCE_300MS)
        events = list(events_until(connection))
    types = [event["type"] for event in events]
    assert types[:6] == [
        "input_audio_buffer.speech_started",
        "input_audio_buffer.speech_stopped",
        "input_audio_buffer.committed",
        "conversation.item.added",
        "conversation.item.done",
        "response.created",
    ]
    started, stopped, committed, added = events[:4]
    # Speech starts 400 ms in, less the 300 ms of padding the model hears before it; it stops once the
    # silence after it reached 200 ms (at the end of the chunk that did).
    assert started["audio_start_ms"] == 100
    assert stopped["audio_end_ms"] == (48 * 400 + len(SPEECH) + len(SILENCE_300MS)) // 48
    assert started["item_id"] == stopped["item_id"] == committed["item_id"] == added["item"]["id"]
    item = added["item"]
    assert item["role"] == "user" and item["content"][0]["type"] == "input_audio"
    assert text_of(events) == "I heard you."
    assert events[-1]["response"]["status"] == "completed"
    [entry] = llmts_session.requests(operation="realtime")
    sent = entry["client_events"]
    assert [e["type"] for e in sent][-1] == "input_audio_buffer.committed"
    assert sent[-1]["audio_bytes"] > 0 and "audio" not in sent[-1]  # counted, never kept


def test_create_response_false_commits_without_answering(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"text": "later"})
    with _connect(llmts_session) as connection:
        check_openai_event(connection.recv())
        _update(
            connection,
            output_modalities=["text"],
            audio={"input": {"turn_detection": {"type": "server_vad", "create_response": False}}},
        )
        _append(connection, SPEECH + SILENCE_300MS)  # one chunk: speech starts, but only zeros stop it
        _append(connection, SILENCE_300MS)
        events = list(events_until(connection, "conversation.item.done"))
        # Nothing answers until the client asks.
        connection.response.create()
        answered = list(events_until(connection))
    assert [e["type"] for e in events] == [
        "input_audio_buffer.speech_started",
        "input_audio_buffer.speech_stopped",
        "input_audio_buffer.committed",
        "conversation.item.added",
        "conversation.item.done",
    ]
    assert answered[0]["type"] == "response.created" and text_of(answered) == "later"


def test_manual_mode_commits_and_clears_by_hand(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"text": "Manual answer."})
    with _connect(llmts_session) as connection:
        check_openai_event(connection.recv())
        updated = _update(connection, output_modalities=["text"], audio={"input": {"turn_detection": None}})
        assert updated["session"]["audio"]["input"]["turn_detection"] is None
        _append(connection, SPEECH)
        connection.input_audio_buffer.clear()
        cleared = check_openai_event(connection.recv())
        assert cleared["type"] == "input_audio_buffer.cleared"
        _append(connection, SPEECH)
        _append(connection, SILENCE_300MS)  # no VAD: silence ends nothing
        connection.input_audio_buffer.commit()
        committed = list(events_until(connection, "conversation.item.done"))
        connection.response.create()
        answered = list(events_until(connection))
    # No VAD events in manual mode, and a commit never starts a response by itself.
    assert [e["type"] for e in committed] == [
        "input_audio_buffer.committed",
        "conversation.item.added",
        "conversation.item.done",
    ]
    assert committed[0]["item_id"] == committed[1]["item"]["id"]
    assert text_of(answered) == "Manual answer."
    [entry] = llmts_session.requests(operation="realtime")
    sent = {e["type"]: e for e in entry["client_events"]}
    # The cleared speech and the committed buffer, each counted in bytes.
    assert sent["input_audio_buffer.clear"]["audio_bytes"] == len(SPEECH)
    assert sent["input_audio_buffer.commit"]["audio_bytes"] == len(SPEECH) + len(SILENCE_300MS)


def test_committing_an_empty_buffer_is_an_error_event(llmts_session: SessionClient) -> None:
    with _connect(llmts_session) as connection:
        check_openai_event(connection.recv())
        _update(connection, audio={"input": {"turn_detection": None}})
        connection.send({"type": "input_audio_buffer.commit", "event_id": "evt_client_1"})
        error = check_openai_event(connection.recv())
        # The connection stays usable: a clear still answers.
        connection.input_audio_buffer.clear()
        cleared = check_openai_event(connection.recv())
    assert error["type"] == "error"
    assert error["error"]["code"] == "input_audio_buffer_commit_empty"
    assert error["error"]["event_id"] == "evt_client_1"
    assert cleared["type"] == "input_audio_buffer.cleared"
    assert llmts_session.requests(operation="realtime") == []


def test_speech_during_an_answer_cancels_it_and_the_client_truncates_what_played(
    llmts_session: SessionClient,
) -> None:
    _configure(
        llmts_session,
        {
            "text": "one two three four five",
            "audio": "generated",
            "stream_delivery": {"mode": "delay_then_continue", "after_content_frames": 2, "delay_ms": 5000},
        },
        {"text": "Sure, stopping."},
    )
    with _connect(llmts_session) as connection:
        check_openai_event(connection.recv())
        connection.conversation.item.create(
            item={"type": "message", "role": "user", "content": [{"type": "input_text", "text": "count"}]}
        )
        connection.response.create()  # the session's default: audio
        first: list[dict[str, Any]] = []
        for event in connection:
            data = check_openai_event(event)
            first.append(data)
            if data["type"] == "response.output_audio.delta":
                started = time.monotonic()
                _append(connection, SPEECH)  # the user barges in while the answer waits
                break
        rest = list(events_until(connection))
        assert time.monotonic() - started < 4  # the speech cut the 5 s delay short
        item_id = first[-1]["item_id"]
        played_ms = len(base64.b64decode(first[-1]["delta"])) // 48
        connection.conversation.item.truncate(item_id=item_id, content_index=0, audio_end_ms=played_ms // 2)
        truncated = check_openai_event(connection.recv())
        # The barge-in's speech ends with silence: its own turn is answered.
        _update(connection, output_modalities=["text"])
        _append(connection, SILENCE_300MS)
        second = list(events_until(connection))
    assert rest[0]["type"] == "input_audio_buffer.speech_started"
    done = rest[-1]["response"]
    assert done["status"] == "cancelled" and done["status_details"]["reason"] == "turn_detected"
    assert done["output"][0]["status"] == "incomplete"
    assert not any(e["type"] == "response.output_audio.delta" for e in rest)
    assert truncated["type"] == "conversation.item.truncated"
    assert truncated["item_id"] == item_id and truncated["audio_end_ms"] == played_ms // 2
    assert [e["type"] for e in second][:3] == [
        "input_audio_buffer.speech_stopped",
        "input_audio_buffer.committed",
        "conversation.item.added",
    ]
    assert text_of(second) == "Sure, stopping."
    first_entry, second_entry = llmts_session.requests(operation="realtime", order="asc")
    assert first_entry["success"] is False and first_entry["emitted_content_frames"] == 2
    assert second_entry["success"] is True
