"""The dashboard's page and files, over raw HTTP (docs/dashboard.md): served with a strict CSP and no
inline script or style, scripts without an HTML-parsing sink, the control error envelope for unknown
paths, and no dashboard under a session prefix."""

from __future__ import annotations

from pathlib import Path

import pytest

import llmts.dashboard
from llmts import LlmTestServer, SessionClient
from tests.helpers import raw_request
from tests.support.in_process import send_raw

# --- the page and its files ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path", ["/dashboard", "/dashboard/", "/dashboard/static/app.js", "/dashboard/static/views/journal.js"]
)
def test_dashboard_files_are_served_with_a_strict_content_security_policy(
    dashboard_server: LlmTestServer, path: str
) -> None:
    answer = raw_request(dashboard_server.url, "GET", path)  # no key needed: the files hold no data
    assert answer.status == 200
    csp = answer.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src 'self'" in csp and "style-src 'self'" in csp
    assert "unsafe-inline" not in csp and "frame-ancestors 'none'" in csp
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["x-frame-options"] == "DENY"
    expected = "text/html" if not path.endswith(".js") else "text/javascript"
    assert answer.headers["content-type"].startswith(expected)


def test_the_page_has_no_inline_script_or_style(dashboard_server: LlmTestServer) -> None:
    html = raw_request(dashboard_server.url, "GET", "/dashboard").body.decode()
    assert '<script type="module" src="/dashboard/static/app.js"></script>' in html
    assert "<style" not in html and "style=" not in html and " on" not in html.replace(" one", "")
    assert html.count("<script") == 1


def test_the_scripts_never_parse_html_from_strings() -> None:
    """Escaping has one rule (docs/dashboard.md): data goes into text nodes and attribute values only."""
    static = Path(llmts.dashboard.__file__).parent / "static"
    scripts = sorted(static.rglob("*.js"))
    assert len(scripts) >= 8
    for script in scripts:
        text = script.read_text()
        for sink in (
            "innerHTML",
            "outerHTML",
            "insertAdjacentHTML",
            "document.write",
            "eval(",
            "Function(",
            "srcdoc",
        ):
            assert sink not in text, f"{script.name} uses {sink}"


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/dashboard/static/missing.js", 404),
        ("GET", "/dashboard/static/../dashboard.py", 404),
        ("GET", "/dashboard/static/%2e%2e/dashboard.py", 404),
        ("GET", "/dashboard/nothing", 404),
        ("POST", "/dashboard", 405),
        ("PUT", "/dashboard/login", 405),
        ("GET", "/dashboard/logout", 405),
    ],
)
def test_unknown_dashboard_paths_get_the_control_error_envelope(
    dashboard_server: LlmTestServer, method: str, path: str, status: int
) -> None:
    answer = raw_request(dashboard_server.url, method, path)
    assert answer.status == status
    assert set(answer.json()["error"]) == {"code", "message", "details"}


def test_the_dashboard_is_not_served_under_a_session_prefix(app_session: SessionClient) -> None:
    answer = send_raw(app_session, "GET", "/dashboard")
    assert answer.status == 404
