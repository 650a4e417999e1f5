"""The usage line above a session's journal (views/usage.js) in a real Chromium: live, it follows the
requests and shows the budget running out; in a trace file it answers from the export's ``usage``, and an
export without one (written before it existed) is summed from its entries in the page."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import openai
import pytest

from llmts import LlmTestServer, SessionClient
from llmts.client.trace_export import collect_trace_export
from llmts.dashboard.trace import write_trace
from tests.dashboard.browser import configured_expect, login, open_view

HI: Any = [{"role": "user", "content": "hi"}]
# 1,000 input and 100 output tokens of gpt-4o: $0.0035 at its list price.
USAGE = {"input_tokens": 1000, "output_tokens": 100}
CONFIG = {
    "scenarios": [
        {"model": "gpt-4o", "responses": [{"text": "one", "usage": USAGE}, {"text": "two", "usage": USAGE}]},
    ],
    "budget": {"max_cost_usd": 0.005},
}


def test_the_journal_shows_usage_cost_and_the_budget_live_and_in_trace_files(
    page: Any, dashboard_server: LlmTestServer, session: SessionClient, tmp_path: Path
) -> None:
    expect = configured_expect()
    session.configure(CONFIG)
    login(page, dashboard_server)
    open_view(page, dashboard_server.url, f"sessions/{session.id}/journal")
    totals = page.locator("#usage-summary .usage-totals")
    expect(totals).to_have_text("Usage: 0 tokens · $0.00")
    expect(page.locator("#usage-summary .usage-budget")).to_have_text(" · budget $0.00500: not reached")

    client = session.openai_client(max_retries=0)
    client.chat.completions.create(model="gpt-4o", messages=HI)
    expect(totals).to_have_text("Usage: 1,100 tokens · $0.00350")
    client.chat.completions.create(model="gpt-4o", messages=HI)
    expect(totals).to_have_text("Usage: 2,200 tokens · $0.00700")
    with pytest.raises(openai.RateLimitError):
        client.chat.completions.create(model="gpt-4o", messages=HI)
    budget = page.locator("#usage-summary .usage-budget.exhausted")
    expect(budget).to_contain_text("exhausted (0.007000 USD spent of max_cost_usd 0.005); 1 refused")
    expect(totals).to_have_attribute(
        "title", "openai gpt-4o: 2 req · 2,000 in (0 cached, 0 written) · 200 out · $0.00700"
    )

    # A trace of the session answers from the export's usage, the budget included.
    export = collect_trace_export(session)
    assert export["usage"] == session.usage()
    offline = page.context.browser.new_page()
    offline.goto(write_trace(tmp_path / "usage.html", export).as_uri())
    expect(offline.locator("#usage-summary .usage-totals")).to_have_text("Usage: 2,200 tokens · $0.00700")
    expect(offline.locator("#usage-summary .usage-budget")).to_contain_text("1 refused")
    # An export without usage: summed from its entries in the page, the budget unknown.
    older = {key: value for key, value in export.items() if key != "usage"}
    offline.goto(write_trace(tmp_path / "older.html", older).as_uri())
    expect(offline.locator("#usage-summary .usage-totals")).to_have_text("Usage: 2,200 tokens · $0.00700")
    expect(offline.locator("#usage-summary .usage-budget")).to_have_count(0)
    offline.close()
