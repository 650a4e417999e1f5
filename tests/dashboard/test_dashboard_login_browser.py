"""The dashboard's login in a real Chromium (Debian's package, driven by Playwright) against a real
gunicorn server (docs/dashboard.md): asked once and kept in an HttpOnly SameSite cookie that logout
revokes, the lockout after too many wrong keys, and no login on a server without a control key."""

from __future__ import annotations

import http.client
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from llmts import LlmTestServer
from tests.dashboard.browser import configured_expect as _expect
from tests.helpers import DASHBOARD_CONTROL_KEY


def test_login_is_asked_once_and_kept_in_an_httponly_samesite_cookie(
    page: Any, dashboard_server: LlmTestServer
) -> None:
    expect = _expect()
    page.goto(dashboard_server.url + "/dashboard")
    expect(page.locator("#login-form")).to_be_visible()
    expect(page.locator("#sessions")).to_have_count(0)  # nothing shown without the key

    page.fill("#control-key", "not-the-key")
    page.click("#login-form button[type=submit]")
    expect(page.locator("#login-error")).to_have_text("That key was refused.")
    expect(page.locator("#sessions")).to_have_count(0)

    page.fill("#control-key", DASHBOARD_CONTROL_KEY)
    page.click("#login-form button[type=submit]")
    expect(page.locator("#sessions")).to_be_visible()
    (cookie,) = [c for c in page.context.cookies() if c["name"] == "llmts_dashboard"]
    assert cookie["httpOnly"] is True and cookie["sameSite"] == "Strict"
    assert DASHBOARD_CONTROL_KEY not in cookie["value"]
    assert page.evaluate("document.cookie") == ""  # script cannot read it

    page.reload()  # asked once: the cookie keeps the login
    expect(page.locator("#sessions")).to_be_visible()
    expect(page.locator("#login-form")).to_have_count(0)
    expect(page.locator("#logout")).to_be_visible()

    page.click("#logout")
    expect(page.locator("#login-form")).to_be_visible()
    expect(page.locator("#logout")).to_be_hidden()
    assert not [c for c in page.context.cookies() if c["name"] == "llmts_dashboard"]
    # Logout revoked the token on the server: a copy of the cookie no longer authorizes anything.
    copied = {"Cookie": f"llmts_dashboard={cookie['value']}", "X-Llm-Test-Server-Dashboard": "1"}
    assert _get(dashboard_server, "/admin-api/sessions", copied) == 401


def test_without_a_control_key_there_is_no_login_and_no_log_out(
    chromium: Any, own_server_factory: Callable[..., LlmTestServer]
) -> None:
    expect = _expect()
    server = own_server_factory()
    context = chromium.new_context()
    try:
        page = context.new_page()
        page.goto(server.url + "/dashboard")
        expect(page.locator("#sessions")).to_be_visible()
        expect(page.locator("#login-form")).to_have_count(0)
        expect(page.locator("#logout")).to_be_hidden()
        # Nor when the login state cannot be read at all.
        page.route("**/dashboard/login", lambda route: route.fulfill(status=503, body="unavailable"))
        page.reload()
        expect(page.locator("#sessions")).to_be_visible()
        expect(page.locator("#logout")).to_be_hidden()
    finally:
        context.close()


def test_too_many_wrong_keys_say_when_to_try_again(
    chromium: Any, own_server_factory: Callable[..., LlmTestServer]
) -> None:
    from llmts.server.api.auth import MAX_WRONG_KEYS

    expect = _expect()
    server = own_server_factory(control_key=DASHBOARD_CONTROL_KEY)  # its own: this locks 127.0.0.1 out
    context = chromium.new_context()
    try:
        page = context.new_page()
        page.goto(server.url + "/dashboard")
        for attempt in range(MAX_WRONG_KEYS):
            page.fill("#control-key", f"guess-{attempt}")
            page.click("#login-form button[type=submit]")
            expect(page.locator("#login-error")).to_have_text("That key was refused.")
            page.locator("#login-error").evaluate("element => { element.textContent = ''; }")
        page.fill("#control-key", DASHBOARD_CONTROL_KEY)  # refused too while locked out
        page.click("#login-form button[type=submit]")
        expect(page.locator("#login-error")).to_contain_text("too many wrong control keys")
        expect(page.locator("#login-error")).to_contain_text("try again in")
        expect(page.locator("#sessions")).to_have_count(0)
    finally:
        context.close()


def _get(server: LlmTestServer, path: str, headers: dict[str, str]) -> int:
    parts = urlsplit(server.url)
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=30)
    try:
        connection.request("GET", path, headers=headers)
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def test_a_server_without_a_control_key_needs_no_login(chromium: Any, llmts_server: LlmTestServer) -> None:
    expect = _expect()
    context = chromium.new_context()
    try:
        page = context.new_page()
        page.goto(llmts_server.url + "/dashboard")
        expect(page.locator("#sessions")).to_be_visible()
        expect(page.locator("tr[data-session='default']")).to_be_visible()
        expect(page.locator("#login-form")).to_have_count(0)
    finally:
        context.close()
