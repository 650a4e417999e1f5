"""A test's trace file in a real Chromium (docs/dashboard.md, "Trace files"): a session on a real server
with a stream cut short, a tool loop, a conversation graph and a 429 with retry-after, exported with a
failed verification, written as one HTML file, the session deleted, and the file opened from ``file://``
with every network request refused: the dashboard's own views show everything, offline and read-only.

Also the live dashboard's "Log out": never without a control key, even when the login state cannot be
read (app.js)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from llmts import LlmTestServer, ServerError
from llmts.client.trace_export import collect_trace_export
from llmts.dashboard.bundle import bundle_modules
from llmts.dashboard.trace import read_trace, write_trace
from llmts.errors import SessionNotFound
from tests.dashboard.browser import TIMEOUT_MS, configured_expect, login, offline_page
from tests.dashboard.sample_configs import APPROVAL_GRAPH, WEATHER_TOOL

NODE_ID = "tests/test_agent.py::test_weather_stream[</script><b>paris</b>]"
LONGREPR = (
    "AssertionError: verification failed: 1 problem(s)\n"
    "- [terminal_marker] requests[0] (complete streams): a stream ended without its terminal marker"
)
# Request content that would end a script element or open an HTML comment if it were not escaped.
HOSTILE = "</script><!-- <script>window.__xss = 1</script>"
EXPECTATION = {
    "requests": [
        {
            "name": "complete streams",
            "query": {"streaming": True},
            "minimum_count": 1,
            "maximum_count": None,
            "require_streaming_terminal_marker": True,
        }
    ]
}
CONFIG = {
    "scenarios": [
        {
            "id": "weather",
            "model": "gpt-tools",
            "responses": [
                {"tool_calls": [{"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}]},
                {"text": "Sunny in Paris."},
            ],
        },
        {
            "id": "cut",
            "model": "gpt-stream",
            "responses": [
                {
                    "text": "First second.",
                    "chunks": ["First ", "second."],
                    "stream_delivery": {"mode": "early_clean_end", "after_content_frames": 1},
                }
            ],
        },
        {
            "id": "limited",
            "model": "gpt-busy",
            "responses": [
                {
                    "error": {
                        "status": 429,
                        "code": "rate_limit_exceeded",
                        "message": "Slow down",
                        "retry_after": 0.2,
                    }
                },
                {"text": "Done."},
            ],
        },
    ],
    "conversations": [{**APPROVAL_GRAPH, "model": "gpt-graph"}],
}


# Journal queries asked of the server while the session lived and of the trace's data source offline:
# the answers must be the same (trace_source.js mirrors GET /admin-api/requests).
QUERIES: list[dict[str, str]] = [
    {},
    {"order": "asc", "limit": "2", "offset": "1"},
    {"order": "desc", "offset": "5"},
    {"model": "gpt-tools"},
    {"operation": "chat"},
    {"operation": "chat.completions", "order": "asc"},
    {"status": "429"},
    {"streaming": "true"},
    {"streaming": "false", "completed": "true", "success": "false"},
    {"retry_group": "busy-1", "order": "asc"},
    {"conversation": "c1", "step": "approve"},
    {"scenario": "cut"},
    {"after": "3", "order": "asc", "limit": "2"},
    {"error_code": "rate_limit_exceeded"},
    {"provider": "openai", "forwarded": "false"},
    {"tool_name": "get_weather"},
    {"has_tool_results": "true"},
    {"has_tool_results": "false", "order": "asc"},
    {"tool_result_contains": "clear"},
    {"tool_result_contains": "cloudy"},
    {"tool_result_contains": "\u00e9" * 1025},
    {"has_tool_results": "yes"},
    {"request_id": "req_not_there"},
    {"status": "abc"},
    {"limit": "0"},
    {"limit": "501"},
    {"streaming": "yes"},
    {"order": "sideways"},
    {"after": "-1"},
    {"provider": ""},
    {"from": "2026-01-01T00:00:00"},
]


@dataclass
class Trace:
    path: Path
    export: dict[str, Any]
    session_id: str
    queries: list[dict[str, str]]  # QUERIES and a time range
    server_answers: list[dict[str, Any]]  # what the server answered them

    @property
    def url(self) -> str:
        return self.path.as_uri()


def _drive(session: Any) -> None:
    """Everything the trace must show, through the official openai SDK."""
    openai = session.openai_client(max_retries=0)
    question = [{"role": "user", "content": f"Weather in Paris? {HOSTILE}"}]
    asked = openai.chat.completions.create(model="gpt-tools", messages=question, tools=[WEATHER_TOOL])
    history = [
        *question,
        asked.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": "call_1", "content": '{"sky": "clear"}'},
    ]
    openai.chat.completions.create(model="gpt-tools", messages=history, tools=[WEATHER_TOOL])
    stream = openai.chat.completions.create(
        model="gpt-stream", messages=[{"role": "user", "content": "stream it"}], stream=True
    )
    assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == "First "
    retrying = session.openai_client(max_retries=1)  # waits the 429's retry-after, then asks again
    done = retrying.chat.completions.create(
        model="gpt-busy",
        messages=[{"role": "user", "content": "busy?"}],
        extra_headers={"X-Llm-Test-Server-Retry-Group": "busy-1"},
    )
    assert done.choices[0].message.content == "Done."
    graph = session.for_conversation("c1").openai_client(max_retries=0)
    talk = [{"role": "user", "content": "Start"}]
    asked = graph.chat.completions.create(model="gpt-graph", messages=talk)
    talk += [
        {"role": "assistant", "content": asked.choices[0].message.content},
        {"role": "user", "content": "Approve"},
    ]
    assert (
        graph.chat.completions.create(model="gpt-graph", messages=talk).choices[0].message.content
        == "Approved"
    )


@pytest.fixture(scope="module")
def trace(llmts_server: LlmTestServer, tmp_path_factory: pytest.TempPathFactory) -> Trace:
    """The trace of a failed test, written to a file; its session is deleted before any browser opens it."""
    session = llmts_server.create_session()
    try:
        session.configure(CONFIG)
        _drive(session)
        verdict = session.verify(EXPECTATION)
        assert not verdict.passed
        test = {
            "nodeid": NODE_ID,
            "outcome": "failed",
            "duration_seconds": 1.25,
            "when": "call",
            "longrepr": LONGREPR,
        }
        export = collect_trace_export(session, test=test, verification=verdict, expectation=EXPECTATION)
        first, last = export["requests"][2]["started_at"], export["requests"][4]["started_at"]
        queries = [*QUERIES, {"from": first, "to": last, "order": "asc"}]
        answers = [_server_answer(session, query) for query in queries]
    finally:
        session.delete()
    path = write_trace(tmp_path_factory.mktemp("trace") / "test_weather_stream.html", export)
    return Trace(path, export, session.id, queries, answers)


def _server_answer(session: Any, query: dict[str, str]) -> dict[str, Any]:
    try:
        _, headers, entries = session.server.request(
            "GET", f"/admin-api/requests?{urlencode(query)}", session_id=session.id
        )
    except ServerError as error:
        return {"status": error.status, "code": error.code, "paths": sorted(d["path"] for d in error.details)}
    total = next(value for name, value in headers.items() if name.lower() == "x-total-count")
    return {"ids": [entry["request_id"] for entry in entries], "total": total}


@pytest.fixture
def offline(chromium: Any) -> Iterator[tuple[Any, list[str], list[str]]]:
    """A page that can reach nothing but file:// (``offline_page``)."""
    with offline_page(chromium) as opened:
        yield opened


def _entry(trace: Trace, **fields: Any) -> dict[str, Any]:
    (found,) = [e for e in trace.export["requests"] if all(e.get(k) == v for k, v in fields.items())]
    return found


def test_the_export_holds_the_whole_session(trace: Trace) -> None:
    export = trace.export
    assert export["format"] == "llmts-trace/1" and export["session"]["id"] == trace.session_id
    sequences = [entry["sequence"] for entry in export["requests"]]
    assert sequences == list(range(1, 8)) and export["total_observed"] == 7 and export["evicted_count"] == 0
    assert export["configured"] is True and [q["scenario"] for q in export["queues"]] == [
        "weather",
        "cut",
        "limited",
    ]
    assert [c["conversation_id"] for c in export["conversations"]] == ["c1"]
    assert export["verification"]["passed"] is False and export["expectation"] == EXPECTATION
    assert read_trace(trace.path) == export


def test_a_trace_opens_offline_on_the_journal_under_the_failed_test_banner(
    trace: Trace, offline: tuple[Any, list[str], list[str]], tmp_path: Path
) -> None:
    page, attempted, problems = offline
    expect = configured_expect()
    page.goto(trace.url)
    banner = page.locator("#trace-banner")
    expect(banner).to_have_attribute("data-outcome", "failed")
    expect(banner).to_have_class("trace-banner bad")
    expect(page.locator("#trace-test")).to_have_text(NODE_ID)  # the node id's markup shown as text
    expect(page.locator("#trace-outcome")).to_have_text("failed")
    expect(page.locator("#trace-facts")).to_contain_text("1.25 s · failed in call")
    expect(page.locator("#trace-about")).to_contain_text("7 journal entries of 7 requests observed")
    expect(page.locator("#trace-longrepr pre")).to_be_hidden()  # folded until asked for
    page.locator("#trace-longrepr summary").click()
    expect(page.locator("#trace-longrepr pre")).to_have_text(LONGREPR)
    assert page.title() == f"failed: {NODE_ID} · llmts trace"

    rows = page.locator("#journal-body tr")
    expect(rows).to_have_count(7)
    expect(page.locator("#journal-counts")).to_contain_text("7 matching; 7 observed")
    expect(page.locator("#journal-body tr[data-sequence='3']")).to_contain_text("early_end")
    expect(page.locator("#journal-body tr[data-sequence='4']")).to_contain_text("429")
    expect(page.locator("#logout")).to_be_hidden()
    page.screenshot(path=str(tmp_path / "trace-journal.png"), full_page=True)

    # The journal's filters run in the page, with the control API's semantics.
    page.fill("#filter-model", "gpt-tools")
    page.locator("#journal-filters button[type=submit]").click()
    expect(rows).to_have_count(2)
    expect(page.locator("#journal-counts")).to_contain_text("2 matching; 7 observed")
    page.goto(f"{trace.url}#/sessions/{trace.session_id}/journal?status=429")
    expect(rows).to_have_count(1)

    assert page.evaluate("window.__xss") is None  # request content never ran
    assert set(attempted) == {trace.url}, attempted
    assert problems == []


def test_a_traced_request_shows_its_previews_timeline_and_tool_calls(
    trace: Trace, offline: tuple[Any, list[str], list[str]], tmp_path: Path
) -> None:
    page, attempted, problems = offline
    expect = configured_expect()
    base = f"{trace.url}#/sessions/{trace.session_id}/requests/"
    tool_call = _entry(trace, model="gpt-tools", sequence=1)
    page.goto(base + tool_call["request_id"])
    expect(page.locator("#request-preview pre")).to_contain_text(
        '"content": "Weather in Paris? </script><!--'
    )
    expect(page.locator("#response-tool-calls")).to_contain_text("get_weather")
    expect(page.locator("#response-tool-calls")).to_contain_text('"city": "Paris"')

    result = _entry(trace, model="gpt-tools", sequence=2)
    page.goto(base + result["request_id"])
    expect(page.locator("#tool-results")).to_contain_text('"sky": "clear"')
    expect(page.locator("#request-tool-calls")).to_contain_text("call_1")
    expect(page.locator("#response-preview")).to_contain_text("Sunny in Paris.")

    cut = _entry(trace, model="gpt-stream")
    page.goto(base + cut["request_id"])
    timeline = page.locator("#timeline")
    expect(timeline).to_contain_text("early_clean_end after 1 content frame(s)")
    expect(timeline).to_contain_text("no terminal marker")
    expect(timeline).to_contain_text("early_end")
    expect(page.locator("#response-preview")).to_contain_text('"content": "First "')
    page.screenshot(path=str(tmp_path / "trace-stream.png"), full_page=True)

    limited = _entry(trace, model="gpt-busy", status=429)
    page.goto(base + limited["request_id"])
    expect(page.locator("#request-detail h1 .badge")).to_have_text("429")
    expect(page.locator("#response-preview")).to_contain_text("rate_limit_exceeded")
    expect(page.locator("#retry-group li")).to_have_count(2)  # the retry, read from the export
    page.locator("#retry-group li").nth(1).locator("a").click()
    expect(page.locator("#request-detail h1 .badge")).to_have_text("200")

    assert set(attempted) == {trace.url}, attempted
    assert problems == []


def test_traced_graphs_configuration_sessions_and_recorded_verification(
    trace: Trace, offline: tuple[Any, list[str], list[str]], tmp_path: Path
) -> None:
    page, attempted, problems = offline
    expect = configured_expect()
    session = f"{trace.url}#/sessions/{trace.session_id}"
    page.goto(f"{session}/graphs")
    card = page.locator("section.graph-card[data-graph='approval']")
    expect(card.locator("g.node[data-step='ask']")).to_have_attribute("data-state", "executed")
    expect(card.locator("g.node[data-step='approve']")).to_have_attribute("data-state", "current")
    expect(card.locator("g.node[data-step='cancel']")).to_have_attribute("data-state", "unvisited")

    page.goto(f"{session}/verify")
    recorded = page.locator("#verify-recorded")
    expect(recorded.locator("#verify-verdict")).to_have_text("FAILED")
    failures = recorded.locator("#verify-failures")
    expect(failures).to_contain_text("terminal_marker")
    expect(failures).to_contain_text(_entry(trace, model="gpt-stream")["request_id"])
    expect(page.locator("#run-verify")).to_be_disabled()
    expect(page.locator("#verify-disabled")).to_contain_text("read-only")
    page.screenshot(path=str(tmp_path / "trace-verify.png"), full_page=True)

    page.goto(f"{session}/config")
    expect(page.locator(".queue[data-scenario='weather']")).to_contain_text("2 of 2 consumed")
    expect(page.locator(".queue[data-scenario='limited']")).to_contain_text("2 of 2 consumed")
    expect(page.locator("#configuration-json")).to_contain_text('"early_clean_end"')

    page.goto(f"{trace.url}#/")
    expect(page.locator(f"tr[data-session='{trace.session_id}']")).to_have_count(1)
    expect(page.locator("#sessions-body tr")).to_have_count(1)

    assert set(attempted) == {trace.url}, attempted
    assert problems == []


def test_a_trace_of_a_session_without_a_test_or_expectations(
    trace: Trace, offline: tuple[Any, list[str], list[str]], tmp_path: Path
) -> None:
    page, attempted, problems = offline
    expect = configured_expect()
    bare = write_trace(
        tmp_path / "bare.html", {**trace.export, "test": None, "verification": None, "expectation": None}
    )
    page.goto(f"{bare.as_uri()}#/sessions/{trace.session_id}/verify")
    expect(page.locator("#trace-outcome")).to_have_text("unknown")
    expect(page.locator("#trace-test")).to_have_text(trace.session_id)
    expect(page.locator("#trace-longrepr")).to_have_count(0)
    expect(page.locator("#verify-none")).to_have_text(
        "This test declared no expectations (no llmts_expect, no llmts_verify marker)."
    )
    expect(page.locator("#run-verify")).to_be_disabled()
    assert set(attempted) == {bare.as_uri()}, attempted
    assert problems == []


def test_with_a_control_key_log_out_shows_only_once_logged_in(
    browser_page: Any, dashboard_server: LlmTestServer
) -> None:
    expect = configured_expect()
    page = browser_page
    page.goto(dashboard_server.url + "/dashboard")
    expect(page.locator("#login-form")).to_be_visible()
    expect(page.locator("#logout")).to_be_hidden()
    login(page, dashboard_server)
    expect(page.locator("#logout")).to_be_visible()
    page.reload()
    expect(page.locator("#logout")).to_be_visible()
    page.click("#logout")
    expect(page.locator("#logout")).to_be_hidden()


# A page with the trace's data and the dashboard's own api.js bundled behind a probe (no CSP: the probe
# hands the data source to the test through window).
PROBE = 'import { api, trace } from "./api.js";\nwindow.__probe = { api, trace };\n'
ASK = """async ([session, queries]) => {
  const answers = [];
  for (const query of queries) {
    try {
      const { data, headers } = await window.__probe.api.requests(session, query);
      answers.push({ ids: data.map((entry) => entry.request_id), total: headers.get("X-Total-Count") });
    } catch (error) {
      const { code, details } = error.body.error;
      answers.push({ status: error.status, code, paths: details.map((d) => d.path).sort() });
    }
  }
  return answers;
}"""
REFUSED = """async ([name, ...args]) => {
  try {
    await window.__probe.api[name](...args);
    return null;
  } catch (error) {
    return { status: error.status, code: error.body.error.code, message: error.message };
  }
}"""


def _probe_page(chromium: Any, export: dict[str, Any]) -> tuple[Any, Any]:
    static = Path(__file__).resolve().parents[2] / "llmts" / "dashboard" / "static"

    def read(name: str) -> str:
        return PROBE if name == "probe.js" else (static / name).read_text(encoding="utf-8")

    data = json.dumps(export).replace("<", "\\u003c")
    context = chromium.new_context()
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.set_content(f'<script type="application/json" id="llmts-trace-data">{data}</script>')
    page.add_script_tag(content=bundle_modules(read, "probe.js"), type="module")
    page.wait_for_function("window.__probe !== undefined")
    return context, page


def test_the_trace_answers_journal_queries_as_the_server_did(chromium: Any, trace: Trace) -> None:
    context, page = _probe_page(chromium, trace.export)
    try:
        offline_answers = page.evaluate(ASK, [trace.session_id, trace.queries])
    finally:
        context.close()
    for query, online, offline in zip(trace.queries, trace.server_answers, offline_answers, strict=True):
        assert offline == online, query
    assert {"ids": [], "total": "0"} in trace.server_answers  # some queries match nothing...
    assert any(answer.get("status") == 400 for answer in trace.server_answers)  # ...some are refused


def test_a_trace_is_read_only_and_answers_only_its_own_session(chromium: Any, trace: Trace) -> None:
    context, page = _probe_page(chromium, trace.export)
    try:
        for call in (
            ["reset", trace.session_id],
            ["createSession"],
            ["deleteSession", trace.session_id],
            ["login", "k"],
        ):
            refused = page.evaluate(REFUSED, call)
            assert refused["status"] == 405 and refused["code"] == "trace_read_only", call
            assert "this is a trace file, read-only" in refused["message"]
        other = {"requests": [{"name": "anything", "minimum_count": 0}]}
        refused = page.evaluate(REFUSED, ["verify", trace.session_id, other])
        assert refused["code"] == "trace_read_only" and "Running a new verification" in refused["message"]
        recorded = page.evaluate(
            "async ([s, b]) => (await window.__probe.api.verify(s, b)).data", [trace.session_id, EXPECTATION]
        )
        assert recorded == trace.export["verification"]
        unknown = page.evaluate(REFUSED, ["requests", "ses_" + "f" * 32, {}])
        assert unknown["code"] == SessionNotFound.code  # the server's own code for an unknown session
        assert page.evaluate("async () => (await window.__probe.api.loginState()).data") == {
            "key_required": False,
            "logged_in": False,
        }
        listed = "async (q) => (await window.__probe.api.sessions(q)).data.map((s) => s.id)"
        assert page.evaluate(listed, {}) == [trace.session_id]
        assert page.evaluate(listed, {"test_outcome": "passed"}) == []
        assert page.evaluate("() => window.__probe.trace.format") == "llmts-trace/1"
    finally:
        context.close()
