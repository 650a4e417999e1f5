"""The batched access log (docs/architecture.md, "The server's hot path"): in memory, beside gunicorn's."""

from __future__ import annotations

import base64
import datetime
import io
import re
from types import SimpleNamespace

import orjson
from gunicorn.config import Config
from hypothesis import given, settings
from hypothesis import strategies as st

from llmts.server.http.access_log import FLUSH_BYTES, AccessLog, basic_auth_user
from llmts.server.http.log_text import EscapingLogger

_STAMP = re.compile(r"\[\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4}\]")
_user_chars = st.characters(exclude_characters=":", exclude_categories=["Cs"])
_text = st.text(st.characters(codec="latin-1"), max_size=40)


def _gunicorn_line(
    method: str, path: str, user: str | None, status: str, sent: int, referer: str | None, agent: str | None
) -> str:
    logger = EscapingLogger(Config())
    environ = {
        "REQUEST_METHOD": method,
        "RAW_URI": path,
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "10.0.0.1",
    }
    if referer is not None:
        environ["HTTP_REFERER"] = referer
    if agent is not None:
        environ["HTTP_USER_AGENT"] = agent
    if user is not None:
        environ["HTTP_AUTHORIZATION"] = "Basic " + base64.b64encode(user.encode() + b":pw").decode()
    response = SimpleNamespace(status=f"{status} X", headers=[], sent=sent)
    atoms = logger.atoms_wrapper_class(logger.atoms(response, [], environ, datetime.timedelta(0)))
    return str(logger.cfg.access_log_format % atoms)


@settings(max_examples=300, deadline=None)
@given(
    method=st.sampled_from(["GET", "POST", 'G"E\nT']),
    path=_text,
    user=st.none()
    | st.text(st.characters(exclude_characters=":", exclude_categories=["Cs"]), min_size=1, max_size=12),
    referer=st.none() | _text.filter(bool),
    agent=st.none() | _text.filter(bool),
    sent=st.integers(0, 10**6),
)
def test_text_lines_are_gunicorns_default_format_escaped_the_same_way(
    method: str, path: str, user: str | None, referer: str | None, agent: str | None, sent: int
) -> None:
    access = AccessLog(lambda: [])
    authorization = None if user is None else "Basic " + base64.b64encode(user.encode() + b":pw").decode()
    ours = access.text_line(
        "10.0.0.1",
        basic_auth_user(authorization),
        f"{method} {path} HTTP/1.1",
        "200",
        sent,
        referer or "-",
        agent or "-",
        1_700_000_000.25,
    )
    theirs = _gunicorn_line(method, path, user, "200", sent, referer, agent)
    assert ours.endswith("\n") and ours.count("\n") == 1
    assert _STAMP.sub("T", ours[:-1]) == _STAMP.sub("T", theirs)
    assert all(" " <= char <= "~" for char in ours[:-1])


def test_json_lines_keep_client_text_on_one_line() -> None:
    line = AccessLog.json_line(
        "127.0.0.1", "-", 'POST /v1/x?a="b" HTTP/1.1', "201", 812, "-", "ua\nFORGED", 10.0, 10.0125
    )
    assert line.endswith("\n") and line.count("\n") == 1
    record = orjson.loads(line)
    assert record == {
        "time": "1970-01-01T00:00:10.000Z",
        "type": "access",
        "remote": "127.0.0.1",
        "user": None,
        "method": "POST",
        "path": '/v1/x?a="b"',
        "protocol": "HTTP/1.1",
        "status": 201,
        "bytes": 812,
        "duration_ms": 12.5,
        "referer": None,
        "user_agent": "ua\nFORGED",
    }


def test_lines_wait_in_the_buffer_until_a_flush_or_the_size_limit() -> None:
    out = io.StringIO()
    access = AccessLog(lambda: [out])
    access.request("127.0.0.1", "-", "GET /health HTTP/1.1", "200", 10, "-", "-", 1.0, 1.0)
    assert out.getvalue() == ""
    access.flush()
    assert out.getvalue().count("\n") == 1 and '"GET /health HTTP/1.1" 200 10 "-" "-"' in out.getvalue()
    long_path = "/" + "x" * 1000
    for _ in range(FLUSH_BYTES // 1000 + 1):  # passing FLUSH_BYTES writes without waiting for idle
        access.request("127.0.0.1", "-", f"GET {long_path} HTTP/1.1", "404", 1, "-", "-", 1.0, 1.0)
    assert out.getvalue().count("\n") > 60


def test_a_broken_stream_never_breaks_a_request() -> None:
    closed = io.StringIO()
    closed.close()
    good = io.StringIO()
    access = AccessLog(lambda: [closed, good])
    access.request("127.0.0.1", "-", "GET / HTTP/1.1", "200", 1, "-", "-", 1.0, 1.0)
    access.close()
    assert good.getvalue().count("\n") == 1


def test_basic_auth_user() -> None:
    assert basic_auth_user(None) == "-"
    assert basic_auth_user("Bearer sk-123") == "-"
    assert basic_auth_user("Basic " + base64.b64encode(b"alice:secret").decode()) == "alice"
    assert basic_auth_user("basic !!!not-base64") == "-"  # never raises
    assert basic_auth_user("Basic " + base64.b64encode(b"\xff\xfe:x").decode()) == "-"  # not UTF-8
