"""In-memory tests of log escaping (docs/architecture.md, "Hostile input, limits and timeouts")."""

from __future__ import annotations

import datetime
from types import SimpleNamespace

import pytest
from gunicorn.config import Config

from llmts.schema.wire_values import one_of
from llmts.server.http.log_text import EscapingLogger, log_text, redact


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("/openai/v1/models", "/openai/v1/models"),
        ("/a\nFORGED", "/a\\x0aFORGED"),
        ("a\r\nb", "a\\x0d\\x0ab"),
        ("\x1b[2J\x7f", "\\x1b[2J\\x7f"),
        ("caf\u00e9 \u2028 \U0001f600", "caf\\xe9 \\u2028 \\U0001f600"),
        ("back\\slash", "back\\x5cslash"),
        ("", ""),
    ],
)
def test_log_text_keeps_printable_ascii_and_escapes_the_rest(raw: str, shown: str) -> None:
    assert log_text(raw) == shown
    assert all(" " <= char <= "~" for char in log_text(raw))


def test_log_text_accepts_any_object() -> None:
    assert log_text(("127.0.0.1", 80)) == "('127.0.0.1', 80)"


def test_access_log_atoms_are_escaped_and_quotes_cannot_close_a_field() -> None:
    logger = EscapingLogger(Config())
    environ = {
        "REQUEST_METHOD": "GET",
        "RAW_URI": '/x"y',
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_USER_AGENT": 'ua"\nFORGED',
        "HTTP_AUTHORIZATION": "Basic dQpGT1JHRUQ6cHc=",  # user "u\nFORGED"
    }
    response = SimpleNamespace(status="200 OK", headers=[], sent=10)
    atoms = logger.atoms_wrapper_class(logger.atoms(response, [], environ, datetime.timedelta(0)))
    line = logger.cfg.access_log_format % atoms
    assert "\n" not in line
    assert '"GET /x\\x22y HTTP/1.1"' in line
    assert '"ua\\x22\\x0aFORGED"' in line
    assert " u\\x0aFORGED " in line
    assert line.count('"') == 6


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("GET /m:generateContent?key=AIza1 HTTP/1.1", "GET /m:generateContent?key=[redacted] HTTP/1.1"),
        ("/x?api-version=2024&api-key=abc&y=1", "/x?api-version=2024&api-key=[redacted]&y=1"),
        ("/p?KEY=1;Access_Token=2#f", "/p?KEY=[redacted];Access_Token=[redacted]#f"),
        (
            "/s?X-Amz-Signature=a&X-Amz-Credential=b&X-Amz-Date=1",
            "/s?X-Amz-Signature=[redacted]&X-Amz-Credential=[redacted]&X-Amz-Date=1",
        ),
        ("key=s&alt=sse", "key=[redacted]&alt=sse"),  # a bare query string (gunicorn's %(q)s atom)
        ("/x?monkey=1&keys=2&sig=3", "/x?monkey=1&keys=2&sig=[redacted]"),  # whole names only
        ("/models/key=1", "/models/key=1"),  # not a query parameter
        ("/no/query", "/no/query"),
    ],
)
def test_redact_hides_credential_query_parameters_only(raw: str, shown: str) -> None:
    assert redact(raw) == shown
    assert log_text(raw) == shown


def test_custom_access_log_formats_redact_credential_headers_and_queries() -> None:
    """gunicorn's own logger (a custom ``access_log_format``) shows ``[redacted]`` for credential headers
    and query parameters, whatever atom the format names."""
    config = Config()
    config.set("accesslog", "-")
    config.set(
        "access_log_format",
        '%(r)s %(q)s %(f)s "%({authorization}i)s" "%({x-goog-api-key}i)s" "%({x-trace}i)s" %(s)s '
        '"%({set-cookie}o)s"',
    )
    logger = EscapingLogger(config)
    environ = {
        "REQUEST_METHOD": "GET",
        "RAW_URI": "/v1beta/models?key=AIzaSECRET",
        "QUERY_STRING": "key=AIzaSECRET",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_REFERER": "https://app.example/?access_token=SECRET2",
        "HTTP_AUTHORIZATION": "Bearer sk-SECRET3",
        "HTTP_X_GOOG_API_KEY": "AIzaSECRET4",
        "HTTP_X_TRACE": "kept",
    }
    response = SimpleNamespace(
        status="200 OK", headers=[("Set-Cookie", "llmts_dashboard=SECRET5; HttpOnly")], sent=10
    )
    request_headers = [
        ("AUTHORIZATION", "Bearer sk-SECRET3"),
        ("X-GOOG-API-KEY", "AIzaSECRET4"),
        ("X-TRACE", "kept"),
    ]
    atoms = logger.atoms_wrapper_class(
        logger.atoms(response, request_headers, environ, datetime.timedelta(0))
    )
    line = logger.cfg.access_log_format % atoms

    assert "SECRET" not in line, line
    assert line.count("[redacted]") == 6 and '"kept"' in line, line


def test_one_of_is_false_for_unhashable_values() -> None:
    names = frozenset({"user", "assistant"})
    assert one_of("user", names)
    assert not one_of("tool", names)
    for value in ({}, [], None, 1, 1.5, True, {"user": 1}, ["user"]):
        assert not one_of(value, names)
