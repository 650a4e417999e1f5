"""The header block of an HTTP/1.1 request, read straight off the connection.

gevent's pywsgi reads a request's headers with ``http.client.parse_headers``, which runs the whole
``email`` package parser per request: about a seventh of the server's CPU on a small chat request
(docs/architecture.md, "The server's hot path"). HTTP/1.1 header fields need none of that: one line per
field, ``name: value``. :func:`read_header_fields` reads them with the same bounds (65,536 bytes a line,
100 fields) and rejects what RFC 9112 says a server must reject (obsolete line folding, a space before
the colon, a name with characters outside ``token``) instead of guessing. :class:`HeaderFields` is the
small part of ``http.client.HTTPMessage`` that pywsgi and gunicorn read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Any

__all__ = [
    "MAX_HEADER_FIELDS",
    "MAX_HEADER_LINE",
    "HeaderFields",
    "environ_key",
    "header_fields_from",
    "read_header_block",
    "read_header_fields",
]

MAX_HEADER_LINE = 65_536  # http.client's _MAXLINE
MAX_HEADER_FIELDS = 100  # http.client's _MAXHEADERS

# RFC 9110 ``token``: what a field name may be made of.
_FIELD_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
# Every name of a block at once, joined by newlines (which no name can hold).
_FIELD_NAMES = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+(?:\n[!#$%&'*+\-.^_`|~0-9A-Za-z]+)*")
_LINE_TOO_LONG = "Line too long"


class HeaderFields:
    """A request's header fields in arrival order, looked up case-insensitively (first value wins,
    as ``email.message.Message.get``); ``status`` is non-empty when the block was rejected."""

    __slots__ = ("_first", "fields", "status")

    def __init__(self, fields: list[tuple[str, str]], status: str = "") -> None:
        self.fields = fields
        self.status = status
        first: dict[str, str] = {}
        for name, value in fields:
            first.setdefault(name.lower(), value)
        self._first = first

    def get(self, name: str, default: str | None = None) -> str | None:
        return self._first.get(name.lower(), default)

    getheader = get

    @property
    def typeheader(self) -> str | None:
        return self._first.get("content-type")

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._first

    def __delitem__(self, name: str) -> None:
        key = name.lower()
        if self._first.pop(key, None) is None:
            raise KeyError(name)
        self.fields = [(n, v) for n, v in self.fields if n.lower() != key]

    def items(self) -> list[tuple[str, str]]:
        return list(self.fields)

    @property
    def headers(self) -> Iterator[str]:
        """The raw lines, as gevent's ``OldMessage.headers`` yields them."""
        for name, value in self.fields:
            yield f"{name}: {value}\r\n"


def read_header_fields(readline: Callable[[int], bytes]) -> HeaderFields:
    """Read header lines up to the empty line that ends them.

    Raises ``ValueError`` for a malformed field (the server answers 400); a line longer than
    ``MAX_HEADER_LINE`` gives an empty block whose ``status`` says so (gevent's own convention).
    """
    fields: list[tuple[str, str]] = []
    while True:
        line = readline(MAX_HEADER_LINE + 1)
        if len(line) > MAX_HEADER_LINE:
            return HeaderFields([], _LINE_TOO_LONG)
        if line in (b"\r\n", b"\n", b""):
            return HeaderFields(fields)
        if len(fields) >= MAX_HEADER_FIELDS:
            raise ValueError(f"got more than {MAX_HEADER_FIELDS} headers")
        text = line.decode("latin-1")
        name, colon, value = text.partition(":")
        if not colon or _FIELD_NAME.fullmatch(name) is None:
            # Obsolete line folding (a line starting with a space), a space before the colon, a line with
            # no colon: RFC 9112 section 5 has servers reject these rather than guess at a meaning.
            raise ValueError("malformed header line")
        fields.append((name, value.strip(" \t\r\n")))


def read_header_block(rfile: Any) -> HeaderFields:
    """:func:`read_header_fields` from a buffered reader, in one pass when it can be: the block is already
    in the buffer (a request's head usually arrives in one packet), ends with an empty line, and every
    line is ``token: value`` ended by CRLF with no other CR or LF. Anything else (bare LF line ends,
    folding, a malformed line, too many fields, a block still arriving) is read line by line with the
    same rules, so both ways answer alike (a property test compares them)."""
    data: bytes = rfile.peek(0)  # what is buffered; one read of the socket when nothing is
    end = data.find(b"\r\n\r\n")
    if end <= 0:
        return read_header_fields(rfile.readline)
    fields = header_fields_from(data[:end].decode("latin-1"))
    if fields is None:
        return read_header_fields(rfile.readline)
    rfile.read(end + 4)
    return fields


def header_fields_from(text: str) -> HeaderFields | None:
    """The fields of a whole header block's text (its lines joined by CRLF, without the empty line that
    ends it) when every line is ``token: value`` with no other CR or LF; None when the line-by-line
    reader must judge the block (it rejects or reads what this does not take)."""
    if not text:
        return HeaderFields([])
    lines = text.split("\r\n")
    separators = len(lines) - 1
    if len(lines) > MAX_HEADER_FIELDS or text.count("\n") != separators or text.count("\r") != separators:
        return None
    fields: list[tuple[str, str]] = []
    for line in lines:
        name, colon, value = line.partition(":")
        if not colon:
            return None
        fields.append((name, value.strip(" \t")))
    if _FIELD_NAMES.fullmatch("\n".join([name for name, _ in fields])) is None:
        return None
    return HeaderFields(fields)


@lru_cache(maxsize=512)  # a client inventing header names only churns the cache
def environ_key(name: str) -> str | None:
    """The WSGI environ key of a header field (``HTTP_`` + upper case, ``-`` to ``_``); None for
    Content-Type/-Length (they have their own keys) and for names with ``_`` (dropped, as gevent does, so
    that ``X_Forwarded`` cannot pose as ``X-Forwarded``)."""
    if "_" in name or name.lower() in ("content-type", "content-length"):
        return None
    return "HTTP_" + name.upper().replace("-", "_")
