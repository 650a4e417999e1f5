"""Property-based fuzzing of the control API, ``/health``, session-prefixed control paths and malformed
HTTP against one real server (docs/contributing.md, "Fuzzing and soak")."""

from __future__ import annotations

import http.client
import json
import socket
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import strategies as st

from llmts.schema.journal import JournalQuery
from tests.fuzz import seeds
from tests.fuzz.harness import (
    BOUNDED,
    CONTROL_KEY,
    DEEP,
    DEEP_TIMEOUT,
    Answer,
    FuzzServer,
    check_request,
    fuzz_server,
    survive,
)
from tests.fuzz.strategies import (
    HEADER_NAMES,
    bodies,
    headers,
    methods,
    queries,
    routed_paths,
    session_prefixed,
)
from tests.support.control_routes import control_routes

__all__ = ["fuzz_server"]

# Every route of the control API (a new one joins by itself), the bodies of those that parse one.
_CONTROL_RULES = sorted({rule for _, rule in control_routes()})
_BODIES = {
    "/admin-api/configure": seeds.CONFIGURE,
    "/admin-api/match/explain": seeds.EXPLAIN,
    "/admin-api/verify": seeds.VERIFY,
}
_ROUTES: dict[str, list[dict[str, Any]]] = {
    **{rule: _BODIES.get(rule, [{}]) for rule in _CONTROL_RULES},
    "/dashboard": [{}],
    "/dashboard/static/app.js": [{}],
    "/dashboard/static/views/journal.js": [{}],
    "/dashboard/login": [{"key": CONTROL_KEY}, {"key": "wrong"}],
    "/dashboard/logout": [{}],
    "/health": [{}],
    "/": [{}],
}
# The journal's filters (every route that queries it), the export's format, the recording's pacing and the
# session list's filters.
_QUERY_NAMES = sorted(
    {field.alias or name for name, field in JournalQuery.model_fields.items()}
    | {"format", "pacing", "label", "label_contains", "test_outcome"}
)
_SESSIONS = ["default", "nope"]
# A journal time range whose bounds may be naive, zoned, reversed or broken (one naive and one zoned bound
# once compared into a 500).
_TIMES = ["2026-01-01T00:00:00", "2026-01-01T00:00:00Z", "2026-01-02T00:00:00+01:00", "2026-02-30T00:00Z", ""]
_TIME_RANGES = st.tuples(st.sampled_from(_TIMES), st.sampled_from(_TIMES)).map(
    lambda bounds: f"?from={quote(bounds[0])}&to={quote(bounds[1])}"
)


# The dashboard's login cookie and header (docs/dashboard.md, "Login"), forged, broken or missing.
_DASHBOARD_HEADERS = st.fixed_dictionaries(
    {},
    optional={
        "Cookie": st.sampled_from(["llmts_dashboard=" + "0" * 64, "llmts_dashboard=", "a=b; c", "=;;"])
        | st.text(st.characters(min_codepoint=0x20, max_codepoint=0xFF), max_size=40).map(
            lambda text: "llmts_dashboard=" + text
        ),
        "X-Llm-Test-Server-Dashboard": st.sampled_from(["1", "0", "true", ""]),
        "Origin": st.sampled_from(["http://evil.example", "null", "http://127.0.0.1", "not a url"]),
    },
)


def _requests() -> st.SearchStrategy[tuple[str, str, dict[str, str], bytes]]:
    rules = list(_ROUTES)
    paths = session_prefixed(routed_paths(rules, seeds.PATH_ARGUMENTS), _SESSIONS)
    with_key = headers(_SESSIONS, []).map(lambda extra: {"Authorization": f"Bearer {CONTROL_KEY}", **extra})
    without_key = st.tuples(headers(_SESSIONS, []), _DASHBOARD_HEADERS).map(
        lambda pair: {**pair[0], **pair[1]}
    )
    return st.tuples(
        methods(("GET", "POST", "PUT", "DELETE")),
        st.tuples(paths, st.one_of(queries(_QUERY_NAMES), _TIME_RANGES)).map("".join),
        st.one_of(with_key, with_key, with_key, headers(_SESSIONS, []), without_key),
        st.one_of(
            *(bodies(route_seeds) for route_seeds in _ROUTES.values() if route_seeds != [{}]), bodies([{}])
        ),
    )


def test_control_routes_survive_hostile_requests(fuzz_server: FuzzServer) -> None:
    survive(fuzz_server, _requests(), lambda r: check_request(fuzz_server, r, {}), BOUNDED, "control")


@pytest.mark.fuzz
@pytest.mark.timeout(DEEP_TIMEOUT)
def test_control_routes_survive_hostile_requests_deep(fuzz_server: FuzzServer) -> None:
    survive(fuzz_server, _requests(), lambda r: check_request(fuzz_server, r, {}), DEEP, "control")


# --- malformed HTTP: what the HTTP server itself parses --------------------------------------------

_TOKEN = st.binary(max_size=12).map(
    lambda raw: raw.replace(b" ", b"").replace(b"\r", b"").replace(b"\n", b"")
)
_LINE_BYTES = st.binary(max_size=40).map(lambda raw: raw.replace(b"\r", b"").replace(b"\n", b""))


@st.composite
def _malformed(draw: st.DrawFn) -> bytes:
    method = draw(st.sampled_from([b"GET", b"POST", b"DELETE"]) | _TOKEN.filter(bool))
    target = draw(
        st.sampled_from([b"/health", b"/openai/v1/chat/completions", b"/admin-api/sessions", b"*", b"//"])
        | _TOKEN.map(lambda raw: b"/" + raw)
    )
    version = draw(
        st.sampled_from([b"HTTP/1.1", b"HTTP/1.0", b"HTTP/2.0", b"HTTP/1.x", b"HTTP/", b"FOO/1.1"])
    )
    lines = [method + b" " + target + b" " + version]
    for _ in range(draw(st.integers(0, 4))):
        name = draw(st.sampled_from([name.encode() for name in HEADER_NAMES]) | _TOKEN)
        lines.append(name + b":" + draw(_LINE_BYTES))
    special = draw(
        st.sampled_from(
            [
                b"",
                b"Content-Length: abc",
                b"Content-Length: -1",
                b"Content-Length: 1e3",
                b"Content-Length: 5\r\nContent-Length: 7",
                b"Transfer-Encoding: chunked",
                b"Transfer-Encoding: chunked, gzip",
                b" folded-continuation",
                b"X-Many: 1\r\n" * 101,
                b"X-Long: " + b"a" * 66_000,
                b"Authorization: Bearer \xc3\xa9",
                b"Authorization: Basic dQpGT1JHRUQtTE9HLUxJTkU6cHc=",
            ]
        )
    )
    if special:
        lines.append(special.rstrip(b"\r\n"))
    body = draw(st.sampled_from([b"", b"{}", b"zz\r\n{}", b"5\r\n{}", b"0\r\n\r\n", b"2\r\n{}\r\n0\r\n\r\n"]))
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


def _send_once(server: FuzzServer, data: bytes) -> Answer | None:
    """One raw request on its own connection, our side shut for writing so nothing waits for more.
    None: the server answered and closed while we were still sending (the answer may be lost)."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        try:
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # rejected before the request was all sent: read what answer there is
        response = http.client.HTTPResponse(sock, method="HEAD" if data.startswith(b"HEAD ") else "GET")
        try:
            response.begin()
            body = response.read()
        except ConnectionResetError:
            return None
        return Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, body)


def _check_malformed(server: FuzzServer, data: bytes) -> None:
    answer = _send_once(server, data)
    lines = server.new_log_lines()
    if answer is None:
        server.assert_lines_clean(lines)
        return
    assert answer.status < 500, (answer.status, answer.body[:300], lines)
    if answer.status >= 400 and answer.body:
        error = json.loads(answer.body).get("error")
        assert isinstance(error, dict) and isinstance(error.get("message"), str), answer.body
    server.assert_lines_clean(lines)


def test_malformed_http_gets_json_and_no_traceback(fuzz_server: FuzzServer) -> None:
    survive(fuzz_server, _malformed(), lambda d: _check_malformed(fuzz_server, d), BOUNDED, "malformed HTTP")


@pytest.mark.fuzz
@pytest.mark.timeout(DEEP_TIMEOUT)
def test_malformed_http_gets_json_and_no_traceback_deep(fuzz_server: FuzzServer) -> None:
    survive(fuzz_server, _malformed(), lambda d: _check_malformed(fuzz_server, d), DEEP, "malformed HTTP")
