"""Helpers of the dashboard's browser tests (tests/dashboard/; docs/dashboard.md, "How it is built and
tested"): Playwright's ``expect`` with the suite's timeout, screenshots for the docs, login and navigation."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from llmts import LlmTestServer
from tests.helpers import DASHBOARD_CONTROL_KEY

__all__ = ["TIMEOUT_MS", "configured_expect", "login", "offline_page", "open_view", "shot", "watched_page"]

TIMEOUT_MS = 20_000


def configured_expect() -> Any:
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    return expect


def watched_page(context: Any) -> tuple[Any, list[str]]:
    """A new page of ``context`` with the suite's timeout, and the list its page errors and CSP violations
    are written to (a test asserts it stays empty)."""
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on(
        "console",
        lambda message: (
            problems.append(message.text)
            if message.type == "error" and "Content Security Policy" in message.text
            else None
        ),
    )
    return page, problems


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


@contextmanager
def offline_page(chromium: Any) -> Iterator[tuple[Any, list[str], list[str]]]:
    """A page whose context refuses every request but a file:// one and is offline (a trace file must
    need nothing else), with every request it saw and every console or page error it logged."""
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    attempted: list[str] = []
    problems: list[str] = []

    def refuse(route: Any) -> None:
        attempted.append(route.request.url)
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            route.abort()

    context.route("**/*", refuse)
    context.set_offline(True)
    try:
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.on("request", lambda request: attempted.append(request.url))
        page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
        page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
        yield page, attempted, problems
    finally:
        context.close()
