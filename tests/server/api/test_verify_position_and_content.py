"""The journal's content filters (``has_tool_results``, ``tool_result_contains``), a request expectation's
``nth``, and what a failed expectation shows of what came closest, over a real server driven by the
official openai SDK through a tool loop (docs/journal.md, "Querying", "Verification")."""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import pytest

from llmts import LlmTestServer, ServerError, SessionClient
from llmts.schema.verify import VerificationResult
from tests.helpers import WEATHER_TOOL, raw_request
from tests.support.configure import script

pytestmark = pytest.mark.sdk

GPT = "gpt-4.1-mini"
# Long enough to be shortened in a report (200 characters).
PARIS = json.dumps({"city": "Paris", "sky": "clear", "notes": "calm " * 60})
ROME = json.dumps({"city": "Rome", "sky": "rain"})

_configure = partial(script, models=[GPT])


def _weather(city: str, call_id: str) -> dict[str, Any]:
    return {"tool_calls": [{"id": call_id, "name": "get_weather", "arguments": {"city": city}}]}


def _tool_loop(session: SessionClient) -> list[str]:
    """Three requests: the question (-> a Paris call), Paris's result (-> a Rome call), both results (->
    the answer). Returns their request ids in order."""
    _configure(
        session, _weather("Paris", "call_p"), _weather("Rome", "call_r"), {"text": "Clear, then rain."}
    )
    client = session.openai_client(max_retries=0, _strict_response_validation=True)
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Weather in Paris, then Rome?"}]
    for content in (PARIS, ROME, None):
        answer = client.chat.completions.create(model=GPT, messages=messages, tools=[WEATHER_TOOL])
        message = answer.choices[0].message
        if content is None:
            assert message.content == "Clear, then rain."
            break
        (call,) = message.tool_calls or []
        messages += [
            message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": call.id, "content": content},
        ]
    return [entry["request_id"] for entry in session.requests(order="asc")]


def _failure(result: VerificationResult) -> Any:
    assert not result.passed
    (failure,) = result.failures
    return failure


def test_content_filters_select_by_the_tool_results_sent(llmts_session: SessionClient) -> None:
    asked, paris, both = _tool_loop(llmts_session)

    def ids(**filters: Any) -> list[str]:
        return [entry["request_id"] for entry in llmts_session.requests(order="asc", **filters)]

    assert ids(has_tool_results=True) == [paris, both]
    assert ids(has_tool_results=False) == [asked]
    assert ids(tool_result_contains='"sky": "rain"') == [both]
    assert ids(tool_result_contains="Paris") == [paris, both]
    assert ids(tool_result_contains="paris") == []  # case-sensitive
    assert ids(tool_result_contains="Rome", has_tool_results=True, provider="openai") == [both]
    # The export filters the same way.
    exported = llmts_session.export(tool_result_contains="rain")
    assert [entry["request_id"] for entry in exported["requests"]] == [both]
    assert exported["query"]["tool_result_contains"] == "rain"


@pytest.mark.parametrize(
    ("query", "path", "message"),
    [
        ("has_tool_results=yes", "has_tool_results", "expected true or false"),
        ("tool_result_contains=" + "x" * 1025, "tool_result_contains", "at most 1024 characters"),
        ("tool_result_contain=x", "tool_result_contain", "unknown query parameter"),
    ],
)
def test_bad_content_filters_are_400s(
    llmts_server: LlmTestServer, llmts_session: SessionClient, query: str, path: str, message: str
) -> None:
    headers = {"X-Llm-Test-Server-Session": llmts_session.id}
    if llmts_server.control_key:
        headers["Authorization"] = f"Bearer {llmts_server.control_key}"
    response = raw_request(llmts_server.url, "GET", f"/admin-api/requests?{query}", headers=headers)
    assert response.status == 400
    error = response.json()["error"]
    assert error["code"] == "invalid_query"
    (detail,) = error["details"]
    assert detail["path"] == path and message in detail["message"]


def test_content_filters_in_scope_and_expectations(llmts_session: SessionClient) -> None:
    _, paris, both = _tool_loop(llmts_session)
    result = llmts_session.verify(
        scope={"has_tool_results": True},
        requests=[
            {"name": "sends Paris only", "query": {"tool_result_contains": "Paris"}, "nth": 1},
            {"name": "sends the rain", "query": {"tool_result_contains": "rain"}},
        ],
        in_order=True,
        no_unexpected_calls=True,
    )
    assert result.passed, result.report()
    assert result.matched_request_ids == [paris, both]
    assert result.evidence["in_scope"] == 2


def test_nth_checks_one_request_and_accounts_only_for_it(llmts_session: SessionClient) -> None:
    asked, paris, both = _tool_loop(llmts_session)
    second = {
        "name": "asks for Rome",
        "query": {"provider": "openai"},
        "nth": 2,
        "tools": [
            {"kind": "response_call", "name": "get_weather", "arguments": {"city": "Rome"}},
            {"kind": "result", "call_id": "call_p", "fields": [{"path": "$.sky", "expected_json": "clear"}]},
        ],
    }
    passed = llmts_session.verify(requests=[second])
    assert passed.passed, passed.report()
    assert passed.matched_request_ids == [paris]

    # The same tool checks on every match fail on the others: nth is what narrowed them to one.
    every = llmts_session.verify(requests=[{**second, "nth": None, "maximum_count": None}])
    assert [f.kind for f in every.failures] == ["tool_count", "tool_count", "tool_count"]
    # The Rome call: not in the first (Paris) nor the third (text); Paris's result: not in the first.
    assert [f.request_ids for f in every.failures] == [[asked], [both], [asked]]

    # Only the n-th is accounted for.
    unexpected = _failure(llmts_session.verify(requests=[second], no_unexpected_calls=True))
    assert unexpected.kind == "unexpected_call" and unexpected.request_ids == [asked, both]

    # The first and the third, in order.
    ordered = llmts_session.verify(
        requests=[
            {"name": "third", "query": {"provider": "openai"}, "nth": 3},
            {"name": "first", "query": {"provider": "openai"}, "nth": 1},
        ],
        in_order=True,
    )
    order = _failure(ordered)
    assert (order.kind, order.expectation, order.request_ids) == ("order", "requests[1] (first)", [asked])


def test_a_missing_nth_says_how_many_matched(llmts_session: SessionClient) -> None:
    asked, paris, both = _tool_loop(llmts_session)
    failure = _failure(
        llmts_session.verify(requests=[{"name": "a fourth", "query": {"provider": "openai"}, "nth": 4}])
    )
    assert (failure.kind, failure.expectation) == ("nth_missing", "requests[0] (a fourth)")
    assert failure.message == "expected a 4th matching request, found 3"
    assert (failure.expected, failure.actual, failure.request_ids) == (
        {"nth": 4},
        {"found": 3},
        [asked, paris, both],
    )

    # nth with counts of its own is refused whole.
    with pytest.raises(ServerError) as refused:
        llmts_session.verify({"requests": [{"name": "x", "nth": 2, "minimum_count": 2}]})
    assert refused.value.code == "invalid_verification"
    assert "nth selects one request" in refused.value.details[0]["message"]


def test_a_query_that_matched_nothing_reports_the_nearest_requests(llmts_session: SessionClient) -> None:
    asked, paris, both = _tool_loop(llmts_session)
    query = {"provider": "openai", "has_tool_results": True, "tool_result_contains": "snow"}
    result = llmts_session.verify(requests=[{"name": "snow", "query": query}])
    failure = _failure(result)
    assert failure.kind == "count" and failure.request_ids == []
    assert failure.message == (
        "expected exactly 1 matching request(s), found 0; nearest is #2 (openai chat.completions, "
        "gpt-4.1-mini), which fails tool_result_contains"
    )
    nearest = failure.actual["nearest"]
    # Closest first: #2 and #3 fail one filter, #1 (no tool results at all) two.
    assert [(n["sequence"], n["request_id"]) for n in nearest] == [(2, paris), (3, both), (1, asked)]
    assert {key: nearest[0][key] for key in ("provider", "operation", "model", "status")} == {
        "provider": "openai",
        "operation": "chat.completions",
        "model": GPT,
        "status": 200,
    }
    (unmet,) = nearest[0]["unmet"]
    assert (unmet["filter"], unmet["wanted"]) == ("tool_result_contains", "snow")
    (sent,) = unmet["actual"]
    assert (sent["call_id"], sent["name"]) == ("call_p", "get_weather")
    assert len(sent["content"]) == 200 and sent["content"] == PARIS[:199] + "…"
    assert [u["filter"] for u in nearest[2]["unmet"]] == ["has_tool_results", "tool_result_contains"]
    assert nearest[2]["unmet"][0]["actual"] == 0

    report = result.report()
    assert f'#2 {paris}: openai chat.completions, model "{GPT}", status 200' in report
    assert 'tool_result_contains: wanted "snow", none of its tool results holds it:' in report
    assert f"get_weather(call_p): {PARIS[:199]}…" in report
    assert f"get_weather(call_r): {ROME}" in report
    assert "has_tool_results: wanted true, it sent 0 tool result(s)" in report

    # Another filter's value as the entry had it; an empty scope says so.
    model = _failure(llmts_session.verify(requests=[{"name": "big", "query": {"model": "gpt-4o"}}]))
    assert model.actual["nearest"][0]["unmet"] == [{"filter": "model", "wanted": "gpt-4o", "actual": GPT}]
    empty = _failure(llmts_session.verify(scope={"provider": "anthropic"}, requests=[{"name": "any"}]))
    assert empty.actual == {"found": 0, "nearest": []}
    assert empty.message.endswith("found 0; no request in scope")


def test_a_failed_tool_check_shows_what_the_request_sent(llmts_session: SessionClient) -> None:
    _, _, both = _tool_loop(llmts_session)
    expectation = {
        "name": "final",
        "query": {"tool_result_contains": "rain"},
        "tools": [{"kind": "result", "call_id": "call_r", "result": {"city": "Rome", "sky": "snow"}}],
    }
    result = llmts_session.verify(requests=[expectation])
    failure = _failure(result)
    assert (failure.kind, failure.request_ids) == ("tool_count", [both])
    assert "found 0 (its result items: get_weather(call_p), get_weather(call_r))" in failure.message
    # Rome's result fails only the content; Paris's the call id too: Rome first.
    assert failure.actual == {
        "found": 0,
        "kind": "result",
        "sent_count": 2,
        "sent": [
            {"call_id": "call_r", "name": "get_weather", "content": ROME, "mismatched": ["result"]},
            {
                "call_id": "call_p",
                "name": "get_weather",
                "content": PARIS[:199] + "…",
                "mismatched": ["call_id", "result"],
            },
        ],
    }
    report = result.report()
    assert "the request sent back 2 tool result(s), closest first:" in report
    assert f"get_weather(call_r): {ROME}  [differs: result]" in report

    # A call's arguments, and the field paths that differ.
    calls = _failure(
        llmts_session.verify(
            requests=[
                {
                    "name": "asks",
                    "query": {"has_tool_results": False},
                    "tools": [
                        {
                            "kind": "response_call",
                            "name": "get_weather",
                            "fields": [{"path": "$.city", "expected_json": "Rome"}],
                        }
                    ],
                }
            ]
        )
    )
    assert calls.actual["sent"] == [
        {
            "call_id": "call_p",
            "name": "get_weather",
            "arguments": '{"city":"Paris"}',
            "mismatched": ["$.city"],
        }
    ]
    assert (
        "the response made 1 tool call(s), closest first:"
        in llmts_session.verify(
            requests=[
                {
                    "name": "asks",
                    "query": {"has_tool_results": False},
                    "tools": [{"kind": "response_call", "name": "get_time"}],
                }
            ]
        ).report()
    )
