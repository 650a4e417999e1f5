"""The ``Host`` guard against DNS rebinding (docs/server.md, "Allowed hosts"): a loopback-bound server
answers loopback names and ``--allowed-hosts`` only, on every route, in each route's envelope; the
policy itself in memory."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import openai
import pytest

from llmts import LlmTestServer
from llmts.server.http.host_check import HostPolicy, host_policy, is_loopback_bind
from tests.helpers import OPENAI_CHAT_PATH, USER_HI, raw_request

pytestmark = pytest.mark.sdk

BODY = {"model": "gpt-4.1-mini", "messages": USER_HI}


@pytest.mark.parametrize(
    ("header", "allowed"),
    [
        ("127.0.0.1:8080", True),
        ("localhost:8080", True),
        ("LOCALHOST.", True),
        ("app.localhost:3000", True),
        ("127.5.6.7", True),
        ("[::1]:8080", True),
        ("::1", True),
        (None, True),  # HTTP/1.0 without Host: no browser
        ("attacker.example:8080", False),
        ("localhost.attacker.example", False),
        ("127.0.0.1.nip.io", False),
        ("10.0.0.5:8080", False),
        ("", False),
    ],
)
def test_a_loopback_server_answers_loopback_names_only(header: Any, allowed: bool) -> None:
    assert HostPolicy(()).allows(header) is allowed


def test_allowed_hosts_add_names_domains_or_everything() -> None:
    policy = HostPolicy(["llmts.test", ".corp.example", " "])
    assert (
        policy.allows("llmts.test:8080")
        and policy.allows("a.b.corp.example")
        and policy.allows("corp.example")
    )
    assert (
        policy.allows("localhost") and not policy.allows("evil.test") and not policy.allows("xcorp.example")
    )
    assert host_policy(["127.0.0.1:0"], "*", {}) is None
    assert host_policy(["127.0.0.1:0"], None, {"LLMTS_ALLOWED_HOSTS": "*"}) is None


def test_only_a_loopback_bind_restricts_by_default() -> None:
    assert all(is_loopback_bind(a) for a in ("127.0.0.1:8080", "[::1]:0", "localhost:80", "unix:/tmp/s"))
    assert not any(is_loopback_bind(a) for a in ("0.0.0.0:8080", "[::]:80", "10.1.2.3:80", "example.com:80"))
    assert host_policy(["127.0.0.1:8080"], None, {}) is not None
    assert host_policy(["0.0.0.0:8080"], None, {}) is None
    assert host_policy(["127.0.0.1:8080", "0.0.0.0:9"], None, {}) is None
    assert host_policy([], None, {}) is None  # not under a known bind (in-process, werkzeug): answers all
    restricted = host_policy(["0.0.0.0:8080"], "llmts.test", {})
    assert restricted is not None and not restricted.allows("evil.test")


def test_the_verdict_cache_stays_bounded() -> None:
    policy = HostPolicy(())
    for index in range(1000):
        assert not policy.allows(f"host{index}.example")
    assert len(policy._judged) <= 256


def _foreign(base: str, method: str, path: str, body: Any = None, host: str = "attacker.example") -> Any:
    return raw_request(base, method, path, body, headers={"Host": f"{host}:80"})


def test_foreign_hosts_get_403_on_every_route_and_change_nothing(llmts_server: LlmTestServer) -> None:
    session = llmts_server.create_session()
    try:
        base = llmts_server.url
        configure = _foreign(base, "POST", "/admin-api/configure", {"scenarios": []})
        created = _foreign(base, "POST", "/admin-api/sessions")
        dashboard = _foreign(base, "GET", "/dashboard")
        journal = _foreign(f"{base}/sessions/{session.id}", "GET", "/admin-api/requests")
        chat = _foreign(f"{base}/sessions/{session.id}", "POST", OPENAI_CHAT_PATH, BODY)
        gemini = _foreign(base, "POST", "/gemini/v1beta/models/g:generateContent", {"contents": []})

        for control in (configure, created, dashboard, journal):
            assert control.status == 403
            assert control.json()["error"]["code"] == "llm_test_server_host_not_allowed"
        assert "attacker.example" in configure.json()["error"]["message"]
        assert chat.status == 403 and chat.json()["error"]["code"] == "llm_test_server_host_not_allowed"
        assert chat.json()["error"]["type"] == "permission_error"  # OpenAI's envelope
        assert gemini.status == 403 and gemini.json()["error"]["status"] == "PERMISSION_DENIED"
        assert session.requests() == []  # nothing journaled, nothing configured
        # The same requests under a loopback name are answered.
        for name in ("localhost", "127.0.0.1", "app.localhost"):
            answered = _foreign(f"{base}/sessions/{session.id}", "POST", OPENAI_CHAT_PATH, BODY, host=name)
            assert answered.status == 200, name
    finally:
        session.delete()


def test_the_sdk_raises_its_permission_error(llmts_server: LlmTestServer) -> None:
    session = llmts_server.create_session()
    try:
        client = openai.OpenAI(
            base_url=f"{session.provider_base}/openai/v1",
            api_key="k",
            max_retries=0,
            default_headers={"Host": "rebound.attacker.example"},
        )
        with pytest.raises(openai.PermissionDeniedError) as raised:
            client.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI)  # type: ignore[arg-type]
        assert raised.value.code == "llm_test_server_host_not_allowed"
    finally:
        session.delete()


def test_allowed_hosts_opens_the_named_hosts(own_server_factory: Callable[..., LlmTestServer]) -> None:
    server = own_server_factory(extra_args=["--allowed-hosts", "llmts.test,.corp.example"])

    assert _foreign(server.url, "GET", "/admin-api/sessions", host="llmts.test").status == 200
    assert _foreign(server.url, "GET", "/admin-api/sessions", host="ci.corp.example").status == 200
    assert _foreign(server.url, "GET", "/admin-api/sessions", host="localhost").status == 200
    assert _foreign(server.url, "GET", "/admin-api/sessions", host="attacker.example").status == 403


def test_a_server_bound_to_every_interface_answers_every_host(
    own_server_factory: Callable[..., LlmTestServer],
) -> None:
    server = own_server_factory(host="0.0.0.0")
    base = server.url.replace("0.0.0.0", "127.0.0.1")

    assert _foreign(base, "GET", "/admin-api/sessions", host="llmts.internal").status == 200
