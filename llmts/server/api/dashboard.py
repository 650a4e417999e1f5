"""The dashboard at ``/dashboard``: static ES modules shipped in the wheel, plus the login cookie.

The page is a client of the public control API and of nothing else (docs/dashboard.md): this module only
serves its files, and turns the control key typed once into a random login token (``ControlAuth``'s,
revoked by logout) in an HttpOnly, SameSite=Strict cookie that the control API accepts in place of
``Authorization: Bearer`` (together with the dashboard's own header, which makes every cookie-authorized
request a CORS-preflighted one: see docs/architecture.md, "The dashboard").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from importlib import resources
from typing import Any

import orjson

from llmts.errors import ControlUnauthorized, InvalidRequest, LlmtsError, MethodNotAllowed, RouteNotFound
from llmts.server.api.auth import ControlAuth
from llmts.server.http.wsgi import StartResponse, control_error, read_body, send

__all__ = [
    "DASHBOARD_COOKIE",
    "DASHBOARD_HEADER_ENVIRON",
    "Dashboard",
    "cookie_authorizes",
]

DASHBOARD_COOKIE = "llmts_dashboard"
# Every request the dashboard makes carries ``X-Llm-Test-Server-Dashboard: 1``; a cookie without it
# authorizes nothing (a cross-origin page cannot add it without a CORS preflight llmts never grants).
DASHBOARD_HEADER_ENVIRON = "HTTP_X_LLM_TEST_SERVER_DASHBOARD"
_STATIC_PACKAGE = "llmts.dashboard"
_STATIC_DIR = "static"
_CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
# Strict: only this origin's files, no inline script or style, no framing, fetches to this origin only.
_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
_SECURITY_HEADERS = [
    ("Content-Security-Policy", _CSP),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    ("X-Frame-Options", "DENY"),
    ("Cross-Origin-Opener-Policy", "same-origin"),
    ("Cross-Origin-Resource-Policy", "same-origin"),
    ("Cache-Control", "no-cache"),
]
_MAX_LOGIN_BODY = 16 * 1024


def _same_origin(environ: Mapping[str, Any]) -> bool:
    """A browser's ``Origin``, when it sends one, must name this server (host and port)."""
    origin = environ.get("HTTP_ORIGIN")
    if origin is None:
        return True
    host = str(environ.get("HTTP_HOST", ""))
    _, _, rest = str(origin).partition("://")
    return bool(host) and rest == host


def cookie_authorizes(environ: Mapping[str, Any], valid: Callable[[str], bool]) -> bool:
    """The request carries a dashboard cookie ``valid`` accepts, the dashboard header, and no foreign
    Origin."""
    if environ.get(DASHBOARD_HEADER_ENVIRON) != "1" or not _same_origin(environ):
        return False
    return any(valid(value) for value in _cookie_values(str(environ.get("HTTP_COOKIE", ""))))


def _cookie_values(header: str) -> list[str]:
    """Every value of the dashboard cookie in a ``Cookie`` header. Parsed by hand: the token is plain hex,
    and werkzeug's parser raises on bytes that are not UTF-8, which any client may send."""
    values = []
    for part in header.split(";"):
        name, separator, value = part.strip().partition("=")
        if separator and name == DASHBOARD_COOKIE:
            values.append(value.strip())
    return values


def _load_files() -> dict[str, tuple[str, bytes]]:
    root = resources.files(_STATIC_PACKAGE) / _STATIC_DIR
    files: dict[str, tuple[str, bytes]] = {}
    pending = [("", root)]
    while pending:
        prefix, folder = pending.pop()
        for item in folder.iterdir():
            if item.is_dir():
                pending.append((f"{prefix}{item.name}/", item))
                continue
            suffix = "." + item.name.rpartition(".")[2]
            if suffix in _CONTENT_TYPES:
                files[prefix + item.name] = (_CONTENT_TYPES[suffix], item.read_bytes())
    return files


class Dashboard:
    """The page and its files (``GET /dashboard``, ``/dashboard/static/...``), login and logout."""

    def __init__(self, auth: ControlAuth, body_timeout: float | None = None) -> None:
        self._auth = auth
        self._body_timeout = body_timeout
        # Read on the first request for one: most servers never show the dashboard.
        self._files: dict[str, tuple[str, bytes]] | None = None

    def __call__(
        self, environ: Mapping[str, Any], start_response: StartResponse, path: str
    ) -> Iterable[bytes]:
        method = environ["REQUEST_METHOD"]
        try:
            if path in ("/dashboard", "/dashboard/"):
                return self._file(start_response, method, "index.html")
            if path.startswith("/dashboard/static/"):
                return self._file(start_response, method, path[len("/dashboard/static/") :])
            if path == "/dashboard/login":
                if method in ("GET", "HEAD"):
                    return self._login_state(environ, start_response)
                return self._login(environ, start_response, method)
            if path == "/dashboard/logout":
                return self._logout(environ, start_response, method)
            raise RouteNotFound(f"no dashboard route {path}")
        except LlmtsError as error:
            return control_error(start_response, error)

    def _file(self, start_response: StartResponse, method: str, name: str) -> Iterable[bytes]:
        if method not in ("GET", "HEAD"):
            raise MethodNotAllowed(f"{method} is not allowed on the dashboard's files")
        if self._files is None:
            self._files = _load_files()
        found = self._files.get(name)
        if found is None:
            raise RouteNotFound(f"the dashboard has no file {name}")
        content_type, body = found
        headers = [("Content-Type", content_type), *_SECURITY_HEADERS]
        if method == "HEAD":
            start_response("200 OK", [*headers, ("Content-Length", str(len(body)))])
            return []
        return send(start_response, 200, headers, body)

    def _check_post(self, environ: Mapping[str, Any], method: str) -> None:
        if method != "POST":
            raise MethodNotAllowed(f"{method} is not allowed here; POST")
        if environ.get(DASHBOARD_HEADER_ENVIRON) != "1" or not _same_origin(environ):
            raise ControlUnauthorized(
                "dashboard logins come from the dashboard page (X-Llm-Test-Server-Dashboard: 1)"
            )

    def _login(
        self, environ: Mapping[str, Any], start_response: StartResponse, method: str
    ) -> Iterable[bytes]:
        self._check_post(environ, method)
        body = read_body(environ, _MAX_LOGIN_BODY, self._body_timeout)
        try:
            data = orjson.loads(body)
        except orjson.JSONDecodeError:
            data = None
        key = data.get("key") if isinstance(data, dict) else None
        if not isinstance(key, str):
            raise InvalidRequest(
                'the body must be {"key": "<control key>"}',
                code="invalid_request",
                details=[{"path": "key", "message": "expected a string"}],
            )
        auth = self._auth
        if not auth.key_required:
            return send(start_response, 204, list(_SECURITY_HEADERS), b"")
        if not auth.key_matches(environ, key):  # 429 while this address is locked out
            raise ControlUnauthorized("that is not this server's control key")
        token = auth.tokens.issue()
        return send(start_response, 204, [*_SECURITY_HEADERS, self._cookie(environ, token)], b"")

    def _login_state(self, environ: Mapping[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        """Whether this server has a control key, and whether this browser is logged in (the page shows
        "Log out" only then). Holds no data: it needs no key."""
        auth = self._auth
        required = auth.key_required
        logged_in = not required or cookie_authorizes(environ, auth.tokens.valid)
        body = orjson.dumps({"key_required": required, "logged_in": logged_in})
        headers = [("Content-Type", "application/json"), *_SECURITY_HEADERS]
        if environ["REQUEST_METHOD"] == "HEAD":
            start_response("200 OK", [*headers, ("Content-Length", str(len(body)))])
            return []
        return send(start_response, 200, headers, body)

    def _logout(
        self, environ: Mapping[str, Any], start_response: StartResponse, method: str
    ) -> Iterable[bytes]:
        self._check_post(environ, method)
        # Revoked here, so a copy of the cookie stops working too, not only the browser's.
        for value in _cookie_values(str(environ.get("HTTP_COOKIE", ""))):
            self._auth.tokens.revoke(value)
        return send(start_response, 204, [*_SECURITY_HEADERS, self._cookie(environ, "", expire=True)], b"")

    @staticmethod
    def _cookie(environ: Mapping[str, Any], value: str, *, expire: bool = False) -> tuple[str, str]:
        # Path=/ so it reaches /admin-api; no Max-Age: it lasts for the browser session.
        parts = [f"{DASHBOARD_COOKIE}={value}", "Path=/", "HttpOnly", "SameSite=Strict"]
        if environ.get("wsgi.url_scheme") == "https":
            parts.append("Secure")
        if expire:
            parts.append("Max-Age=0")
        return ("Set-Cookie", "; ".join(parts))
