"""Client events that arrive together (docs/realtime.md, "Interruption"): a ``response.cancel`` right behind
its ``response.create``, and a whole barge-in (speech then silence) pushed at once during an answer. Each
must end the answer as cancelled, and the barge-in's speech must still make the next turn."""

from __future__ import annotations

import base64
import functools

from llmts.client import SessionClient
from tests.realtime.support import check_openai_event, events_until, text_of
from tests.support.configure import script

_SPEECH = base64.b64encode((1000).to_bytes(2, "little", signed=True) * 4800).decode()  # 200 ms, 24 kHz
_SILENCE = base64.b64encode(bytes(24_000)).decode()  # 500 ms


# One realtime scenario answering the given responses in order; top-level fields as keywords.
_configure = functools.partial(script, scenario={"operation": "realtime"})


def test_a_cancel_right_behind_its_create_cancels_the_answer(llmts_session: SessionClient) -> None:
    never = {"text": "never said", "delay_ms": 3000}
    _configure(llmts_session, never, never, never, {"text": "next"})
    client = llmts_session.openai_client(max_retries=0)
    with client.realtime.connect(model="gpt-realtime") as connection:
        check_openai_event(connection.recv())
        connection.session.update(session={"type": "realtime", "output_modalities": ["text"]})
        check_openai_event(connection.recv())
        for _ in range(3):  # back to back: often one read on the server
            connection.response.create()
            connection.response.cancel()
            done = list(events_until(connection))[-1]
            assert done["response"]["status"] == "cancelled", done
            assert done["response"]["status_details"]["reason"] == "client_cancelled"
        connection.response.create()
        answered = list(events_until(connection))
    # Each cancelled turn took its scripted answer, whether the cancel came before or during its delay.
    assert text_of(answered) == "next"
    entries = llmts_session.requests(operation="realtime", order="asc")
    assert [e["error_code"] for e in entries] == ["cancelled_client_cancelled"] * 3 + [None]


def test_a_whole_barge_in_pushed_at_once_cancels_and_makes_the_next_turn(
    llmts_session: SessionClient,
) -> None:
    _configure(
        llmts_session,
        {"text": "a long answer", "chunks": ["a", " long", " answer"], "delay_ms": 3000},
        {"text": "heard you"},
    )
    client = llmts_session.openai_client(max_retries=0)
    with client.realtime.connect(model="gpt-realtime") as connection:
        check_openai_event(connection.recv())
        connection.session.update(session={"type": "realtime", "output_modalities": ["text"]})
        check_openai_event(connection.recv())
        connection.conversation.item.create(
            item={"type": "message", "role": "user", "content": [{"type": "input_text", "text": "talk"}]}
        )
        connection.response.create()
        for event in connection:
            if check_openai_event(event)["type"] == "response.created":
                break
        connection.input_audio_buffer.append(audio=_SPEECH)
        connection.input_audio_buffer.append(audio=_SILENCE)
        first = list(events_until(connection))
        second = list(events_until(connection))
    assert first[-1]["response"]["status"] == "cancelled"
    assert first[-1]["response"]["status_details"]["reason"] == "turn_detected"
    assert text_of(second) == "heard you"
