"""The dashboard's sessions in a real Chromium (Debian's package, driven by Playwright) against a real
gunicorn server with a control key (docs/dashboard.md): the sessions list (a new session appears live,
reset and delete ask first) and a session's conversation graphs, verification and configuration views.

Set ``LLMTS_DASHBOARD_SCREENSHOTS=docs/images`` to refresh the screenshots the docs show.
"""

from __future__ import annotations

import json
from typing import Any

from llmts import LlmTestServer, SessionClient
from tests.dashboard.browser import configured_expect as _expect
from tests.dashboard.browser import login as _login
from tests.dashboard.browser import open_view
from tests.dashboard.browser import shot as _shot
from tests.dashboard.sample_configs import APPROVAL_GRAPH


def test_a_new_session_appears_without_reloading(page: Any, dashboard_server: LlmTestServer) -> None:
    expect = _expect()
    _login(page, dashboard_server)
    created = dashboard_server.create_session()
    try:
        row = page.locator(f"tr[data-session='{created.id}']")
        expect(row).to_be_visible()
        expect(row.locator("td").nth(2)).to_have_text("no")
        created.configure({"scenarios": [{"responses": [{"text": "a"}, {"text": "b"}]}]})
        created.openai_client(max_retries=0).chat.completions.create(
            model="gpt-4.1-mini", messages=[{"role": "user", "content": "hi"}]
        )
        expect(row.locator("td").nth(2)).to_have_text("yes")
        expect(row.locator("td").nth(5)).to_have_text("1")  # requests
    finally:
        created.delete()
    expect(page.locator(f"tr[data-session='{created.id}']")).to_have_count(0)


def test_reset_and_delete_ask_for_confirmation(page: Any, dashboard_server: LlmTestServer) -> None:
    expect = _expect()
    doomed = dashboard_server.create_session()
    doomed.openai_client(max_retries=0).chat.completions.create(
        model="gpt-4.1-mini", messages=[{"role": "user", "content": "hi"}]
    )
    _login(page, dashboard_server)
    row = page.locator(f"tr[data-session='{doomed.id}']")
    row.locator("button[data-action=reset]").click()
    expect(row.locator(".confirm")).to_have_text(f"Reset {doomed.id}?")
    assert len(doomed.requests()) == 1  # asking changed nothing
    row.locator("button[data-confirm=reset]").click()
    expect(row.locator("td").nth(5)).to_have_text("0")
    assert doomed.requests() == []

    row.locator("button[data-action=delete]").click()
    row.get_by_role("button", name="Cancel").click()
    expect(row.locator("button[data-action=delete]")).to_be_visible()
    assert any(s["id"] == doomed.id for s in dashboard_server.sessions())
    row.locator("button[data-action=delete]").click()
    row.locator("button[data-confirm=delete]").click()
    expect(page.locator(f"tr[data-session='{doomed.id}']")).to_have_count(0)
    assert all(s["id"] != doomed.id for s in dashboard_server.sessions())


def test_graph_shows_executed_current_and_unvisited_steps(
    page: Any, dashboard_server: LlmTestServer, session: SessionClient
) -> None:
    expect = _expect()
    session.configure({"conversations": [APPROVAL_GRAPH]})
    done = session.for_conversation("c1").openai_client(max_retries=0)
    history = [{"role": "user", "content": "Start"}]
    asked = done.chat.completions.create(model="gpt-4.1-mini", messages=history)
    history += [
        {"role": "assistant", "content": asked.choices[0].message.content},
        {"role": "user", "content": "Approve"},
    ]
    assert (
        done.chat.completions.create(model="gpt-4.1-mini", messages=history).choices[0].message.content
        == "Approved"
    )
    waiting = session.for_conversation("c2").openai_client(max_retries=0)
    waiting.chat.completions.create(model="gpt-4.1-mini", messages=[{"role": "user", "content": "Start"}])

    _login(page, dashboard_server)
    open_view(page, dashboard_server.url, f"sessions/{session.id}/graphs")
    card = page.locator("section.graph-card[data-graph='approval']")
    card.locator("select").select_option("c1")
    expect(card.locator("g.node[data-step='ask']")).to_have_attribute("data-state", "executed")
    expect(card.locator("g.node[data-step='approve']")).to_have_attribute("data-state", "current")
    expect(card.locator("g.node[data-step='cancel']")).to_have_attribute("data-state", "unvisited")
    expect(card.locator("path.edge.taken")).to_have_count(1)
    # The request a step answered links back here from its detail.
    (approved,) = session.requests(step="approve")
    open_view(page, dashboard_server.url, f"sessions/{session.id}/requests/{approved['request_id']}")
    page.locator("#request-detail dl.facts a", has_text="c1 / approve / 2").click()
    card = page.locator("section.graph-card[data-graph='approval']")

    card.locator("select").select_option("c2")
    expect(card.locator("g.node[data-step='ask']")).to_have_attribute("data-state", "current")
    expect(card.locator("g.node[data-step='approve']")).to_have_attribute("data-state", "next")
    expect(card.locator("g.node[data-step='cancel']")).to_have_attribute("data-state", "next")
    _shot(page, "graphs")


def test_verification_runs_a_pasted_or_picked_expectation(
    page: Any, dashboard_server: LlmTestServer, session: SessionClient
) -> None:
    expect = _expect()
    session.openai_client(max_retries=0).chat.completions.create(
        model="gpt-4.1-mini", messages=[{"role": "user", "content": "hi"}]
    )
    (entry,) = session.requests()
    _login(page, dashboard_server)
    open_view(page, dashboard_server.url, f"sessions/{session.id}/verify")
    expectation = {
        "requests": [
            {
                "name": "no chat at all",
                "query": {"provider": "openai"},
                "maximum_count": 0,
                "minimum_count": 0,
            }
        ]
    }
    page.fill("#expectation", json.dumps(expectation, indent=2))
    page.click("#run-verify")
    expect(page.locator("#verify-verdict")).to_have_text("FAILED")
    failures = page.locator("#verify-failures")
    expect(failures).to_contain_text("no chat at all")
    expect(failures.locator(f"a:has-text('{entry['request_id']}')")).to_be_visible()
    _shot(page, "verify")

    page.select_option("#preset", label="At least one request")
    page.click("#run-verify")
    expect(page.locator("#verify-verdict")).to_have_text("PASSED")
    expect(page.locator("#verify-evidence")).to_have_text("Evidence complete.")
    expect(page.locator("#verify-matched")).to_contain_text(entry["request_id"])

    paged = {"requests": [{"name": "past the page", "query": {"offset": 1}, "minimum_count": 0}]}
    page.fill("#expectation", json.dumps(paged))
    page.click("#run-verify")
    expect(page.locator("#verify-evidence")).to_have_text(  # the server's reason, not always eviction
        "Evidence incomplete: a query's page left matches out, so a pass could not be trusted."
    )

    page.fill("#expectation", "{not json")
    page.click("#run-verify")
    expect(page.locator("#verify-error")).to_contain_text("Not JSON")
    page.fill("#expectation", json.dumps({"requests": [{"name": "x", "minimum_count": -1}]}))
    page.click("#run-verify")
    expect(page.locator("#verify-error")).to_contain_text("minimum_count")


def test_configuration_shows_scenarios_and_how_far_each_queue_advanced(
    page: Any, dashboard_server: LlmTestServer, session: SessionClient
) -> None:
    expect = _expect()
    session.configure(
        {
            "scenarios": [
                {
                    "id": "chat",
                    "provider": "openai",
                    "responses": [{"text": "1"}, {"text": "2"}, {"text": "3"}],
                },
                {
                    "id": "other",
                    "provider": "anthropic",
                    "terminal_policy": "restart",
                    "responses": [{"text": "a"}],
                },
            ],
            "conversations": [APPROVAL_GRAPH],
        }
    )
    session.openai_client(max_retries=0).chat.completions.create(
        model="gpt-4.1-mini", messages=[{"role": "user", "content": "hi"}]
    )
    _login(page, dashboard_server)
    open_view(page, dashboard_server.url, f"sessions/{session.id}/config")
    chat = page.locator(".queue[data-scenario='chat']")
    expect(chat).to_contain_text("1 of 3 consumed; next: response 1 (reject)")
    expect(chat.locator("progress")).to_have_attribute("value", "1")
    expect(page.locator(".queue[data-scenario='other']")).to_contain_text(
        "0 of 1 consumed; next: response 0 (restart)"
    )
    expect(page.locator("section.scenario-card[data-scenario='chat'] li.next")).to_contain_text("2")
    _shot(page, "config")
    for _ in range(2):
        session.openai_client(max_retries=0).chat.completions.create(
            model="gpt-4.1-mini", messages=[{"role": "user", "content": "hi"}]
        )
    expect(chat).to_contain_text("3 of 3 consumed; exhausted (reject)")
