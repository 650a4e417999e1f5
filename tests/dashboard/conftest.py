"""Fixtures of the dashboard's browser tests; Chromium and the keyed server are in tests/conftest.py."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from llmts import LlmTestServer, SessionClient
from tests.dashboard.browser import watched_page


@pytest.fixture
def browser_page(chromium: Any) -> Iterator[Any]:
    """A fresh browser context (no cookie yet); fails the test on a page error or a CSP violation."""
    context = chromium.new_context(viewport={"width": 1280, "height": 820})
    page, problems = watched_page(context)
    yield page
    context.close()
    assert problems == []


@pytest.fixture
def page(browser_page: Any, dashboard_server: LlmTestServer) -> Any:
    """``browser_page`` for a test of the keyed ``dashboard_server``."""
    return browser_page


@pytest.fixture
def session(dashboard_server: LlmTestServer) -> Iterator[SessionClient]:
    created = dashboard_server.create_session()
    yield created
    created.delete()
