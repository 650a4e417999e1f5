"""The dashboard built for test runs (docs/dashboard.md) in the real Chromium against a real gunicorn
server: sessions listed by label with their test outcome, searched and filtered to failed tests; journal
rows with the prompt and answer, tool-use markers, a badge that tells a stream cut short from a whole
answer, the retry-after a 429 advertised and each attempt's place in its retry group; and the request page
of a cut stream with the text the SDK received, assembled from the frames, the frames folded.

Set ``LLMTS_DASHBOARD_SCREENSHOTS=docs/images`` to refresh the screenshots the docs show.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import openai
import pytest

from llmts import LlmTestServer, SessionClient
from tests.dashboard.browser import configured_expect, login, open_view
from tests.dashboard.screens import GREEN, capture, colour, fits_the_viewport

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
LONG_PROMPT = (
    "What is the weather in Paris today, and should I take an umbrella when I walk to the station "
    "this afternoon?"
)
RETRY_GROUP = "ask-umbrella"


def _label(name: str) -> str:
    return f"tests/test_checkout.py::{name}[{uuid.uuid4().hex[:8]}]"


def _hash_query(page: Any) -> dict[str, list[str]]:
    fragment = urlsplit(page.url).fragment
    return parse_qs(fragment.partition("?")[2])


def test_sessions_are_listed_by_label_searched_and_filtered_to_failed_tests(
    page: Any, dashboard_server: LlmTestServer, tmp_path: Path
) -> None:
    expect = configured_expect()
    outcomes = {"pays": "passed", "refunds": "failed", "ships": "error", "retries": "skipped"}
    created: dict[str, SessionClient] = {}
    try:
        for name, outcome in outcomes.items():
            session = dashboard_server.create_session(label=_label(f"test_{name}"))
            session.annotate(test_outcome=outcome)
            created[name] = session
        unlabelled = dashboard_server.create_session()
        created["unlabelled"] = unlabelled
        labels = {name: session.info()["label"] for name, session in created.items()}
        login(page, dashboard_server)

        refunds = page.locator(f"tr[data-session='{created['refunds'].id}']")
        expect(refunds.locator("a.session-label")).to_have_text(labels["refunds"])
        expect(refunds.locator(".session-id a")).to_have_text(created["refunds"].id)  # still the link
        expect(refunds.locator(".session-id a")).to_have_attribute(
            "href", f"#/sessions/{created['refunds'].id}/journal"
        )
        expect(refunds.locator(".badge.outcome")).to_have_text("failed")
        expect(refunds.locator(".badge.outcome")).to_have_class("badge outcome bad")
        passed = page.locator(f"tr[data-session='{created['pays'].id}'] .badge.outcome")
        expect(passed).to_have_text("passed")
        assert colour(passed) == GREEN
        assert colour(refunds.locator(".badge.outcome")) != GREEN
        row_of_unlabelled = page.locator(f"tr[data-session='{unlabelled.id}']")
        expect(row_of_unlabelled.locator("a.session-label")).to_have_count(0)
        expect(row_of_unlabelled.locator(".badge.outcome")).to_have_count(0)
        # Labelled rows lead with the label: it sits above the id, in bold.
        label_box = refunds.locator("a.session-label").bounding_box()
        id_box = refunds.locator(".session-id a").bounding_box()
        assert label_box is not None and id_box is not None and label_box["y"] < id_box["y"]

        # Search: a substring of a label, in another case, selects by label; an id fragment by id.
        page.fill("#session-search", "TEST_REFUNDS")
        visible = page.locator("#sessions-body tr:not([hidden])")
        expect(visible).to_have_count(1)
        expect(visible.first).to_have_attribute("data-session", created["refunds"].id)
        assert _hash_query(page) == {"q": ["TEST_REFUNDS"]}
        expect(page.locator("#sessions-summary")).to_contain_text("1 shown;")
        page.reload()  # the search survives a refresh: it is in the address
        expect(page.locator("#session-search")).to_have_value("TEST_REFUNDS")
        expect(visible).to_have_count(1)
        page.fill("#session-search", unlabelled.id[-12:].upper())
        expect(visible).to_have_count(1)
        expect(visible.first).to_have_attribute("data-session", unlabelled.id)
        page.fill("#session-search", "no-such-session-anywhere")
        expect(visible).to_have_count(0)
        expect(page.locator("#sessions-empty")).to_be_visible()

        # Failed tests: failed and error, nothing else (the default session included).
        page.fill("#session-search", "")
        page.check("#failed-only")
        assert _hash_query(page) == {"failed": ["1"]}
        ids = {row.get_attribute("data-session") for row in visible.all()}
        assert {created["refunds"].id, created["ships"].id} <= ids
        assert not ids & {created["pays"].id, created["retries"].id, unlabelled.id, "default"}
        assert {row.get_attribute("data-outcome") for row in visible.all()} <= {"failed", "error"}
        page.fill("#session-search", "test_ships")
        expect(visible).to_have_count(1)
        expect(visible.first).to_have_attribute("data-session", created["ships"].id)
        page.fill("#session-search", "tests/test_checkout.py")
        assert fits_the_viewport(page)
        capture(page, tmp_path, "sessions-failed", for_docs=False)

        # The poll keeps the filter: a test that fails later joins the list by itself.
        created["retries"].annotate(test_outcome="failed")
        expect(page.locator(f"tr[data-session='{created['retries'].id}']")).to_be_visible()
        # And the reset confirmation still works on a filtered list.
        refunds.locator("button[data-action=reset]").click()
        expect(refunds.locator(".confirm")).to_have_text(f"Reset {created['refunds'].id}?")
        refunds.get_by_role("button", name="Cancel").click()
        page.uncheck("#failed-only")
        page.fill("#session-search", "")
        expect(page.locator("tr[data-session='default']")).to_be_visible()
        assert _hash_query(page) == {}
        # The default session first, then the newest.
        order = [row.get_attribute("data-session") for row in page.locator("#sessions-body tr").all()]
        assert order[0] == "default"
        assert order.index(unlabelled.id) < order.index(created["pays"].id)
        capture(page, tmp_path, "sessions-labels")
    finally:
        for session in created.values():
            session.delete()


def _drive_a_test_run(session: SessionClient) -> None:
    """A tool loop then a 429, through the openai SDK: what the journal of a failing agent test holds
    before its retry (``_stream_the_retry``)."""
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
                        {"text": "Rain in Paris: take an umbrella."},
                        {
                            "error": {
                                "status": 429,
                                "code": "rate_limit_exceeded",
                                "message": "Slow down",
                                "retry_after": 2,
                            }
                        },
                        {
                            "text": "Umbrella: yes. Boots: maybe.",
                            "chunks": ["Umbrella: ", "yes. ", "Boots: maybe."],
                            "stream_delivery": {"mode": "early_clean_end", "after_content_frames": 2},
                        },
                    ]
                }
            ]
        }
    )
    client = session.openai_client(max_retries=0)
    question = [{"role": "user", "content": LONG_PROMPT}]
    asked = client.chat.completions.create(model="gpt-4.1-mini", messages=question, tools=[WEATHER_TOOL])
    history = [
        *question,
        asked.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": "call_1", "content": '{"sky": "rain", "celsius": 14}'},
    ]
    client.chat.completions.create(model="gpt-4.1-mini", messages=history, tools=[WEATHER_TOOL])
    retried = {"X-Llm-Test-Server-Retry-Group": RETRY_GROUP}
    follow_up = [{"role": "user", "content": "Boots too?"}]
    with pytest.raises(openai.RateLimitError):
        client.chat.completions.create(model="gpt-4.1-mini", messages=follow_up, extra_headers=retried)


def _stream_the_retry(session: SessionClient) -> str:
    """The retry, streamed and cut short after two content frames: the text the SDK received."""
    client = session.openai_client(max_retries=0)
    stream = client.chat.completions.create(
        model="gpt-4.1-mini",
        messages=[{"role": "user", "content": "Boots too?"}],
        stream=True,
        extra_headers={"X-Llm-Test-Server-Retry-Group": RETRY_GROUP},
    )
    return "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)


def test_journal_rows_show_the_exchange_tool_use_delivery_and_retries(
    page: Any, dashboard_server: LlmTestServer, session: SessionClient, tmp_path: Path
) -> None:
    expect = configured_expect()
    _drive_a_test_run(session)
    login(page, dashboard_server)
    open_view(page, dashboard_server.url, f"sessions/{session.id}/journal")
    rows = page.locator("#journal-body tr")
    expect(rows).to_have_count(3)

    asked = page.locator("#journal-body tr[data-sequence='1']")
    prompt = asked.locator(".snip.prompt")
    expect(prompt).to_contain_text("What is the weather in Paris today")
    expect(prompt).to_contain_text("…")  # shortened for the row
    expect(prompt).to_have_attribute("title", LONG_PROMPT)  # whole in its title
    expect(asked.locator(".marker.call")).to_have_text("⚒ get_weather")
    expect(asked.locator(".snip.answer")).to_have_count(0)  # the answer was a tool call only
    expect(asked.locator(".badge")).to_have_text("200")
    assert colour(asked.locator(".badge")) == GREEN

    answered = page.locator("#journal-body tr[data-sequence='2']")
    expect(answered.locator(".snip.answer")).to_have_text("\u2039 Rain in Paris: take an umbrella.")
    expect(answered.locator(".marker.result")).to_have_text("↩ 1 result")
    expect(answered.locator(".marker.result")).to_have_attribute(
        "title", "the request sends 1 tool result back (get_weather)"
    )

    limited = page.locator("#journal-body tr[data-sequence='3']")
    expect(limited.locator(".badge")).to_have_text("429")
    expect(limited.locator(".badge")).to_have_class("badge bad")
    expect(limited.locator(".retry-after")).to_have_text("retry after 2s")
    expect(limited.locator("span.retry")).to_have_text(f"{RETRY_GROUP} attempt 1/1")

    # The retry arrives live: a stream cut short after two content frames.
    received = _stream_the_retry(session)
    assert received == "Umbrella: yes. "
    cut = page.locator("#journal-body tr[data-sequence='4']")
    expect(cut.locator(".badge")).to_have_text("200 · early end")
    expect(cut.locator(".badge")).to_have_class("badge warn")
    assert colour(cut.locator(".badge")) != GREEN
    expect(cut.locator("td").nth(6)).to_contain_text("early_end")
    expect(cut.locator("span.retry")).to_have_text(f"{RETRY_GROUP} attempt 2/2")
    expect(limited.locator("span.retry")).to_have_text(f"{RETRY_GROUP} attempt 1/2")  # recounted live
    # The answer the cut stream delivered (its two content frames), not the whole scripted text.
    expect(cut.locator(".snip.answer")).to_have_attribute("title", "Umbrella: yes. ")

    # Layout: one line per snippet, no horizontal scrolling at 1280 pixels.
    line = prompt.bounding_box()
    assert line is not None and line["height"] < 30, line
    assert fits_the_viewport(page)
    capture(page, tmp_path, "journal-test-run")

    # The group's link filters the journal by it.
    cut.locator("span.retry a").click()
    expect(rows).to_have_count(2)
    assert _hash_query(page) == {"retry_group": [RETRY_GROUP]}
    expect(page.locator("#filter-retry_group")).to_have_value(RETRY_GROUP)
    expect(page.locator("#journal-body tr[data-sequence='3'] span.retry")).to_contain_text("attempt 1/2")

    # The 429's page shows what it advertised.
    limited.locator("td").first.click()
    facts = page.locator("#request-detail dl.facts")
    expect(facts).to_contain_text("retry after")
    expect(
        facts.locator("dt", has_text="retry after").locator("xpath=following-sibling::dd[1]")
    ).to_have_text("2s")
    expect(page.locator("#retry-group li").first).to_contain_text("retry after 2s")
    expect(page.locator("#assembled")).to_have_count(0)  # an error body, not a stream


def test_the_page_of_a_stream_cut_short_shows_what_the_client_received(
    page: Any, dashboard_server: LlmTestServer, session: SessionClient, tmp_path: Path
) -> None:
    expect = configured_expect()
    _drive_a_test_run(session)
    received = _stream_the_retry(session)
    entry = session.requests(order="asc")[3]
    assert entry["transport_outcome"] == "early_end" and entry["status"] == 200
    login(page, dashboard_server)
    open_view(page, dashboard_server.url, f"sessions/{session.id}/journal")
    list_badge = page.locator("#journal-body tr[data-sequence='4'] .badge")
    expect(list_badge).to_have_text("200 · early end")
    list_colour = colour(list_badge)
    page.locator("#journal-body tr[data-sequence='4'] td").first.click()

    badge = page.locator("#status-badge")
    expect(badge).to_have_text("200 · early end")  # the same badge as the list's
    expect(badge).to_have_class("badge warn")
    assert colour(badge) == list_colour != GREEN
    assembled = page.locator("#assembled")
    expect(assembled).to_have_attribute("data-wire", "OpenAI Chat Completions")
    expect(page.locator("#assembled-text")).to_be_visible()
    assert page.locator("#assembled-text").text_content() == received == "Umbrella: yes. "
    cut_note = page.locator("#assembled-notes li[data-note='cut-short']")
    expect(cut_note).to_contain_text("transport outcome early_end")
    expect(cut_note).to_contain_text("2 content frames written, no terminal marker")
    expect(cut_note).not_to_contain_text("meant to send")  # the journal's answer is what was delivered
    expect(page.locator("#assembled-notes li[data-note='truncated']")).to_have_count(0)

    # The assembled text comes first; the frames are folded under the response.
    assembled_box = assembled.bounding_box()
    facts_box = page.locator("#request-detail dl.facts").bounding_box()
    assert assembled_box is not None and facts_box is not None
    assert assembled_box["y"] < facts_box["y"]
    # The preview holds only the frames written (the server keeps what went out): nothing is unsent.
    expect(page.locator("#assembled-notes li[data-note='unsent']")).to_have_count(0)
    frames = page.locator("#response-preview-frames")
    expect(frames.locator("summary")).to_have_text("3 frames")  # role and two contents, nothing after the cut
    expect(frames.locator("ol.frames")).to_be_hidden()
    capture(page, tmp_path, "request-assembled", for_docs=False)  # the docs show "request"
    frames.locator("summary").click()
    expect(frames.locator("ol.frames")).to_be_visible()
    expect(frames.locator("ol.frames li").nth(2)).to_contain_text('"content": "yes. "')
    expect(frames.locator("ol.frames li.unsent")).to_have_count(0)
    expect(page.locator("#timeline")).to_contain_text("no terminal marker")


def test_a_preview_cut_by_the_journal_says_so(
    page: Any, dashboard_server: LlmTestServer, session: SessionClient
) -> None:
    expect = configured_expect()
    words = [f"word{index:03d} " for index in range(200)]
    session.configure(
        {
            "journal": {"preview_bytes": 1024},
            "scenarios": [{"responses": [{"text": "".join(words), "chunks": words}]}],
        }
    )
    stream = session.openai_client(max_retries=0).chat.completions.create(
        model="gpt-4.1-mini", messages=[{"role": "user", "content": "long"}], stream=True
    )
    received = "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
    assert received == "".join(words)
    (entry,) = session.requests()
    assert entry["response_truncated"] is True
    login(page, dashboard_server)
    open_view(page, dashboard_server.url, f"sessions/{session.id}/requests/{entry['request_id']}")
    expect(page.locator("#assembled-notes li[data-note='truncated']")).to_contain_text(
        f"only the start of the {entry['response_bytes']} bytes written"
    )
    expect(page.locator("#assembled-notes li[data-note='unread']")).to_contain_text("1 frame not read")
    shown = page.locator("#assembled-text").text_content() or ""
    assert shown and received.startswith(shown) and len(shown) < len(received)
    expect(page.locator("#status-badge")).to_have_text("200")
    assert colour(page.locator("#status-badge")) == GREEN
