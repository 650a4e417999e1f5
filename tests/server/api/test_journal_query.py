"""``GET /admin-api/requests`` and its export over a real server: every filter, every 400, pagination,
headers, JSON/NDJSON equal to the query, control authorization and session scoping."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

import anthropic
import openai
import pytest

from llmts import LlmTestServer, ServerError, SessionClient
from llmts.schema.journal import JournalQuery
from tests.helpers import USER_HI, raw_request
from tests.support.in_process import send_raw

pytestmark = pytest.mark.sdk

CONFIG = {
    "models": ["gpt-4.1-mini", "gpt-4o", "claude-test-1"],
    "scenarios": [
        {
            "id": "chat",
            "provider": "openai",
            "model": "gpt-4.1-mini",
            "responses": [
                {"text": "A"},
                {
                    "error": {
                        "status": 429,
                        "code": "rate_limit_exceeded",
                        "message": "Slow",
                        "retry_after": 0,
                    }
                },
                {"text": "B", "chunks": ["B"]},
            ],
        },
        {"id": "big", "model": "gpt-4o", "responses": [{"text": "C"}]},
        {"id": "claude", "provider": "anthropic", "responses": [{"text": "D"}]},
    ],
}


@pytest.fixture
def populated(app_session: SessionClient) -> dict[int, dict[str, Any]]:
    """Six attempts: 200, 429, streamed 200, 200 (gpt-4o), anthropic 200, 409 exhausted; by sequence."""
    app_session.configure(CONFIG)
    client = app_session.openai_client(max_retries=0)
    client.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI)
    with pytest.raises(openai.RateLimitError):
        client.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI)
    list(client.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI, stream=True))
    client.chat.completions.create(model="gpt-4o", messages=USER_HI)
    app_session.anthropic_client(max_retries=0).messages.create(
        model="claude-test-1", max_tokens=16, messages=USER_HI
    )
    with pytest.raises(openai.ConflictError):
        client.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI)
    return {entry["sequence"]: entry for entry in app_session.requests()}


def _sequences(session: SessionClient, **filters: Any) -> list[int]:
    return [entry["sequence"] for entry in session.requests(**filters)]


def test_entries_describe_each_attempt(populated: dict[int, dict[str, Any]]) -> None:
    assert [(e["provider"], e["model"], e["status"], e["scenario"]) for e in populated.values()] == [
        ("openai", "gpt-4.1-mini", 409, None),
        ("anthropic", "claude-test-1", 200, "claude"),
        ("openai", "gpt-4o", 200, "big"),
        ("openai", "gpt-4.1-mini", 200, "chat"),
        ("openai", "gpt-4.1-mini", 429, "chat"),
        ("openai", "gpt-4.1-mini", 200, "chat"),
    ]
    assert populated[2]["retry_after_seconds"] == 0
    assert all(e["completed"] and e["started_at"] <= e["completed_at"] for e in populated.values())


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({}, [6, 5, 4, 3, 2, 1]),
        ({"provider": "openai"}, [6, 4, 3, 2, 1]),
        ({"provider": "anthropic"}, [5]),
        ({"provider": "Anthropic"}, []),  # exact, case-sensitive
        ({"model": "gpt-4o"}, [4]),
        ({"status": 429}, [2]),
        ({"status": 409}, [6]),
        ({"operation": "messages"}, [5]),
        ({"operation": "chat.completions", "streaming": True}, [3]),
        ({"scenario": "big"}, [4]),
        ({"scenario": "bi"}, []),
        ({"conversation": "nope"}, []),
        ({"step": "nope"}, []),
        ({"streaming": False, "provider": "openai"}, [6, 4, 2, 1]),
        ({"completed": True}, [6, 5, 4, 3, 2, 1]),
        ({"completed": False}, []),
        ({"success": True}, [5, 4, 3, 1]),
        ({"success": False}, [6, 2]),
        ({"error_code": "rate_limit_exceeded"}, [2]),
        ({"error_code": "llm_test_server_scenario_exhausted"}, [6]),
        ({"order": "asc"}, [1, 2, 3, 4, 5, 6]),
        ({"order": "desc", "limit": 2}, [6, 5]),
        ({"offset": 2, "limit": 2}, [4, 3]),
        ({"order": "asc", "offset": 4, "limit": 500}, [5, 6]),
        ({"offset": 6}, []),
    ],
)
def test_filters_order_and_pages(
    app_session: SessionClient,
    populated: dict[int, dict[str, Any]],
    filters: dict[str, Any],
    expected: list[int],
) -> None:
    assert _sequences(app_session, **filters) == expected


def test_request_id_and_time_range_filters(
    app_session: SessionClient, populated: dict[int, dict[str, Any]]
) -> None:
    third = populated[3]
    assert _sequences(app_session, request_id=third["request_id"]) == [3]
    assert _sequences(app_session, request_id=third["request_id"][:-1]) == []
    start = third["started_at"]
    assert _sequences(app_session, from_=start) == [6, 5, 4, 3]
    assert _sequences(app_session, to=start) == [3, 2, 1]
    assert _sequences(app_session, **{"from_": start, "to": start}) == [3]  # both bounds inclusive
    # Offsets other than Z are accepted and compared as instants.
    assert _sequences(app_session, to=start.replace("Z", "+00:00")) == [3, 2, 1]
    assert _sequences(app_session, to="2000-01-01T00:00:00Z") == []


def test_typed_query_model_gives_the_same_answer(
    app_session: SessionClient, populated: dict[int, dict[str, Any]]
) -> None:
    query = JournalQuery(provider="openai", success=True, order="asc", limit=2)
    assert [e["sequence"] for e in app_session.requests(query)] == [1, 3]
    assert app_session.export("json", query)["query"] == {
        "provider": "openai",
        "success": True,
        "order": "asc",
        "offset": 0,
        "limit": 2,
    }


def test_headers_describe_the_filter_and_the_whole_journal(
    app_session: SessionClient, populated: dict[int, dict[str, Any]]
) -> None:
    status, headers, entries = app_session.server.request(
        "GET", "/admin-api/requests?provider=openai&limit=2", session_id=app_session.id
    )
    assert status == 200 and len(entries) == 2
    assert headers["X-Total-Count"] == "5"  # matched before paging
    assert headers["X-Total-Observed"] == "6"
    assert headers["X-Evicted-Count"] == "0"
    assert headers["X-Retention-Truncated"] == "false"
    exported = app_session.export()
    assert int(headers["X-Retained-Byte-Count"]) == exported["evidence"]["retained_byte_count"] > 6 * 768


@pytest.mark.parametrize(
    "filters",
    [
        {},
        {"provider": "openai", "order": "asc"},
        {"success": False},
        {"offset": 1, "limit": 3},
        {"scenario": "absent"},
    ],
)
def test_exports_equal_the_query(
    app_session: SessionClient, populated: dict[int, dict[str, Any]], filters: dict[str, Any]
) -> None:
    entries = app_session.requests(**filters)
    exported = app_session.export("json", **filters)
    lines = app_session.export("ndjson", **filters)

    assert exported["schema_version"] == 1
    assert exported["requests"] == entries
    assert exported["query"] == {"order": "desc", "offset": 0, "limit": 500, **filters}
    evidence = exported["evidence"]
    assert evidence["returned"] == len(entries)
    assert evidence["total_observed"] == 6 and evidence["evicted_count"] == 0
    assert (evidence["first_retained_sequence"], evidence["last_retained_sequence"]) == (1, 6)
    assert evidence["retention_truncated"] is False
    metadata, *requests = lines
    assert metadata == {
        "type": "metadata",
        "schema_version": 1,
        "query": exported["query"],
        "evidence": evidence,
    }
    assert requests == [{"type": "request", **entry} for entry in entries]


def test_ndjson_is_served_as_lines(app_session: SessionClient, populated: dict[int, dict[str, Any]]) -> None:
    response = send_raw(
        app_session.server,
        "GET",
        "/admin-api/requests/export?format=ndjson&limit=2",
        headers={"X-Llm-Test-Server-Session": app_session.id},
    )
    assert response.status == 200
    assert response.headers["content-type"] == "application/x-ndjson"
    assert response.headers["x-total-count"] == "6"
    lines = response.body.decode().splitlines()
    assert len(lines) == 3 and response.body.endswith(b"\n")
    assert [json.loads(line)["type"] for line in lines] == ["metadata", "request", "request"]


@pytest.mark.parametrize(
    ("query", "path"),
    [
        ("provider=openai&provider=anthropic", "provider"),  # duplicate
        ("provider=", "provider"),  # blank
        ("model=%20", "model"),
        ("status=abc", "status"),
        ("status=99", "status"),
        ("status=600", "status"),
        ("streaming=yes", "streaming"),
        ("completed=1", "completed"),
        ("success=TRUE", "success"),
        ("forwarded=yes", "forwarded"),  # true or false only, as the other flags
        ("from=yesterday", "from"),
        ("from=2026-01-01T00:00:00", "query"),  # no time zone
        ("from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z", "query"),  # from after to
        ("from=2026-01-01T00:00:00&to=2026-01-02T00:00:00Z", "query"),  # one bound naive (was a 500)
        ("from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00", "query"),
        ("order=newest", "order"),
        ("offset=-1", "offset"),
        ("offset=x", "offset"),
        ("limit=0", "limit"),
        ("limit=501", "limit"),
        ("unknown=1", "unknown"),
        ("format=json", "format"),  # only the export takes format
    ],
)
def test_malformed_queries_are_400_naming_the_parameter(
    app_session: SessionClient, query: str, path: str
) -> None:
    for route in ("/admin-api/requests", "/admin-api/requests/export"):
        if route.endswith("export") and query.startswith("format="):
            continue
        response = send_raw(
            app_session.server,
            "GET",
            f"{route}?{query}",
            headers={"X-Llm-Test-Server-Session": app_session.id},
        )
        assert response.status == 400, (route, query)
        error = response.json()["error"]
        assert error["code"] == "invalid_query"
        assert path in [detail["path"] for detail in error["details"]], error


@pytest.mark.parametrize("fmt", ["xml", "NDJSON", ""])
def test_export_rejects_unknown_formats(app_session: SessionClient, fmt: str) -> None:
    with pytest.raises(ServerError) as caught:
        app_session.server.request(
            "GET", "/admin-api/requests/export?" + urlencode({"format": fmt}), session_id=app_session.id
        )
    assert (caught.value.status, caught.value.code) == (400, "invalid_query")
    assert caught.value.details[0]["path"] == "format"


def test_other_sessions_requests_are_invisible(llmts_app_server: LlmTestServer) -> None:
    mine, theirs = llmts_app_server.create_session(), llmts_app_server.create_session()
    try:
        mine.openai_client(max_retries=0).chat.completions.create(model="gpt-4.1-mini", messages=USER_HI)
        (entry,) = mine.requests()
        assert theirs.requests() == [] and theirs.export()["evidence"]["total_observed"] == 0
        assert theirs.requests(request_id=entry["request_id"]) == []
        assert all(
            e["request_id"] != entry["request_id"] for e in llmts_app_server.default_session.requests()
        )
    finally:
        mine.delete()
        theirs.delete()


def test_unknown_session_is_404(llmts_app_server: LlmTestServer) -> None:
    with pytest.raises(ServerError) as caught:
        llmts_app_server.request("GET", "/admin-api/requests", session_id="ses_" + "0" * 32)
    assert (caught.value.status, caught.value.code) == (404, "llm_test_server_session_not_found")


def test_control_key_guards_query_export_and_verify(
    shared_server_factory: Callable[..., LlmTestServer],
) -> None:
    server = shared_server_factory(control_key="ctl-secret")
    session = server.create_session()
    session.openai_client(max_retries=0).chat.completions.create(model="gpt-4.1-mini", messages=USER_HI)
    session_header = {"X-Llm-Test-Server-Session": session.id}
    for method, path, body in (
        ("GET", "/admin-api/requests", None),
        ("GET", "/admin-api/requests/export?format=ndjson", None),
        ("POST", "/admin-api/verify", {"no_unexpected_calls": True}),
    ):
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Bearer {DEFAULT_KEY}"}):
            response = raw_request(server.url, method, path, body, {**session_header, **headers})
            assert response.status == 401, (path, headers)
            assert response.json()["error"]["code"] == "unauthorized"
        allowed = raw_request(
            server.url, method, path, body, {**session_header, "Authorization": "Bearer ctl-secret"}
        )
        assert allowed.status == 200, path
    assert len(session.requests()) == 1


DEFAULT_KEY = "llmts-test-key"  # the provider key SDK clients send: never a control credential


def test_reset_and_configure_clear_the_journal_and_its_counters(app_session: SessionClient) -> None:
    app_session.configure({"journal": {"max_entries": 1}, "scenarios": [{"responses": [{"text": "x"}]}]})
    client = app_session.openai_client(max_retries=0)
    client.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI)
    with pytest.raises(openai.ConflictError):
        client.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI)
    evidence = app_session.export()["evidence"]
    assert (evidence["total_observed"], evidence["evicted_count"]) == (2, 1)

    app_session.reset()
    evidence = app_session.export()["evidence"]
    assert (evidence["total_observed"], evidence["evicted_count"], evidence["retained_byte_count"]) == (
        0,
        0,
        0,
    )
    client.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI)
    assert [e["sequence"] for e in app_session.requests()] == [1]

    app_session.configure({"scenarios": [{"responses": [{"text": "y"}]}]})
    assert app_session.requests() == []


def test_in_progress_attempt_has_no_outcome_yet(llmts_session: SessionClient) -> None:
    llmts_session.configure({"scenarios": [{"responses": [{"text": "slow", "delay_ms": 1500}]}]})
    client = llmts_session.openai_client(max_retries=0)
    worker = threading.Thread(
        target=lambda: client.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI)
    )
    worker.start()
    try:
        deadline = time.monotonic() + 5
        while not llmts_session.requests() and time.monotonic() < deadline:
            time.sleep(0.02)
        (entry,) = llmts_session.requests()
        assert (entry["completed"], entry["success"], entry["status"]) == (False, None, None)
        assert _sequences(llmts_session, completed=False) == [1]
        assert _sequences(llmts_session, success=True) == _sequences(llmts_session, success=False) == []
    finally:
        worker.join()
    (entry,) = llmts_session.requests()
    assert (entry["completed"], entry["success"], entry["status"]) == (True, True, 200)


def test_querying_changes_nothing(app_session: SessionClient) -> None:
    app_session.configure({"scenarios": [{"responses": [{"text": "one"}, {"text": "two"}]}]})
    client = app_session.openai_client(max_retries=0)
    assert (
        client.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI).choices[0].message.content
        == "one"
    )
    before = app_session.export()
    for _ in range(3):
        app_session.requests()
        app_session.export("ndjson")
    assert app_session.export() == before
    assert (
        client.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI).choices[0].message.content
        == "two"
    )


def test_anthropic_errors_are_recorded_with_their_codes(app_session: SessionClient) -> None:
    app_session.configure({"models": ["claude-test-1"], "scenarios": [{"responses": [{"text": "x"}]}]})
    client = app_session.anthropic_client(max_retries=0)
    with pytest.raises(anthropic.NotFoundError):
        client.messages.create(model="claude-other", max_tokens=8, messages=USER_HI)
    (entry,) = app_session.requests(status=404)
    assert (entry["provider"], entry["error_code"], entry["success"]) == (
        "anthropic",
        "model_not_found",
        False,
    )
