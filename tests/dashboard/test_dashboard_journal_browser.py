"""The dashboard's journal in a real Chromium (Debian's package, driven by Playwright) against a real
gunicorn server with a control key (docs/dashboard.md): SDK requests arriving live, filters, a reset, a
request still in progress, paging at the retention limit, MCP and A2A calls on the same timeline, the
request detail (previews, tool calls, retry group, delivery timeline), and request content that tries
to run script, shown literally.

Set ``LLMTS_DASHBOARD_SCREENSHOTS=docs/images`` to refresh the screenshots the docs show.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
from typing import Any
from urllib.parse import urlsplit

from llmts import LlmTestServer, SessionClient
from tests.dashboard.browser import configured_expect as _expect
from tests.dashboard.browser import login as _login
from tests.dashboard.browser import open_view
from tests.dashboard.browser import shot as _shot
from tests.dashboard.sample_configs import WEATHER_TOOL

XSS = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>'


def test_sdk_requests_arrive_live_and_filters_apply(
    page: Any, dashboard_server: LlmTestServer, session: SessionClient
) -> None:
    expect = _expect()
    session.configure(
        {"scenarios": [{"terminal_policy": "repeat_last_response", "responses": [{"text": "Hi."}]}]}
    )
    _login(page, dashboard_server)
    open_view(page, dashboard_server.url, f"sessions/{session.id}/journal")
    expect(page.locator("#journal-counts")).to_contain_text("0 matching")
    expect(page.locator("#live-state")).to_have_text("live")

    openai = session.openai_client(max_retries=0)
    openai.chat.completions.create(model="gpt-4.1-mini", messages=[{"role": "user", "content": "one"}])
    first = page.locator("#journal-body tr[data-sequence='1']")
    expect(first).to_contain_text("openai")
    expect(first).to_contain_text("200")

    with session.anthropic_client(max_retries=0).messages.stream(
        model="claude-test-1", max_tokens=64, messages=[{"role": "user", "content": "two"}]
    ) as stream:
        assert stream.get_final_text() == "Hi."
    second = page.locator("#journal-body tr[data-sequence='2']")
    expect(second).to_contain_text("anthropic")
    expect(second).to_contain_text("stream")
    expect(page.locator("#journal-body tr")).to_have_count(2)
    _shot(page, "journal")

    page.fill("#filter-provider", "anthropic")
    page.select_option("#filter-streaming", "true")
    page.click("#journal-filters button[type=submit]")
    expect(page.locator("#journal-body tr")).to_have_count(1)
    expect(page.locator("#journal-body tr").first).to_have_attribute("data-sequence", "2")
    # Live with the filters: a matching request arrives, another provider's does not.
    openai.chat.completions.create(model="gpt-4.1-mini", messages=[{"role": "user", "content": "three"}])
    with session.anthropic_client(max_retries=0).messages.stream(
        model="claude-test-1", max_tokens=64, messages=[{"role": "user", "content": "four"}]
    ) as stream:
        stream.get_final_text()
    expect(page.locator("#journal-body tr[data-sequence='4']")).to_be_visible()
    expect(page.locator("#journal-body tr")).to_have_count(2)
    expect(page.locator("#journal-body tr[data-sequence='3']")).to_have_count(0)


def test_the_live_journal_follows_a_reset(
    page: Any, dashboard_server: LlmTestServer, session: SessionClient
) -> None:
    expect = _expect()
    client = session.openai_client(max_retries=0)

    def ask(text: str) -> None:
        client.chat.completions.create(model="gpt-4.1-mini", messages=[{"role": "user", "content": text}])

    for text in ("old 1", "old 2", "old 3"):
        ask(text)
    old_ids = {entry["request_id"] for entry in session.requests()}
    _login(page, dashboard_server)
    open_view(page, dashboard_server.url, f"sessions/{session.id}/journal")
    expect(page.locator("#journal-body tr")).to_have_count(3)
    session.reset()
    for text in ("new 1", "new 2", "new 3", "new 4"):  # more than before: the sequence passes the old cursor
        ask(text)
    new_ids = [entry["request_id"] for entry in session.requests()]
    expect(page.locator("#journal-body tr")).to_have_count(4)
    expect(page.locator("#journal-body tr").first).to_have_attribute("data-request-id", new_ids[0])
    shown = {row.get_attribute("data-request-id") for row in page.locator("#journal-body tr").all()}
    assert shown == set(new_ids) and not shown & old_ids


def test_a_request_in_progress_that_matches_the_filter_only_once_done_still_arrives(
    page: Any, dashboard_server: LlmTestServer, session: SessionClient
) -> None:
    expect = _expect()
    session.configure({"scenarios": [{"responses": [{"text": "slow", "delay_ms": 4000}]}]})
    _login(page, dashboard_server)
    slow = threading.Thread(
        target=lambda: session.openai_client(max_retries=0).chat.completions.create(
            model="gpt-4.1-mini", messages=[{"role": "user", "content": "wait"}]
        )
    )
    slow.start()
    try:
        deadline = time.monotonic() + 10
        while not session.requests(completed=False) and time.monotonic() < deadline:
            time.sleep(0.05)
        # In progress, its status is unset: status=200 does not match it yet.
        open_view(page, dashboard_server.url, f"sessions/{session.id}/journal?status=200")
        expect(page.locator("#journal-counts")).to_contain_text("0 matching; 1 observed")
        assert session.requests(completed=False)  # the page loaded while it was in flight
    finally:
        slow.join()
    expect(page.locator("#journal-body tr[data-sequence='1']")).to_contain_text("200")


def test_request_detail_shows_previews_tool_calls_and_the_delivery_timeline(
    page: Any, dashboard_server: LlmTestServer, session: SessionClient
) -> None:
    expect = _expect()
    session.configure(
        {
            "scenarios": [
                {
                    "responses": [
                        {
                            "tool_calls": [
                                {"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}
                            ]
                        },
                        {
                            "text": "First second.",
                            "chunks": ["First ", "second."],
                            "stream_delivery": {"mode": "early_clean_end", "after_content_frames": 1},
                        },
                        {"text": "Sunny."},
                    ]
                }
            ]
        }
    )
    openai = session.openai_client(max_retries=0)
    question = [{"role": "user", "content": "Weather in Paris?"}]
    asked = openai.chat.completions.create(
        model="gpt-4.1-mini",
        messages=question,
        tools=[WEATHER_TOOL],
        extra_headers={"X-Llm-Test-Server-Retry-Group": "g1"},
    )
    stream = openai.chat.completions.create(
        model="gpt-4.1-mini", messages=[{"role": "user", "content": "stream"}], stream=True
    )
    assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == "First "
    history = [
        *question,
        asked.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": "call_1", "content": '{"sky": "clear"}'},
    ]
    openai.chat.completions.create(
        model="gpt-4.1-mini",
        messages=history,
        tools=[WEATHER_TOOL],
        extra_headers={"X-Llm-Test-Server-Retry-Group": "g1"},
    )

    _login(page, dashboard_server)
    open_view(page, dashboard_server.url, f"sessions/{session.id}/journal")
    page.locator("#journal-body tr[data-sequence='1']").click()
    preview = page.locator("#request-preview pre")
    expect(preview).to_contain_text('"content": "Weather in Paris?"')
    assert '\n      "content": "Weather in Paris?"' in preview.inner_text()  # pretty-printed, indented
    calls = page.locator("#response-tool-calls")
    expect(calls).to_contain_text("call_1")
    expect(calls).to_contain_text("get_weather")
    expect(calls).to_contain_text('"city": "Paris"')
    expect(page.locator("#timeline")).to_contain_text("transport outcome")
    expect(page.locator("#retry-group li")).to_have_count(2)

    page.locator("#retry-group li").nth(1).locator("a").click()
    expect(page.locator("#tool-results")).to_contain_text('"sky": "clear"')
    expect(page.locator("#request-tool-calls")).to_contain_text("get_weather")

    open_view(page, dashboard_server.url, f"sessions/{session.id}/journal")
    page.locator("#journal-body tr[data-sequence='2'] a").click()
    timeline = page.locator("#timeline")
    expect(timeline).to_contain_text("delivery plan")
    expect(timeline).to_contain_text("early_clean_end after 1 content frame(s)")
    expect(timeline).to_contain_text("plan applied")
    expect(timeline).to_contain_text("no terminal marker")
    expect(timeline).to_contain_text("early_end")
    expect(page.locator("#timeline li", has_text="content frames emitted")).to_contain_text("1")
    expect(page.locator("#response-preview ol.frames li").first).to_contain_text('"role": "assistant"')
    _shot(page, "request")


def test_request_content_that_tries_to_run_script_is_shown_literally(
    page: Any, dashboard_server: LlmTestServer, session: SessionClient
) -> None:
    expect = _expect()
    model = '<svg onload="window.__xss=3">'
    conversation = '<b onmouseover="window.__xss=4">'
    client = session.openai_client(
        max_retries=0, default_headers={"X-Llm-Test-Server-Conversation": conversation}
    )
    answer = client.chat.completions.create(model=model, messages=[{"role": "user", "content": XSS}])
    assert answer.choices[0].message.content == XSS  # the unconfigured session echoes it back

    _login(page, dashboard_server)
    open_view(page, dashboard_server.url, f"sessions/{session.id}/journal")
    row = page.locator("#journal-body tr[data-sequence='1']")
    expect(row).to_contain_text(model)
    row.click()
    expect(page.locator("#request-preview pre")).to_contain_text('<img src=x onerror=\\"window.__xss=1\\">')
    expect(page.locator("#response-preview pre")).to_contain_text("<script>window.__xss=2</script>")
    expect(page.locator("#request-detail dl.facts")).to_contain_text(conversation)
    expect(page.locator("#request-detail dl.facts")).to_contain_text(model)
    row_count = page.locator(
        "#request-detail img, #request-detail script, #request-detail svg, #request-detail b"
    )
    expect(row_count).to_have_count(0)
    page.mouse.move(200, 300)
    assert page.evaluate("window.__xss") is None
    # The same text in the journal's filter inputs is a value, not markup.
    open_view(page, dashboard_server.url, f"sessions/{session.id}/journal?model={XSS}")
    expect(page.locator("#filter-model")).to_have_value(XSS)
    expect(page.locator("#journal-body tr")).to_have_count(0)
    assert page.evaluate("window.__xss") is None


def _post_many(provider_base: str, count: int) -> None:
    """``count`` chat requests over one keep-alive connection (faster than an SDK for filling a journal)."""
    parts = urlsplit(provider_base)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    body = json.dumps({"model": "gpt-4.1-mini", "messages": [{"role": "user", "content": "fill"}]})
    try:
        for _ in range(count):
            connection.request(
                "POST",
                parts.path + "/openai/v1/chat/completions",
                body=body,
                headers={"Content-Type": "application/json", "Authorization": "Bearer k"},
            )
            response = connection.getresponse()
            response.read()
            assert response.status == 200
    finally:
        connection.close()


def test_journal_at_its_retention_limit_is_paged(
    page: Any, dashboard_server: LlmTestServer, session: SessionClient
) -> None:
    expect = _expect()
    session.configure(
        {
            "journal": {"max_entries": 300},
            "scenarios": [{"terminal_policy": "repeat_last_response", "responses": [{"text": "ok"}]}],
        }
    )
    _post_many(session.provider_base, 330)
    _login(page, dashboard_server)
    open_view(page, dashboard_server.url, f"sessions/{session.id}/journal")
    expect(page.locator("#journal-counts")).to_contain_text(
        "300 matching; 330 observed since the last reset, 30 evicted"
    )
    expect(page.locator("#journal-body tr")).to_have_count(100)
    expect(page.locator("#journal-body tr").first).to_have_attribute("data-sequence", "330")
    expect(page.locator(".pager")).to_contain_text("1\u2013100 of 300")
    page.click("#older")
    expect(page.locator("#live-state")).to_contain_text("paused")
    expect(page.locator("#journal-body tr").first).to_have_attribute("data-sequence", "230")
    expect(page.locator("#journal-body tr")).to_have_count(100)
    expect(page.locator(".pager")).to_contain_text("101\u2013200 of 300")
    page.click("#newer")
    expect(page.locator("#live-state")).to_have_text("live")
    _post_many(session.provider_base, 5)
    expect(page.locator("#journal-body tr").first).to_have_attribute("data-sequence", "335")
    expect(page.locator("#journal-body tr")).to_have_count(100)  # the page stays one page long


def test_mcp_and_a2a_calls_share_the_timeline_with_the_model_calls(
    page: Any, dashboard_server: LlmTestServer, session: SessionClient
) -> None:
    """One timeline for the agent's whole loop (docs/dashboard.md): a model call, a tool call on the
    session's MCP server (the official mcp client) and a message to its A2A agent, in order, each row naming
    the peer it addressed, filterable by peer, and the tool call's page showing its arguments."""
    import asyncio
    import urllib.request

    expect = _expect()
    forecast = {"name": "get_forecast", "results": [{"text": "Rain, 14 C"}]}
    session.configure(
        {
            "scenarios": [{"responses": [{"text": "Let me check."}]}],
            "mcp_servers": [{"name": "weather", "tools": [forecast]}],
            "a2a_agents": [{"name": "planner", "responses": [{"text": "Trip planned."}]}],
        }
    )
    session.openai_client(max_retries=0).chat.completions.create(
        model="gpt-4.1-mini", messages=[{"role": "user", "content": "Umbrella in Paris?"}]
    )

    async def call_tool() -> Any:
        async with session.mcp_session("weather") as mcp:
            return await mcp.call_tool("get_forecast", {"city": "Paris"})

    # Playwright's sync API runs an event loop in this thread: the MCP client gets a thread of its own.
    results: list[Any] = []
    worker = threading.Thread(target=lambda: results.append(asyncio.run(call_tool())))
    worker.start()
    worker.join(30)
    assert results[0].content[0].text == "Rain, 14 C"
    message = {
        "role": "user",
        "parts": [{"kind": "text", "text": "Plan it"}],
        "messageId": "m1",
        "kind": "message",
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": message}}
    request = urllib.request.Request(
        session.a2a_base_url("planner"),
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert json.loads(answer.read())["result"]["parts"][0]["text"] == "Trip planned."

    _login(page, dashboard_server)
    open_view(page, dashboard_server.url, f"sessions/{session.id}/journal")
    rows = page.locator("#journal-body tr")
    operations = [entry["operation"] for entry in session.requests(order="asc")]
    assert operations[0] == "chat.completions" and operations[-1] == "message/send", operations
    expect(rows).to_have_count(len(operations))
    call = page.locator("#journal-body tr", has_text="tools/call")
    expect(call).to_contain_text("mcp")
    expect(call).to_contain_text("weather \u203a get_forecast")
    expect(page.locator("#journal-body tr", has_text="message/send")).to_contain_text("planner")
    _shot(page, "journal-peers")

    page.fill("#filter-tool_name", "get_forecast")
    page.click("#journal-filters button[type=submit]")
    expect(rows).to_have_count(1)
    rows.first.click()
    facts = page.locator("dl.facts")
    expect(facts).to_contain_text("weather")
    expect(facts).to_contain_text('{"city":"Paris"}')
