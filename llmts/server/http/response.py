"""The bytes of a response head, and the whole answers the server gives without the app.

``ResponseHead`` checks what the app passes to ``start_response`` (native strings, no CR or LF, latin-1,
a three-digit status, no body length on 204/304: PEP 3333 and RFC 9110) and encodes it in one pass,
noting the fields the server must know about (``Content-Length``, ``Date``, ``Connection``).
"""

from __future__ import annotations

import time
from collections.abc import Iterable

import orjson

from llmts.errors import LlmtsError
from llmts.server.http.wsgi import status_line

__all__ = ["HttpDate", "ResponseHead", "error_response"]


def error_response(error: LlmtsError, *, head_only: bool = False) -> bytes:
    """A whole HTTP/1.1 response in the control envelope, closing the connection (for a request the app
    never saw or could not answer)."""
    body = orjson.dumps(error.to_control_body())
    head = (
        f"HTTP/1.1 {status_line(error.http_status)}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode("ascii") + (b"" if head_only else body)


class HttpDate:
    """The ``Date`` header value, formatted once per second."""

    __slots__ = ("_second", "_value")

    _DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
    _MONTHS = ("", "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")

    def __init__(self) -> None:
        self._second = -1
        self._value = b""

    def now(self) -> bytes:
        second = int(time.time())
        if second != self._second:
            t = time.gmtime(second)
            text = (
                f"{self._DAYS[t.tm_wday]}, {t.tm_mday:02d} {self._MONTHS[t.tm_mon]} {t.tm_year:04d} "
                f"{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d} GMT"
            )
            self._value, self._second = text.encode("ascii"), second
        return self._value


class ResponseHead:
    """What ``start_response`` was given, checked and encoded: ``fields`` is the head's lines after the
    status line (each ``name: value\\r\\n``), to which the server adds its own before sending."""

    __slots__ = ("close", "code", "content_length", "date", "fields", "status")

    def __init__(self, status: object, headers: Iterable[tuple[object, object]]) -> None:
        # ``object``: what a WSGI app passes is checked here, as PEP 3333 asks, not assumed.
        if type(status) is not str or "\r" in status or "\n" in status:
            raise ValueError(f"the status must be a native string without CR or LF: {status!r}")
        code_text = status[:3]
        if len(status) < 4 or status[3] != " " or not (code_text.isascii() and code_text.isdigit()):
            raise ValueError(f"the status must be a three-digit code and a reason: {status!r}")
        fields = bytearray()
        self.content_length: str | None = None
        self.date = False
        self.close = False
        for name, value in headers:
            if type(name) is not str or type(value) is not str:
                raise ValueError(f"header names and values must be native strings: {name!r}: {value!r}")
            if "\r" in name or "\n" in name or "\r" in value or "\n" in value or ":" in name:
                raise ValueError(f"a header must not hold CR, LF (or a colon in its name): {name!r}")
            fields += name.encode("latin-1")
            fields += b": "
            fields += value.encode("latin-1")
            fields += b"\r\n"
            lower = name.lower()
            if lower == "content-length":
                self.content_length = value
            elif lower == "date":
                self.date = True
            elif lower == "connection":
                self.close = "close" in value.lower()
        self.code = int(code_text)
        if self.code in (204, 304) and self.content_length not in (None, "0"):
            raise ValueError(
                f"a {self.code} response has no body, so no Content-Length {self.content_length}"
            )
        self.status = status.encode("latin-1")
        self.fields = fields
