"""The dashboard's login, over raw HTTP (docs/dashboard.md): the login cookie and what it authorizes,
logout's revocation, the login table's bound, and the throttle on wrong control keys. A real server shows
the cookie and the throttle's client address taken from the socket; the cookie check, the throttle's and
the token table's counting run on fresh apps in process and on the tables with a fake clock."""

from __future__ import annotations

import http.client
import json
import re
from collections.abc import Callable
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import urlsplit

import pytest
from werkzeug.test import Client

from llmts import LlmTestServer
from llmts.server.api.auth import (
    KEY_LOCKOUT_SECONDS,
    KEY_WINDOW_SECONDS,
    MAX_LOGIN_TOKENS,
    MAX_WRONG_KEYS,
    TOKEN_IDLE_SECONDS,
    TOKEN_LIFETIME_SECONDS,
    LoginTokens,
    WrongKeyThrottle,
    client_address,
)
from tests.helpers import DASHBOARD_CONTROL_KEY, OPENAI_CHAT_PATH, RawResponse, raw_request
from tests.support.in_process import InProcessServer, send_raw

DASHBOARD = {"X-Llm-Test-Server-Dashboard": "1"}


def _login(server: LlmTestServer) -> str:
    answer = raw_request(server.url, "POST", "/dashboard/login", {"key": DASHBOARD_CONTROL_KEY}, DASHBOARD)
    assert answer.status == 204, answer.body
    cookie = SimpleCookie(answer.headers["set-cookie"])
    return f"llmts_dashboard={cookie['llmts_dashboard'].value}"


# --- login cookie ----------------------------------------------------------------------------------------


def test_login_sets_an_httponly_samesite_strict_cookie_that_is_not_the_key(
    dashboard_server: LlmTestServer,
) -> None:
    answer = raw_request(
        dashboard_server.url, "POST", "/dashboard/login", {"key": DASHBOARD_CONTROL_KEY}, DASHBOARD
    )
    assert answer.status == 204
    attributes = [part.strip() for part in answer.headers["set-cookie"].split(";")]
    name, _, value = attributes[0].partition("=")
    assert name == "llmts_dashboard" and len(value) == 64 and DASHBOARD_CONTROL_KEY not in value
    assert {"HttpOnly", "SameSite=Strict", "Path=/"} <= set(attributes)
    assert "content-security-policy" in answer.headers


@pytest.mark.parametrize(
    ("body", "headers", "status"),
    [
        ({"key": "wrong"}, DASHBOARD, 401),
        ({"key": DASHBOARD_CONTROL_KEY}, {}, 401),  # not from the dashboard page
        ({"key": DASHBOARD_CONTROL_KEY}, {**DASHBOARD, "Origin": "http://evil.example"}, 401),
        ({"key": 42}, DASHBOARD, 400),
        ("not json", DASHBOARD, 400),
        ({"key": "é"}, DASHBOARD, 401),
    ],
)
def test_a_refused_login_sets_no_cookie(
    dashboard_server: LlmTestServer, body: object, headers: dict[str, str], status: int
) -> None:
    answer = raw_request(dashboard_server.url, "POST", "/dashboard/login", body, headers)  # type: ignore[arg-type]
    assert answer.status == status
    assert "set-cookie" not in answer.headers
    assert answer.json()["error"]["code"]


def test_the_cookie_authorizes_the_control_api_only_with_the_dashboard_header(
    dashboard_server: LlmTestServer,
) -> None:
    cookie = _login(dashboard_server)
    url = dashboard_server.url
    assert (
        raw_request(url, "GET", "/admin-api/sessions", headers={"Cookie": cookie, **DASHBOARD}).status == 200
    )
    same_origin = {"Cookie": cookie, **DASHBOARD, "Origin": url}
    assert raw_request(url, "GET", "/admin-api/sessions", headers=same_origin).status == 200
    # A plain navigation or form post carries the cookie but not the header (and a cross-origin page
    # cannot add the header without a preflight llmts never answers): refused.
    assert raw_request(url, "GET", "/admin-api/sessions", headers={"Cookie": cookie}).status == 401
    assert raw_request(url, "POST", "/admin-api/reset", headers={"Cookie": cookie}).status == 401
    foreign = {"Cookie": cookie, **DASHBOARD, "Origin": "http://127.0.0.1:1"}
    assert raw_request(url, "POST", "/admin-api/reset", headers=foreign).status == 401
    forged = {"Cookie": "llmts_dashboard=" + "0" * 64, **DASHBOARD}
    assert raw_request(url, "GET", "/admin-api/sessions", headers=forged).status == 401
    not_utf8 = {"Cookie": "llmts_dashboard=\xe9\xff", **DASHBOARD}  # sent as latin-1 bytes
    assert raw_request(url, "GET", "/admin-api/sessions", headers=not_utf8).status == 401
    key_as_cookie = {"Cookie": f"llmts_dashboard={DASHBOARD_CONTROL_KEY}", **DASHBOARD}
    assert raw_request(url, "GET", "/admin-api/sessions", headers=key_as_cookie).status == 401
    # The bearer key still works as before.
    bearer = {"Authorization": f"Bearer {DASHBOARD_CONTROL_KEY}"}
    assert raw_request(url, "GET", "/admin-api/sessions", headers=bearer).status == 200


def test_the_cookie_is_no_provider_credential(dashboard_server: LlmTestServer) -> None:
    cookie = _login(dashboard_server)
    session = dashboard_server.create_session()
    try:
        session.configure(
            {"provider_credentials": {"openai": "sk-real"}, "scenarios": [{"responses": [{"text": "x"}]}]}
        )
        body = {"model": "gpt-4.1-mini", "messages": [{"role": "user", "content": "hi"}]}
        answer = send_raw(session, "POST", OPENAI_CHAT_PATH, body, {"Cookie": cookie, **DASHBOARD})
        assert answer.status == 401
        assert answer.json()["error"]["type"] == "invalid_request_error"  # OpenAI's own envelope
    finally:
        session.delete()


def test_logout_expires_the_cookie(dashboard_server: LlmTestServer) -> None:
    answer = raw_request(dashboard_server.url, "POST", "/dashboard/logout", headers=DASHBOARD)
    assert answer.status == 204
    assert answer.headers["set-cookie"].startswith("llmts_dashboard=;")
    assert "Max-Age=0" in answer.headers["set-cookie"]


def test_each_login_gets_a_random_token_and_logout_revokes_it_on_the_server(
    dashboard_server: LlmTestServer,
) -> None:
    url = dashboard_server.url
    first, second = _login(dashboard_server), _login(dashboard_server)
    assert first != second  # random per login, not derived from the key
    for cookie in (first, second):
        assert (
            raw_request(url, "GET", "/admin-api/sessions", headers={"Cookie": cookie, **DASHBOARD}).status
            == 200
        )
    # Logout answers with an expired cookie, and forgets the token: a copy of the cookie kept elsewhere
    # (another tab, a stolen header) stops working at once.
    answer = raw_request(url, "POST", "/dashboard/logout", headers={"Cookie": first, **DASHBOARD})
    assert answer.status == 204 and "Max-Age=0" in answer.headers["set-cookie"]
    refused = raw_request(url, "GET", "/admin-api/sessions", headers={"Cookie": first, **DASHBOARD})
    assert refused.status == 401 and refused.json()["error"]["code"] == "unauthorized"
    login_state = raw_request(url, "GET", "/dashboard/login", headers={"Cookie": first, **DASHBOARD})
    assert login_state.json() == {"key_required": True, "logged_in": False}
    # Another login (another browser) is untouched.
    assert (
        raw_request(url, "GET", "/admin-api/sessions", headers={"Cookie": second, **DASHBOARD}).status == 200
    )


def test_logout_needs_the_dashboard_header(dashboard_server: LlmTestServer) -> None:
    """Another site cannot log a browser out (its form post has no dashboard header): nothing revoked."""
    cookie = _login(dashboard_server)
    url = dashboard_server.url
    assert raw_request(url, "POST", "/dashboard/logout", headers={"Cookie": cookie}).status == 401
    assert (
        raw_request(url, "GET", "/admin-api/sessions", headers={"Cookie": cookie, **DASHBOARD}).status == 200
    )


def test_login_state_says_whether_a_key_is_needed_and_given(dashboard_server: LlmTestServer) -> None:
    """The page shows "Log out" only with a control key and a login (docs/dashboard.md, "Login")."""
    url = dashboard_server.url
    answer = raw_request(url, "GET", "/dashboard/login", headers=DASHBOARD)
    assert answer.status == 200 and answer.json() == {"key_required": True, "logged_in": False}
    assert "content-security-policy" in answer.headers
    cookie = _login(dashboard_server)
    with_cookie = raw_request(url, "GET", "/dashboard/login", headers={"Cookie": cookie, **DASHBOARD})
    assert with_cookie.json() == {"key_required": True, "logged_in": True}
    # The cookie without the dashboard header authorizes nothing, here either.
    assert (
        raw_request(url, "GET", "/dashboard/login", headers={"Cookie": cookie}).json()["logged_in"] is False
    )
    no_key = send_raw(InProcessServer(), "GET", "/dashboard/login", None, DASHBOARD)
    assert no_key.json() == {"key_required": False, "logged_in": True}


def test_the_login_tokens_are_bounded_and_a_new_login_forgets_the_oldest() -> None:
    server = InProcessServer(control_key=DASHBOARD_CONTROL_KEY)
    with _Connection(server) as connection:
        oldest = _token_of(connection.request("POST", "/dashboard/login", {"key": DASHBOARD_CONTROL_KEY}))
        second = _token_of(connection.request("POST", "/dashboard/login", {"key": DASHBOARD_CONTROL_KEY}))
        for _ in range(MAX_LOGIN_TOKENS - 2):
            _token_of(connection.request("POST", "/dashboard/login", {"key": DASHBOARD_CONTROL_KEY}))

        def authorized(token: str) -> bool:
            return connection.request("GET", "/admin-api/sessions", cookie=token).status == 200

        assert authorized(oldest) and authorized(second)  # the table is full, nothing forgotten yet
        newest = _token_of(connection.request("POST", "/dashboard/login", {"key": DASHBOARD_CONTROL_KEY}))
        assert authorized(newest) and authorized(second)
        assert not authorized(oldest)


def test_without_a_control_key_login_succeeds_and_sets_nothing() -> None:
    server = InProcessServer()
    answer = send_raw(server, "POST", "/dashboard/login", {"key": "anything"}, DASHBOARD)
    assert answer.status == 204 and "set-cookie" not in answer.headers
    assert send_raw(server, "GET", "/admin-api/sessions").status == 200


# --- the throttle on wrong control keys ---------------------------------------------------------------
# Requests from 127.0.0.2 (loopback too, on Linux) come from another client address than 127.0.0.1.


def _from(source: str, server: LlmTestServer, method: str, path: str, **kwargs: Any) -> RawResponse:
    with _Connection(server, source) as connection:
        return connection.request(method, path, **kwargs)


def _assert_throttled(answer: RawResponse) -> None:
    assert answer.status == 429, answer.body
    assert set(answer.json()["error"]) == {"code", "message", "details"}
    assert answer.json()["error"]["code"] == "control_key_throttled"
    assert 1 <= int(answer.headers["retry-after"]) <= KEY_LOCKOUT_SECONDS
    assert "set-cookie" not in answer.headers


def test_wrong_login_keys_lock_the_client_out_and_only_that_client(
    own_server_factory: Callable[..., LlmTestServer],
) -> None:
    server = own_server_factory(control_key=DASHBOARD_CONTROL_KEY)
    before = _token_of(
        _from("127.0.0.1", server, "POST", "/dashboard/login", body={"key": DASHBOARD_CONTROL_KEY})
    )
    for attempt in range(MAX_WRONG_KEYS):
        answer = _from("127.0.0.1", server, "POST", "/dashboard/login", body={"key": f"guess-{attempt}"})
        assert answer.status == 401, attempt
    _assert_throttled(_from("127.0.0.1", server, "POST", "/dashboard/login", body={"key": "guess"}))
    # The right key is refused too while locked out (else the 401s and 204 would let guessing go on),
    # and so is the bearer key on the control API.
    _assert_throttled(
        _from("127.0.0.1", server, "POST", "/dashboard/login", body={"key": DASHBOARD_CONTROL_KEY})
    )
    bearer = {"Authorization": f"Bearer {DASHBOARD_CONTROL_KEY}"}
    _assert_throttled(_from("127.0.0.1", server, "GET", "/admin-api/sessions", headers=bearer))
    # No key presented: the usual 401. A login made before keeps working (a token cannot be guessed).
    assert _from("127.0.0.1", server, "GET", "/admin-api/sessions").status == 401
    assert _from("127.0.0.1", server, "GET", "/admin-api/sessions", cookie=before).status == 200
    # Another client is not locked out.
    assert _from("127.0.0.2", server, "GET", "/admin-api/sessions", headers=bearer).status == 200
    other = _from("127.0.0.2", server, "POST", "/dashboard/login", body={"key": DASHBOARD_CONTROL_KEY})
    assert other.status == 204 and "set-cookie" in other.headers


def test_wrong_bearer_keys_count_against_the_same_throttle() -> None:
    server = InProcessServer(control_key=DASHBOARD_CONTROL_KEY)
    for attempt in range(MAX_WRONG_KEYS):
        wrong = {"Authorization": f"Bearer guess-{attempt}"}
        assert _from("127.0.0.2", server, "GET", "/admin-api/sessions", headers=wrong).status == 401
    _assert_throttled(
        _from("127.0.0.2", server, "POST", "/dashboard/login", body={"key": DASHBOARD_CONTROL_KEY})
    )
    bearer = {"Authorization": f"Bearer {DASHBOARD_CONTROL_KEY}"}
    _assert_throttled(_from("127.0.0.2", server, "POST", "/admin-api/reset", headers=bearer))
    assert _from("127.0.0.1", server, "GET", "/admin-api/sessions", headers=bearer).status == 200


def test_wrong_keys_below_the_limit_and_other_refusals_lock_nothing() -> None:
    """Only a wrong key counts: no key, another scheme, a forged cookie or a bad body do not."""
    server = InProcessServer(control_key=DASHBOARD_CONTROL_KEY)
    for _ in range(3 * MAX_WRONG_KEYS):
        assert _from("127.0.0.1", server, "GET", "/admin-api/sessions").status == 401
        basic = {"Authorization": "Basic dXNlcjpwdw=="}
        assert _from("127.0.0.1", server, "GET", "/admin-api/sessions", headers=basic).status == 401
        assert _from("127.0.0.1", server, "GET", "/admin-api/sessions", cookie="0" * 64).status == 401
        assert _from("127.0.0.1", server, "POST", "/dashboard/login", body={"key": 1}).status == 400
    for attempt in range(MAX_WRONG_KEYS - 1):
        assert (
            _from("127.0.0.1", server, "POST", "/dashboard/login", body={"key": f"g{attempt}"}).status == 401
        )
    with _Connection(server) as connection:  # the right key, with one wrong key to spare
        assert _token_of(connection.request("POST", "/dashboard/login", {"key": DASHBOARD_CONTROL_KEY}))


class _Connection:
    """One keep-alive HTTP connection from ``source`` (a loopback address) with the dashboard's header; to
    an in-process server, requests through the app whose ``REMOTE_ADDR`` is ``source``."""

    def __init__(self, server: LlmTestServer, source: str = "127.0.0.1") -> None:
        self._app = server.wsgi if isinstance(server, InProcessServer) else None
        self._source = source
        parts = urlsplit(server.url)
        self._connection = http.client.HTTPConnection(
            parts.hostname or "127.0.0.1", parts.port, timeout=30, source_address=(source, 0)
        )

    def __enter__(self) -> _Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self._connection.close()

    def request(
        self,
        method: str,
        path: str,
        body: object = None,
        *,
        headers: dict[str, str] | None = None,
        cookie: str | None = None,
    ) -> RawResponse:
        all_headers = {"Content-Type": "application/json", **DASHBOARD, **(headers or {})}
        if cookie is not None:
            all_headers["Cookie"] = cookie if "=" in cookie else f"llmts_dashboard={cookie}"
        data = json.dumps(body).encode() if body is not None else None
        if self._app is not None:
            answer = Client(self._app, use_cookies=False).open(
                path,
                method=method,
                data=data,
                headers=all_headers,
                environ_overrides={"REMOTE_ADDR": self._source},
            )
            return RawResponse(
                answer.status_code, {k.lower(): v for k, v in answer.headers.items()}, answer.get_data()
            )
        self._connection.request(method, path, body=data, headers=all_headers)
        response = self._connection.getresponse()
        return RawResponse(response.status, {k.lower(): v for k, v in response.getheaders()}, response.read())


def _token_of(answer: RawResponse) -> str:
    assert answer.status == 204, answer.body
    return SimpleCookie(answer.headers["set-cookie"])["llmts_dashboard"].value


# --- in memory: the cookie check --------------------------------------------------------------------


def test_cookie_authorizes_needs_the_cookie_the_header_and_a_matching_origin() -> None:
    from llmts.server.api.dashboard import cookie_authorizes

    tokens = LoginTokens()
    token = tokens.issue()
    assert re.fullmatch(r"[0-9a-f]{64}", token) and token != tokens.issue()  # 256 random bits, in hex
    valid = tokens.valid
    good = {
        "HTTP_COOKIE": f"other=1; llmts_dashboard={token}",
        "HTTP_X_LLM_TEST_SERVER_DASHBOARD": "1",
        "HTTP_HOST": "127.0.0.1:8080",
    }
    assert cookie_authorizes(good, valid)
    assert cookie_authorizes({**good, "HTTP_ORIGIN": "http://127.0.0.1:8080"}, valid)
    assert cookie_authorizes({**good, "HTTP_ORIGIN": "https://127.0.0.1:8080"}, valid)  # TLS proxy in front
    assert not cookie_authorizes({**good, "HTTP_ORIGIN": "http://127.0.0.1:8081"}, valid)
    assert not cookie_authorizes({**good, "HTTP_ORIGIN": "null"}, valid)
    assert not cookie_authorizes({**good, "HTTP_X_LLM_TEST_SERVER_DASHBOARD": "true"}, valid)
    assert not cookie_authorizes({k: v for k, v in good.items() if k != "HTTP_COOKIE"}, valid)
    assert not cookie_authorizes({**good, "HTTP_COOKIE": "llmts_dashboard=é"}, valid)
    assert not cookie_authorizes({**good, "HTTP_COOKIE": "llmts_dashboard=k"}, valid)
    tokens.revoke(token)
    assert not cookie_authorizes(good, valid)


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _locked(throttle: WrongKeyThrottle, client: str) -> bool:
    from llmts.errors import ControlKeyThrottled

    try:
        throttle.check(client)
    except ControlKeyThrottled:
        return True
    return False


def test_the_lockout_ends_after_its_seconds_and_the_window_after_its_own() -> None:
    clock = _Clock()
    throttle = WrongKeyThrottle(clock=clock)
    for _ in range(MAX_WRONG_KEYS - 1):
        throttle.wrong_key("a")
    assert not _locked(throttle, "a")
    clock.now += KEY_WINDOW_SECONDS  # the window passed: the count starts again
    for _ in range(MAX_WRONG_KEYS - 1):
        throttle.wrong_key("a")
    assert not _locked(throttle, "a")
    throttle.wrong_key("a")
    assert _locked(throttle, "a") and not _locked(throttle, "b")
    clock.now += KEY_LOCKOUT_SECONDS - 0.5
    assert _locked(throttle, "a")
    clock.now += 0.5
    assert not _locked(throttle, "a")
    throttle.wrong_key("a")  # after a lockout, a new window: one more wrong key does not lock again
    assert not _locked(throttle, "a")


def test_the_throttle_remembers_a_bounded_number_of_clients() -> None:
    clock = _Clock()
    throttle = WrongKeyThrottle(max_wrong=2, max_clients=3, clock=clock)
    for client in ("a", "b", "c"):
        throttle.wrong_key(client)
        throttle.wrong_key(client)
    assert len(throttle) == 3 and _locked(throttle, "a")
    clock.now += KEY_LOCKOUT_SECONDS / 2
    throttle.wrong_key("d")  # full: the client whose window opened first is forgotten
    assert len(throttle) == 3 and not _locked(throttle, "a") and _locked(throttle, "b")
    clock.now += KEY_LOCKOUT_SECONDS / 2
    throttle.wrong_key("e")  # b's and c's lockouts are over: dropped; d's window is still open
    assert len(throttle) == 2 and not _locked(throttle, "b")


def test_login_tokens_expire_when_idle_or_old_and_are_bounded() -> None:
    clock = _Clock()
    tokens = LoginTokens(max_tokens=2, clock=clock)
    idle = tokens.issue()
    clock.now += TOKEN_IDLE_SECONDS - 1
    assert tokens.valid(idle)  # used: not idle any more
    clock.now += TOKEN_IDLE_SECONDS - 1
    assert tokens.valid(idle)
    clock.now += TOKEN_IDLE_SECONDS
    assert not tokens.valid(idle) and len(tokens) == 0
    old = tokens.issue()
    for _ in range(int(TOKEN_LIFETIME_SECONDS // (TOKEN_IDLE_SECONDS / 2))):
        clock.now += TOKEN_IDLE_SECONDS / 2
        tokens.valid(old)
    assert not tokens.valid(old)  # in use all along, but older than its lifetime
    first, second, third = tokens.issue(), tokens.issue(), tokens.issue()
    assert len(tokens) == 2 and not tokens.valid(first) and tokens.valid(second) and tokens.valid(third)


def test_the_throttle_counts_an_ipv6_client_by_its_64() -> None:
    assert client_address({"REMOTE_ADDR": "127.0.0.2"}) == "127.0.0.2"
    first = client_address({"REMOTE_ADDR": "2001:db8:1:2::1"})
    assert first == client_address({"REMOTE_ADDR": "2001:db8:1:2:ffff::9"}) == "2001:db8:1:2::/64"
    assert first != client_address({"REMOTE_ADDR": "2001:db8:1:3::1"})
    assert client_address({"REMOTE_ADDR": "fe80::1%eth0"}) == "fe80::/64"
    assert client_address({}) == ""
