"""A session's ``budget`` on an OpenAI realtime connection (docs/configuration.md, ``budget``): a turn is
priced like a request, and once the budget is used up the next turn is refused with an ``error`` event of
code ``insufficient_quota``, journaled, consuming no scripted answer."""

from __future__ import annotations

from llmts.client import SessionClient
from tests.realtime.support import check_openai_event, events_until, text_of


def test_a_turn_past_the_budget_is_refused_and_consumes_nothing(llmts_session: SessionClient) -> None:
    usage = {"input_tokens": 1000, "output_tokens": 100}
    llmts_session.configure(
        {
            "scenarios": [
                {
                    "id": "talk",
                    "operation": "realtime",
                    "responses": [{"text": "first", "usage": usage}, {"text": "second", "usage": usage}],
                }
            ],
            "budget": {"max_total_tokens": 1000},
        }
    )
    client = llmts_session.openai_client(max_retries=0)
    with client.realtime.connect(model="gpt-realtime") as connection:
        check_openai_event(connection.recv())
        connection.session.update(session={"type": "realtime", "output_modalities": ["text"]})
        check_openai_event(connection.recv())
        connection.response.create()
        assert text_of(events_until(connection)) == "first"
        connection.response.create()
        refused = list(events_until(connection))
    [error] = [event for event in refused if event["type"] == "error"]
    assert error["error"]["code"] == "insufficient_quota"
    assert "1100 tokens used of max_total_tokens 1000" in error["error"]["message"]
    entries = llmts_session.requests(operation="realtime", order="asc")
    assert [(e["error_code"], e["scenario"], e["usage"] is not None) for e in entries] == [
        (None, "talk", True),
        ("insufficient_quota", None, False),
    ]
    (queue,) = llmts_session.queues()
    assert queue["consumed"] == 1
    totals = llmts_session.usage()["totals"]
    assert (totals["requests"], totals["total_tokens"]) == (1, 1100)
