"""Reading a request's header block (docs/architecture.md, "The server's hot path")."""

from __future__ import annotations

import io
import socket
from types import SimpleNamespace

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmts import LlmTestServer
from llmts.server.http.pywsgi_handler import LlmtsPyWSGIHandler
from llmts.server.http.request_head import (
    MAX_HEADER_FIELDS,
    MAX_HEADER_LINE,
    HeaderFields,
    environ_key,
    read_header_block,
    read_header_fields,
)


def _read(raw: bytes) -> HeaderFields:
    return read_header_fields(io.BytesIO(raw).readline)


def test_fields_are_read_in_order_and_looked_up_case_insensitively() -> None:
    headers = _read(b"Host: a\r\nContent-Type:  application/json \r\nX-Dup: 1\r\nx-dup: 2\r\n\r\nbody")
    assert headers.fields == [
        ("Host", "a"),
        ("Content-Type", "application/json"),
        ("X-Dup", "1"),
        ("x-dup", "2"),
    ]
    assert headers.get("content-type") == headers.typeheader == "application/json"
    assert headers.get("X-DUP") == "1"  # the first value, as email.message.Message.get
    assert headers.get("missing", "d") == "d" and "host" in headers and headers.status == ""
    del headers["x-dup"]
    assert headers.get("x-dup") is None and len(headers.fields) == 2
    with pytest.raises(KeyError):
        del headers["x-dup"]
    assert list(headers.headers) == ["Host: a\r\n", "Content-Type: application/json\r\n"]


def test_bare_newlines_and_end_of_input_end_the_block() -> None:
    assert _read(b"A: 1\nB: 2\n\n").fields == [("A", "1"), ("B", "2")]
    assert _read(b"A: 1\r\n").fields == [("A", "1")]


@pytest.mark.parametrize(
    "raw",
    [
        b"A: 1\r\n continued\r\n\r\n",  # obsolete line folding
        b"A : 1\r\n\r\n",  # space before the colon
        b"no colon here\r\n\r\n",
        b"Bad\x01Name: 1\r\n\r\n",
        b": empty name\r\n\r\n",
    ],
)
def test_malformed_fields_are_rejected(raw: bytes) -> None:
    with pytest.raises(ValueError):
        _read(raw)


# Header lines of every kind the two readers must agree on: plain, tab- and space-padded, repeated,
# and each malformation (folding, space before the colon, no colon, bad or empty names, a stray CR inside
# a value, a bare LF line end).
_LINE = st.one_of(
    st.tuples(
        st.sampled_from(["Host", "X-Dup", "x-dup", "Content-Type", "A_B", "x" * 70]),
        st.text(st.characters(codec="latin-1", exclude_characters="\r\n"), max_size=30),
    ).map(lambda pair: f"{pair[0]}:{pair[1]}\r\n"),
    st.sampled_from(
        [
            "Host: a\r\n",
            "A:\t padded \t\r\n",
            " folded\r\n",
            "A : 1\r\n",
            "no colon\r\n",
            ": empty\r\n",
            "Bad\x01Name: 1\r\n",
            "A: cr\rinside\r\n",
            "Bare: lf\n",
        ]
    ),
)


def _outcome(reader: object, rest: io.BufferedReader) -> tuple[object, ...]:
    try:
        headers = reader()  # type: ignore[operator]
    except ValueError as error:
        return ("rejected", str(error))
    return (headers.fields, headers.status, rest.read())


@settings(max_examples=400, deadline=None, derandomize=True)
@given(
    lines=st.lists(_LINE, max_size=110),
    ending=st.sampled_from(["\r\n", "\n", ""]),
    body=st.sampled_from([b"", b"{}", b"\r\n\r\nX: y\r\n"]),
)
def test_the_one_pass_reader_answers_as_the_line_reader(lines: list[str], ending: str, body: bytes) -> None:
    raw = "".join(lines).encode("latin-1") + ending.encode() + body
    by_lines = io.BufferedReader(io.BytesIO(raw))
    in_one_pass = io.BufferedReader(io.BytesIO(raw))
    assert _outcome(lambda: read_header_block(in_one_pass), in_one_pass) == _outcome(
        lambda: read_header_fields(by_lines.readline), by_lines
    )


def test_the_one_pass_reader_takes_a_whole_block_and_leaves_the_body() -> None:
    reader = io.BufferedReader(io.BytesIO(b'Host: a\r\nX:\tb \r\n\r\n{"k": 1}'))
    assert read_header_block(reader).fields == [("Host", "a"), ("X", "b")]
    assert reader.read() == b'{"k": 1}'


def test_bounds_are_http_clients() -> None:
    many = b"".join(b"H%d: v\r\n" % i for i in range(MAX_HEADER_FIELDS)) + b"\r\n"
    assert len(_read(many).fields) == MAX_HEADER_FIELDS
    with pytest.raises(ValueError, match="more than 100 headers"):
        _read(b"X: y\r\n" + many)
    assert _read(b"A: " + b"x" * MAX_HEADER_LINE + b"\r\n\r\n").status == "Line too long"


def test_environ_keys() -> None:
    assert environ_key("X-Request-Id") == "HTTP_X_REQUEST_ID"
    assert environ_key("content-type") is None and environ_key("Content-Length") is None
    assert environ_key("X_Forwarded_For") is None  # could pose as X-Forwarded-For: dropped


def _exchange(server: LlmTestServer, raw: bytes) -> bytes:
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(raw)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_a_folded_header_gets_the_json_400_over_the_wire(llmts_server: LlmTestServer) -> None:
    answer = _exchange(llmts_server, b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: 1\r\n folded\r\n\r\n")
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 ") and b"Content-Type: application/json" in head
    assert orjson.loads(body)["error"]["code"]


def test_the_environ_follows_gevents_rules() -> None:
    """Repeated fields joined (cookies with "; "), names with "_" dropped, Content-Type/-Length under their
    own keys, the path unquoted, the raw target kept: built in memory from a parsed head."""
    handler = LlmtsPyWSGIHandler.__new__(LlmtsPyWSGIHandler)
    handler.server = SimpleNamespace(get_environ=dict, llmts_connections=None)
    handler.command, handler.path, handler.request_version = "POST", "/a%20b?x=1", "HTTP/1.1"
    handler.client_address = ("127.0.0.1", 5000)
    handler.rfile, handler.socket, handler.content_length = io.BytesIO(b""), None, 2
    handler.headers = _read(
        b"Content-Type: application/json\r\nContent-Length: 2\r\nX-A: 1\r\nx-a: 2\r\n"
        b"Cookie: a=1\r\nCookie: b=2\r\nX_Forged: evil\r\n\r\n"
    )

    env = handler.get_environ()

    assert (env["PATH_INFO"], env["QUERY_STRING"], env["RAW_URI"]) == ("/a b", "x=1", "/a%20b?x=1")
    assert (env["CONTENT_TYPE"], env["CONTENT_LENGTH"]) == ("application/json", "2")
    assert env["HTTP_X_A"] == "1,2" and env["HTTP_COOKIE"] == "a=1; b=2"
    assert "HTTP_X_FORGED" not in env and "HTTP_CONTENT_TYPE" not in env
    assert env["REMOTE_ADDR"] == "127.0.0.1" and env["wsgi.input_terminated"] is True


def test_a_request_through_the_new_reader_is_answered_with_one_date(llmts_server: LlmTestServer) -> None:
    body = orjson.dumps({"model": "gpt-4.1-mini", "messages": [{"role": "user", "content": "hi"}]})
    raw = (
        b"POST /openai/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer k\r\n"
        b"Content-Type: application/json\r\nConnection: close\r\n"
        b"Content-Length: %d\r\n\r\n" % len(body)
    ) + body
    answer = _exchange(llmts_server, raw)
    assert answer.startswith(b"HTTP/1.1 200 "), answer[:300]
    head = answer.partition(b"\r\n\r\n")[0].decode()
    assert head.count("Date: ") == 1 and "Content-Length: " in head
