"""OpenAI Responses API through the official ``openai`` SDK (strict response validation) against a real
gunicorn+gevent server, stored responses: ``previous_response_id``, retrieve and delete, ``store: false``,
reset, input items, retrieving as a stream, counting input tokens, and what a stream cut early or
completed leaves stored and journaled (docs/providers.md, "OpenAI Responses")."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from llmts import ConfigBuilder, SessionClient
from tests.providers.openai.responses_sdk_support import MODEL, WEATHER
from tests.support.journal import completed_entry
from tests.support.openai_tokens import message_tokens as _msg

pytestmark = pytest.mark.sdk


def _needs(client: Any, *path: str) -> None:
    target = client
    for name in path:
        target = getattr(target, name, None)
        if target is None:
            pytest.skip(f"openai {openai.__version__} has no client.{'.'.join(path)}")


def test_previous_response_id_over_three_turns(app_session: SessionClient, app_openai: Any) -> None:
    app_session.configure(ConfigBuilder().scenario().text("One.").text("Two.").text("Three.").build())

    first = app_openai.responses.create(model=MODEL, input="first", instructions="Be brief.")
    second = app_openai.responses.create(model=MODEL, input="second", previous_response_id=first.id)
    with app_openai.responses.stream(model=MODEL, input="third", previous_response_id=second.id) as stream:
        third = stream.get_final_response()

    assert [r.output_text for r in (first, second, third)] == ["One.", "Two.", "Three."]
    assert first.usage.input_tokens == 3 + _msg("Be brief.", "system") + _msg("first")
    # Instructions are not carried over; the earlier turns (inputs and outputs) are.
    assert second.usage.input_tokens == 3 + _msg("first") + _msg("One.", "assistant") + _msg("second")
    assert third.usage.input_tokens == second.usage.input_tokens + _msg("Two.", "assistant") + _msg("third")
    assert second.previous_response_id == first.id
    retrieved = app_openai.responses.retrieve(second.id)
    assert retrieved.previous_response_id == first.id
    assert retrieved.model_dump() == second.model_dump()


def test_retrieve_delete_and_404s(app_session: SessionClient, app_openai: Any) -> None:
    app_session.configure(ConfigBuilder().scenario().text("kept").text("after").build())
    created = app_openai.responses.create(model=MODEL, input="Hi")

    assert app_openai.responses.retrieve(created.id).model_dump() == created.model_dump()
    deleted = app_openai.responses.with_raw_response.delete(created.id)
    assert deleted.http_response.json() == {"id": created.id, "object": "response", "deleted": True}

    with pytest.raises(openai.NotFoundError):
        app_openai.responses.retrieve(created.id)
    with pytest.raises(openai.NotFoundError):
        app_openai.responses.delete(created.id)
    with pytest.raises(openai.NotFoundError) as caught:
        app_openai.responses.create(model=MODEL, input="again", previous_response_id=created.id)
    assert caught.value.code == "previous_response_not_found"
    assert caught.value.param == "previous_response_id"
    # The rejected continuation consumed nothing.
    assert app_openai.responses.create(model=MODEL, input="x").output_text == "after"


def test_store_false_is_not_retrievable(app_session: SessionClient, app_openai: Any) -> None:
    app_session.configure(ConfigBuilder().scenario(terminal_policy="repeat_last_response").text("x").build())

    response = app_openai.responses.create(model=MODEL, input="Hi", store=False)

    assert response.store is False
    with pytest.raises(openai.NotFoundError):
        app_openai.responses.retrieve(response.id)
    with pytest.raises(openai.NotFoundError) as caught:
        app_openai.responses.create(model=MODEL, input="x", previous_response_id=response.id)
    assert caught.value.code == "previous_response_not_found"


def test_reset_forgets_stored_responses(app_session: SessionClient, app_openai: Any) -> None:
    app_session.configure(ConfigBuilder().scenario().text("x").build())
    response = app_openai.responses.create(model=MODEL, input="Hi")

    app_session.reset()

    with pytest.raises(openai.NotFoundError):
        app_openai.responses.retrieve(response.id)


def test_input_items_list(app_session: SessionClient, app_openai: Any) -> None:
    app_session.configure(ConfigBuilder().scenario().text("ok").build())
    response = app_openai.responses.create(
        model=MODEL,
        input=[
            {"role": "user", "content": "Weather?"},
            {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
        ],
        tools=[WEATHER],
    )

    items = list(app_openai.responses.input_items.list(response.id, order="asc"))
    newest_first = list(app_openai.responses.input_items.list(response.id))

    assert [item.type for item in items] == ["message", "function_call", "function_call_output"]
    assert items[0].content[0].text == "Weather?"
    assert (items[1].call_id, items[1].name) == ("call_1", "get_weather")
    assert items[2].output == "sunny"
    assert [i.id for i in newest_first] == [i.id for i in reversed(items)]
    assert len({i.id for i in items}) == 3


def test_retrieve_as_stream(app_session: SessionClient, app_openai: Any) -> None:
    app_session.configure(ConfigBuilder().scenario().text("Hello there.", chunks=["Hello", " there."]))
    created = app_openai.responses.create(model=MODEL, input="Hi")

    events = list(app_openai.responses.retrieve(created.id, stream=True))

    assert events[0].type == "response.created" and events[-1].type == "response.completed"
    assert events[-1].response.model_dump() == created.model_dump()
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == "Hello there."


def test_input_tokens_count_consumes_nothing(app_session: SessionClient, app_openai: Any) -> None:
    _needs(app_openai, "responses", "input_tokens")
    app_session.configure(ConfigBuilder().scenario().text("x").build())

    counted = app_openai.responses.input_tokens.count(model=MODEL, input="Hi")

    assert counted.input_tokens == 3 + _msg("Hi")
    assert app_openai.responses.create(model=MODEL, input="Hi").output_text == "x"


def _journal_entry(session: SessionClient) -> dict[str, Any]:
    return completed_entry(session, operation="responses", streaming=True)


def test_early_clean_end_stops_before_completed_but_the_response_is_stored(
    llmts_session: SessionClient, openai_client: Any
) -> None:
    llmts_session.configure(
        {
            "scenarios": [
                {
                    "responses": [
                        {
                            "text": "First second.",
                            "chunks": ["First ", "second."],
                            "stream_delivery": {"mode": "early_clean_end", "after_content_frames": 1},
                        }
                    ]
                }
            ]
        }
    )

    with openai_client.responses.stream(model=MODEL, input="Hi") as stream:
        events = list(stream)
        with pytest.raises(RuntimeError, match=r"response\.completed"):
            stream.get_final_response()

    assert [e.delta for e in events if e.type == "response.output_text.delta"] == ["First "]
    assert events[-1].type == "response.output_text.delta"
    entry = _journal_entry(llmts_session)
    assert entry["emitted_content_frames"] == 1
    assert entry["terminal_marker_observed"] is False
    assert entry["transport_outcome"] == "early_end"
    # Committed before delivery: the whole answer is stored even though the stream was cut.
    created_id = events[0].response.id
    assert openai_client.responses.retrieve(created_id).output_text == "First second."


def test_completed_stream_records_the_terminal_marker(
    llmts_session: SessionClient, openai_client: Any
) -> None:
    llmts_session.configure(ConfigBuilder().scenario().text("ab", chunks=["a", "b"]).build())

    with openai_client.responses.stream(model=MODEL, input="Hi") as stream:
        stream.get_final_response()

    entry = _journal_entry(llmts_session)
    assert entry["provider"] == "openai" and entry["model"] == MODEL
    assert entry["emitted_content_frames"] == 2
    assert entry["terminal_marker_observed"] is True
    assert entry["transport_outcome"] == "completed"
