"""In-memory tests of log escaping (docs/architecture.md, "Hostile input, limits and timeouts")."""

from __future__ import annotations

import datetime
from types import SimpleNamespace

import pytest
from gunicorn.config import Config

from llmts.schema.wire_values import one_of
from llmts.server.log_text import EscapingLogger, log_text


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


def test_one_of_is_false_for_unhashable_values() -> None:
    names = frozenset({"user", "assistant"})
    assert one_of("user", names)
    assert not one_of("tool", names)
    for value in ({}, [], None, 1, 1.5, True, {"user": 1}, ["user"]):
        assert not one_of(value, names)
