"""The public control API reads the dashboard uses, over raw HTTP (docs/dashboard.md): session counters,
``GET /admin-api/queues``, the journal's ``after`` cursor and ``retry_group``."""

from __future__ import annotations

import pytest

from llmts import LlmTestServer, SessionClient
from tests.helpers import DASHBOARD_CONTROL_KEY, OPENAI_CHAT_PATH, RawResponse, raw_request
from tests.support.in_process import send_raw


def _chat(session: SessionClient, text: str = "hi", headers: dict[str, str] | None = None) -> RawResponse:
    body = {"model": "gpt-4.1-mini", "messages": [{"role": "user", "content": text}]}
    return send_raw(session, "POST", OPENAI_CHAT_PATH, body, {"Authorization": "Bearer k", **(headers or {})})


# --- control API reads the dashboard uses ---------------------------------------------------------------


def test_session_listing_carries_created_time_declarations_and_journal_counters(
    app_session: SessionClient,
) -> None:
    app_session.configure(
        {
            "journal": {"max_entries": 2},
            "scenarios": [{"terminal_policy": "repeat_last_response", "responses": [{"text": "x"}]}],
            "conversations": [
                {
                    "steps": [
                        {
                            "id": "a",
                            "when": {"latest_user_equals": "never"},
                            "response": {"text": "y"},
                            "complete": True,
                        }
                    ]
                }
            ],
        }
    )
    for _ in range(3):
        assert _chat(app_session).status == 200
    (info,) = [s for s in app_session.server.sessions() if s["id"] == app_session.id]
    assert info["configured"] is True
    assert info["created_at"].endswith("Z")
    assert (info["scenario_count"], info["conversation_count"]) == (1, 1)
    assert (info["request_count"], info["journal_entries"], info["evicted_count"]) == (3, 2, 1)
    assert info["journal_bytes"] > 0
    app_session.reset()
    (info,) = [s for s in app_session.server.sessions() if s["id"] == app_session.id]
    assert (info["request_count"], info["journal_entries"], info["journal_bytes"]) == (0, 0, 0)


def test_queues_report_how_far_each_scenario_advanced(app_session: SessionClient) -> None:
    assert app_session.queues() == []  # unconfigured: no queue
    app_session.configure(
        {
            "scenarios": [
                {"id": "once", "model": "m1", "responses": [{"text": "1"}, {"text": "2"}]},
                {
                    "id": "stub",
                    "model": "m2",
                    "terminal_policy": "repeat_last_response",
                    "responses": [{"text": "s"}],
                },
                {
                    "id": "loop",
                    "model": "m3",
                    "terminal_policy": "restart",
                    "responses": [{"text": "a"}, {"text": "b"}],
                },
            ]
        }
    )
    client = app_session.openai_client(max_retries=0)

    def ask(model: str) -> None:
        client.chat.completions.create(model=model, messages=[{"role": "user", "content": "hi"}])

    for model in ("m1", "m1", "m2", "m2", "m3", "m3", "m3"):
        ask(model)
    once, stub, loop = app_session.queues()
    assert once == {
        "index": 0,
        "scenario": "once",
        "terminal_policy": "reject",
        "length": 2,
        "consumed": 2,
        "next_response_index": None,
        "exhausted": True,
    }
    assert (stub["consumed"], stub["next_response_index"], stub["exhausted"]) == (1, 0, False)
    assert (loop["consumed"], loop["next_response_index"], loop["exhausted"]) == (1, 1, False)
    before = app_session.queues()
    assert app_session.queues() == before  # reading consumes nothing
    app_session.reset()
    assert [q["consumed"] for q in app_session.queues()] == [0, 0, 0]


def test_queues_need_the_control_key(dashboard_server: LlmTestServer) -> None:
    assert raw_request(dashboard_server.url, "GET", "/admin-api/queues").status == 401
    bearer = {"Authorization": f"Bearer {DASHBOARD_CONTROL_KEY}"}
    assert raw_request(dashboard_server.url, "GET", "/admin-api/queues", headers=bearer).json() == []


def test_the_after_cursor_returns_only_newer_entries(app_session: SessionClient) -> None:
    for text in ("one", "two", "three", "four"):
        assert _chat(app_session, text).status == 200
    newer = app_session.requests(after=2, order="asc")
    assert [entry["sequence"] for entry in newer] == [3, 4]
    assert app_session.requests(after=4) == []
    assert [e["sequence"] for e in app_session.requests(after=0, order="asc")] == [1, 2, 3, 4]
    answer = send_raw(
        app_session.server,
        "GET",
        "/admin-api/requests?after=3",
        headers={"X-Llm-Test-Server-Session": app_session.id},
    )
    # The counters still describe the whole journal.
    assert (answer.headers["x-total-count"], answer.headers["x-total-observed"]) == ("1", "4")
    exported = app_session.export("json", after=3)
    assert exported["evidence"]["first_retained_sequence"] == 1
    assert exported["evidence"]["last_retained_sequence"] == 4
    assert exported["query"]["after"] == 3


@pytest.mark.parametrize("query", ["after=-1", "after=x", "after=", "after=1&after=2"])
def test_a_bad_cursor_is_a_400(app_session: SessionClient, query: str) -> None:
    answer = send_raw(
        app_session.server,
        "GET",
        f"/admin-api/requests?{query}",
        headers={"X-Llm-Test-Server-Session": app_session.id},
    )
    assert answer.status == 400
    assert answer.json()["error"]["code"] == "invalid_query"
    assert answer.json()["error"]["details"][0]["path"] == "after"


def test_requests_filter_by_retry_group(app_session: SessionClient) -> None:
    group = {"X-Llm-Test-Server-Retry-Group": "g1"}
    assert _chat(app_session, "a", group).status == 200
    assert _chat(app_session, "b").status == 200
    assert _chat(app_session, "c", group).status == 200
    assert [e["sequence"] for e in app_session.requests(retry_group="g1", order="asc")] == [1, 3]
    assert app_session.requests(retry_group="other") == []
