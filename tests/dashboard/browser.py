"""Helpers of the dashboard's browser tests (tests/dashboard/; docs/dashboard.md, "How it is built and
tested"): Playwright's ``expect`` with the suite's timeout, screenshots for the docs, login and navigation."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from llmts import LlmTestServer
from tests.helpers import DASHBOARD_CONTROL_KEY

__all__ = ["TIMEOUT_MS", "configured_expect", "login", "open_view", "shot"]

TIMEOUT_MS = 20_000


def configured_expect() -> Any:
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    return expect


def shot(page: Any, name: str) -> None:
    """A screenshot for the docs when ``LLMTS_DASHBOARD_SCREENSHOTS`` names a folder."""
    folder = os.environ.get("LLMTS_DASHBOARD_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"dashboard-{name}.png"))


def login(page: Any, server: LlmTestServer) -> None:
    page.goto(server.url + "/dashboard")
    page.fill("#control-key", DASHBOARD_CONTROL_KEY)
    page.click("#login-form button[type=submit]")
    configured_expect()(page.locator("#sessions")).to_be_visible()


def open_view(page: Any, server_url: str, hash_path: str) -> None:
    page.goto(f"{server_url}/dashboard#/{hash_path}")
