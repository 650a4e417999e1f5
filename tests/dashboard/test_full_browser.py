"""The dashboard in the full Chromium browser, the one its users open (Debian's ``chromium``). The other
browser tests run on Chromium's headless shell when it is installed (tests/conftest.py, ``find_chromium``:
the same engine at about two thirds of the CPU); this one keeps the browser itself proven: log in, see a
new session arrive and its first request counted, live."""

from __future__ import annotations

from typing import Any

import pytest

from llmts import LlmTestServer
from tests.conftest import find_full_chromium
from tests.dashboard.browser import configured_expect, login, watched_page
from tests.helpers import CHROMIUM_ARGS


def test_the_full_browser_logs_in_and_follows_a_session_live(
    chromium: Any, dashboard_server: LlmTestServer
) -> None:
    executable = find_full_chromium()
    if executable is None:
        pytest.skip("the full Chromium browser is not installed (apt-get install chromium)")
    # The worker's Playwright launches it beside the worker's browser: one sync Playwright per thread.
    browser = chromium.browser_type.launch(executable_path=executable, args=CHROMIUM_ARGS)
    try:
        page, problems = watched_page(browser.new_context(viewport={"width": 1280, "height": 820}))
        expect = configured_expect()
        login(page, dashboard_server)
        created = dashboard_server.create_session(label="full browser")
        try:
            row = page.locator(f"tr[data-session='{created.id}']")
            expect(row).to_be_visible()
            created.configure({"scenarios": [{"responses": [{"text": "a"}]}]})
            created.openai_client(max_retries=0).chat.completions.create(
                model="gpt-4.1-mini", messages=[{"role": "user", "content": "hi"}]
            )
            expect(row.locator("td").nth(5)).to_have_text("1")  # requests
        finally:
            created.delete()
        expect(page.locator(f"tr[data-session='{created.id}']")).to_have_count(0)
        assert problems == []
    finally:
        browser.close()
