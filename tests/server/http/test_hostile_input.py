"""Regression tests over raw sockets for hostile input that used to reach a 500, a traceback or a forged
log line (docs/architecture.md, "Hostile input, limits and timeouts")."""

from __future__ import annotations

import base64
import http.client
import json
import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from llmts import ConfigBuilder, LlmTestServer
from tests.helpers import OPENAI_CHAT_PATH
from tests.support.servers import BackgroundStops

_KEY = "hostile-control-key"


@pytest.fixture(scope="module")
def server(background_stops: BackgroundStops) -> Iterator[LlmTestServer]:
    """A dedicated server (its log is read here), access log on as users run it."""
    fixtures = ConfigBuilder().scenario(terminal_policy="repeat_last_response").text("ok").build()
    started = LlmTestServer.start(control_key=_KEY, fixtures=fixtures)
    yield started
    background_stops.stop(started)


def _exchange(
    server: LlmTestServer, data: bytes, *, half_close: bool = True
) -> tuple[int, dict[str, str], bytes]:
    """Send raw bytes on a fresh connection; return status, headers and body of the answer."""
    port = int(server.url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(data)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in header_lines)}
    return int(status_line.split()[1]), headers, body


def _request(method: str, path: str, *headers: str, body: bytes = b"") -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", "Connection: close", *headers]
    if body or method == "POST":
        lines.append(f"Content-Length: {len(body)}")
    return "\r\n".join(lines).encode("utf-8") + b"\r\n\r\n" + body


def _log_after(server: LlmTestServer, action: Callable[[], Any], settle: float = 0.3) -> tuple[Any, str]:
    """Run ``action`` and return its result with what the server logged meanwhile."""
    assert server.log_path is not None
    offset = server.log_path.stat().st_size
    result = action()
    time.sleep(settle)  # the access-log line is written after the answer
    with open(server.log_path, "rb") as log:
        log.seek(offset)
        return result, log.read().decode("utf-8", "replace")


def _assert_clean(log: str) -> None:
    assert "Traceback" not in log and "unhandled error" not in log and "Error" not in log, log


# --- "//" in a routed path ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "envelope"),
    [
        ("/openai/v1//chat/completions", "openai"),
        ("/openai//v1/models", "openai"),
        ("/anthropic/v1//messages", "anthropic"),
        ("/gemini/v1beta/models//gemini-2.5-flash:generateContent", "gemini"),
        ("/sessions/default/openai/v1//chat/completions", "openai"),
        ("/admin-api//sessions", "control"),
        ("//openai/v1/models", "control"),
        ("//health", "control"),
    ],
)
def test_double_slash_is_a_404_in_the_right_envelope(server: LlmTestServer, path: str, envelope: str) -> None:
    body = b'{"model": "gpt-4.1-mini", "messages": [{"role": "user", "content": "Hi"}]}'
    (status, _, answer), log = _log_after(
        server, lambda: _exchange(server, _request("POST", path, f"Authorization: Bearer {_KEY}", body=body))
    )
    assert status == 404
    payload = json.loads(answer)
    if envelope == "control":
        assert payload["error"]["code"] == "not_found" and isinstance(payload["error"]["details"], list)
    elif envelope == "anthropic":
        assert payload["type"] == "error" and payload["error"]["type"] == "not_found_error"
    elif envelope == "gemini":
        assert payload["error"]["code"] == 404 and payload["error"]["status"] == "NOT_FOUND"
    else:
        assert payload["error"]["code"] == "not_found" and payload["error"]["type"] == "invalid_request_error"
    _assert_clean(log)


# --- client text in log lines -------------------------------------------------------------------------


def test_client_text_never_writes_a_log_line(server: LlmTestServer) -> None:
    basic = base64.b64encode(b"user\nFORGED basic:pw").decode()
    requests = [
        _request("GET", "/openai/v1/models%0aFORGED%20path"),
        _request("GET", "/x%0d%0aFORGED%20crlf//y"),
        _request("GET", "/health", f"Authorization: Basic {basic}"),
        # U+009B is CSI, an 8-bit terminal escape: it arrives as obs-text bytes, which HTTP allows.
        _request("GET", "/health", 'User-Agent: a"\u009b[2J\u00e9FORGED', 'Referer: "x" "y"'),
        _request("GET", "/openai/v1/models", "Authorization: Bearer \u00e9\u2028FORGED"),
    ]
    _, log = _log_after(server, lambda: [_exchange(server, data) for data in requests])
    lines = log.splitlines()
    assert len(lines) == len(requests), lines  # one access-log line each, nothing else
    for line in lines:
        assert not line.startswith("FORGED"), line
        assert all(" " <= char <= "~" for char in line), repr(line)
        # the default format quotes request line, referer and user agent: exactly six quotes survive
        assert line.count('"') - line.count('\\"') == 6, line
    assert "user\\x0aFORGED basic" in log  # escaped, not dropped
    assert "\\xc2\\x9b[2J\\xc3\\xa9FORGED" in log


@pytest.mark.parametrize("control", ["\x1b", "\x7f", "\x00"])
def test_a_control_character_in_a_header_value_is_refused(server: LlmTestServer, control: str) -> None:
    """RFC 9110 5.5: CTLs are not field text (ESC, DEL: terminal escapes); llhttp refuses them."""
    data = _request("GET", "/health", f"User-Agent: a{control}[2JFORGED")
    (status, headers, body), log = _log_after(server, lambda: _exchange(server, data))
    assert status == 400 and headers["connection"] == "close"
    assert json.loads(body)["error"]["code"] == "malformed_http_request"
    assert "FORGED" not in log and '"- - -" 400' in log
    _assert_clean(log)


# --- objects and arrays where a string belongs ----------------------------------------------------------

_RESPONSES = "/openai/v1/responses"
_GEMINI = "/gemini/v1beta/models/gemini-2.5-flash:generateContent"
_GEMINI_TEXT = [{"role": "user", "parts": [{"text": "Hi"}]}]


@pytest.mark.parametrize(
    ("path", "body", "param"),
    [
        (OPENAI_CHAT_PATH, {"model": "m", "messages": [{"role": {}, "content": "x"}]}, "messages[0].role"),
        (
            OPENAI_CHAT_PATH,
            {"model": "m", "messages": [{"role": "user", "content": "x"}], "tools": [{"type": {}}]},
            None,
        ),
        (_RESPONSES, {"model": "m", "input": [{"role": [], "content": "x"}]}, "input[0].role"),
        (_RESPONSES, {"model": "m", "input": [{"type": {}, "content": "x"}]}, "input[0].type"),
        (_RESPONSES, {"model": "m", "input": "x", "include": [{}]}, "include[0]"),
        (
            _RESPONSES,
            {"model": "m", "input": "x", "tools": [{"type": "web_search", "search_context_size": {}}]},
            "tools[0].search_context_size",
        ),
        (
            _RESPONSES,
            {
                "model": "m",
                "input": "x",
                "tools": [
                    {"type": "file_search", "vector_store_ids": ["vs"], "ranking_options": {"ranker": []}}
                ],
            },
            "tools[0].ranking_options.ranker",
        ),
        (
            _RESPONSES,
            {
                "model": "m",
                "input": "x",
                "tools": [{"type": "file_search", "vector_store_ids": ["vs"], "filters": {"type": {}}}],
            },
            None,
        ),
        (
            _GEMINI,
            {"contents": _GEMINI_TEXT, "toolConfig": {"functionCallingConfig": {"mode": {}}}},
            "toolConfig.functionCallingConfig.mode",
        ),
    ],
)
def test_unhashable_value_where_a_string_belongs_is_a_400(
    server: LlmTestServer, path: str, body: dict[str, Any], param: str | None
) -> None:
    data = _request("POST", path, "Content-Type: application/json", body=json.dumps(body).encode())
    (status, _, answer), log = _log_after(server, lambda: _exchange(server, data))
    assert status == 400, answer
    error = json.loads(answer)["error"]
    if path.startswith("/gemini"):
        assert error["status"] == "INVALID_ARGUMENT"
        violations = [d for d in error["details"] if d["@type"].endswith("BadRequest")]
        assert violations[0]["fieldViolations"][0]["field"] == param
    else:
        assert error["type"] == "invalid_request_error"
        if param is not None:
            assert error["param"] == param
    _assert_clean(log)


# --- non-ASCII credentials ----------------------------------------------------------------------------


def test_non_ascii_credential_is_a_401_on_control_routes(server: LlmTestServer) -> None:
    data = _request("GET", "/admin-api/sessions", "Authorization: Bearer \u00e9")
    (status, _, answer), log = _log_after(server, lambda: _exchange(server, data))
    assert status == 401
    assert json.loads(answer)["error"]["code"] == "unauthorized"
    _assert_clean(log)


def test_non_ascii_credential_is_a_401_on_provider_routes(server: LlmTestServer) -> None:
    session = server.create_session()
    session.configure(ConfigBuilder().credentials(openai="sk-right").scenario().text("x").build())
    body = b'{"model": "gpt-4.1-mini", "messages": [{"role": "user", "content": "Hi"}]}'
    data = _request(
        "POST", f"/sessions/{session.id}{OPENAI_CHAT_PATH}", "Authorization: Bearer sk-\u00e9", body=body
    )
    (status, _, answer), log = _log_after(server, lambda: _exchange(server, data))
    assert status == 401
    assert json.loads(answer)["error"]["code"] == "invalid_api_key"
    # without session credentials a non-ASCII key is only compared with the control key: no error
    data = _request("POST", OPENAI_CHAT_PATH, "Authorization: Bearer \u00e9", body=body)
    status, _, answer = _exchange(server, data)
    assert status == 200, answer
    _assert_clean(log)


# --- malformed HTTP the HTTP server rejects itself ----------------------------------------------------


@pytest.mark.parametrize(
    ("data", "status", "code"),
    [
        (b"GET /health HTTP/1.1\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(101)) + b"\r\n", 400, None),
        (b"GET /health HTTP/1.1\r\nContent-Length: abc\r\n\r\n", 400, None),
        (b"GET /" + b"a" * 8200 + b" HTTP/1.1\r\n\r\n", 414, "request_line_too_long"),
        (b"GET /a%0aFORGED HTTP/1.1 x\r\n\r\n", 400, None),
    ],
)
def test_malformed_http_gets_a_small_json_error_and_one_log_line(
    server: LlmTestServer, data: bytes, status: int, code: str | None
) -> None:
    (got, headers, body), log = _log_after(server, lambda: _exchange(server, data))
    assert got == status
    assert headers["content-type"] == "application/json" and len(body) < 200
    error = json.loads(body)["error"]
    assert error["code"] == (code or "malformed_http_request") and error["details"] == []
    _assert_clean(log)
    assert "AttributeError" not in log
    assert not any(line.startswith("FORGED") for line in log.splitlines()), log
    assert '"- - -" ' + str(status) in log  # still one access-log line for it


def test_a_client_leaving_mid_body_logs_no_error(server: LlmTestServer) -> None:
    def leave() -> None:
        port = int(server.url.rsplit(":", 1)[1])
        for path in (OPENAI_CHAT_PATH, "/admin-api/configure"):
            with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
                head = _request("POST", path, f"Authorization: Bearer {_KEY}", body=b"x" * 100)
                sock.sendall(head[: -100 + 9])  # 9 of its 100 body bytes, then gone
                time.sleep(0.1)

    _, log = _log_after(server, leave)
    _assert_clean(log)
    assert server.health()


def test_broken_chunked_framing_is_a_400_in_the_providers_envelope(server: LlmTestServer) -> None:
    data = (
        b"POST /anthropic/v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"zz\r\n{}\r\n0\r\n\r\n"
    )
    (status, headers, body), log = _log_after(server, lambda: _exchange(server, data))
    assert status == 400 and headers.get("connection") == "close"
    payload = json.loads(body)
    assert payload["type"] == "error" and payload["error"]["code"] == "invalid_request"
    _assert_clean(log)


# --- session selection on control routes (docs/server.md) ----------------------------------------------


def test_control_route_with_a_differing_session_header_is_a_conflict(server: LlmTestServer) -> None:
    session = server.create_session()
    data = _request(
        "POST",
        f"/sessions/{session.id}/admin-api/reset",
        f"Authorization: Bearer {_KEY}",
        "X-Llm-Test-Server-Session: default",
    )
    status, _, body = _exchange(server, data)
    assert status == 400
    assert json.loads(body)["error"]["code"] == "llm_test_server_session_conflict"


def test_head_answers_carry_no_body_so_keep_alive_stays_in_step(server: LlmTestServer) -> None:
    """Found by the deep fuzz: a HEAD answer with a body desynchronised the next answer on the connection."""
    port = int(server.url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        for path in ("/openai/v1/models", "/gemini//models/", "/health"):
            sock.sendall(f"HEAD {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
            head = http.client.HTTPResponse(sock, method="HEAD")
            head.begin()
            assert head.read() == b"" and head.status in (200, 404)
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        after = http.client.HTTPResponse(sock, method="GET")
        after.begin()
        assert after.status == 200 and json.loads(after.read()) == {"status": "ok"}


# --- credentials never reach a log line -----------------------------------------------------------------

_SECRET = "AIzaSyTOPSECRETvalue0123456789"


def _secret_requests() -> list[bytes]:
    gemini = "/gemini/v1beta/models/gemini-2.5-flash:generateContent"
    body = json.dumps({"contents": _GEMINI_TEXT}).encode()
    return [
        _request("POST", f"{gemini}?key={_SECRET}", "Content-Type: application/json", body=body),
        _request("POST", f"{gemini}?alt=sse&KEY={_SECRET}", "Content-Type: application/json", body=body),
        _request("GET", f"/openai/v1/models?api-key={_SECRET}&api-version=2024-10-21"),
        _request("GET", "/health", f"Referer: https://app.example/page?access_token={_SECRET}"),
        _request("GET", f"/x?X-Amz-Signature={_SECRET}&X-Amz-Date=20260101T000000Z"),
        f"GET /bad?key={_SECRET} HTTP/9.9\r\nHost: 127.0.0.1\r\n\r\n".encode(),  # malformed: llmts's own note
    ]


def test_credentials_in_the_query_are_redacted_in_every_log_line(server: LlmTestServer) -> None:
    answers, log = _log_after(server, lambda: [_exchange(server, data) for data in _secret_requests()])

    assert answers[0][0] == 200 and answers[1][0] == 200  # the key still works; only the log forgets it
    assert _SECRET not in log, log
    assert log.count("[redacted]") == 6, log
    assert "api-version=2024-10-21" in log and "X-Amz-Date=20260101T000000Z" in log  # the rest is kept


def test_json_logs_redact_credentials_too(own_server_factory: Callable[..., LlmTestServer]) -> None:
    json_server = own_server_factory(extra_args=["--log-format", "json"])

    _, log = _log_after(json_server, lambda: [_exchange(json_server, data) for data in _secret_requests()])

    assert _SECRET not in log, log
    records = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    paths = [record["path"] for record in records if record.get("type") == "access" and record["path"]]
    assert any(path.endswith("?key=[redacted]") for path in paths), paths
    assert any("access_token=[redacted]" in (record.get("referer") or "") for record in records)
