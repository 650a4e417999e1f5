"""llmts's gunicorn workers: gevent's pywsgi (default) and gunicorn's own ``gevent``, both with the
request-head/keep-alive deadlines and the graceful stop of server/connections.py.

Malformed HTTP (docs/architecture.md, "Hostile input, limits and timeouts"): under pywsgi, a request gevent
rejects before the app runs (bad request line, more than 100 headers, ``Content-Length: abc``, a request
line over 8 KiB, broken chunked framing) gets a small JSON error in the control envelope instead of
gevent's bare text, one escaped log line instead of a traceback, and an access-log line instead of an
``AttributeError`` from gunicorn's access logger (which expects an environ that was never built).

With ``--no-access-log`` the pywsgi handler also skips gunicorn's per-request access-log bookkeeping:
``PyWSGIHandler.log_request`` builds datetimes, a response record and the request header list for every
request before its logger discovers that access logging is off; that is pure overhead on the hot path
(a few microseconds of ~150).
"""

from __future__ import annotations

from typing import Any

import orjson
from gunicorn.workers.ggevent import GeventPyWSGIWorker, GeventWorker, PyWSGIHandler

from llmts.errors import LlmtsError, MalformedHttp, RequestLineTooLong
from llmts.server.connections import GracefulWorker, HeadDeadlineHandler
from llmts.server.http import status_line
from llmts.server.log_text import log_text

__all__ = ["LlmtsGeventWorker", "LlmtsPyWSGIHandler", "LlmtsPyWSGIWorker"]


def _error_response(error: LlmtsError) -> bytes:
    """A whole HTTP response (status line, headers, body) for a request the app never saw."""
    body = orjson.dumps(error.to_control_body())
    head = (
        f"HTTP/1.1 {status_line(error.http_status)}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


_MALFORMED = MalformedHttp("the HTTP request is malformed (request line, headers or framing)")
_REJECTIONS = {
    "400": _error_response(_MALFORMED),
    "414": _error_response(RequestLineTooLong("the request line is longer than 8 KiB")),
}
_INTERNAL = LlmtsError(
    "llmts hit an internal error; see the server log", code="llm_test_server_internal_error"
)
# Environ of a request rejected before gevent built one: what the access log shows for it.
_NO_REQUEST = {"REQUEST_METHOD": "-", "RAW_URI": "-", "SERVER_PROTOCOL": "-", "QUERY_STRING": ""}


class LlmtsPyWSGIHandler(PyWSGIHandler):  # type: ignore[misc]
    """gunicorn's pywsgi handler; malformed HTTP answered in JSON, logged in one escaped line."""

    environ: dict[str, Any] | None
    response_headers: list[tuple[str, str]] | None

    # --- malformed HTTP (rejected before the app) --------------------------------------------------

    def handle_one_request(self) -> Any:
        # A keep-alive connection reuses this handler: forget the previous request, so a rejected one
        # is never logged under its predecessor's method, path or headers.
        self.environ = None
        self.response_headers = None
        self.__dict__.pop("headers", None)
        result = super().handle_one_request()
        if isinstance(result, tuple):  # gevent's bare-text (status, response) for what it cannot parse
            status = result[0]
            response = _REJECTIONS.get(status, _REJECTIONS["400"])
            self.response_length = len(response)
            return status, response
        return result

    def _handle_client_error(self, ex: BaseException) -> tuple[str, bytes]:
        # gevent prints a traceback for parse errors that are not ValueErrors (more than 100 headers) and
        # logs the raw request text; one escaped line is all a client's mistake deserves.
        reason = str(ex) or type(ex).__name__
        self.server.error_log.write(
            f"llmts: rejected malformed HTTP from {log_text(self.client_address)}: {log_text(reason)}\n"
        )
        return "400", _REJECTIONS["400"]

    def _send_error_response_if_possible(self, error_code: int) -> None:
        if self.response_length:  # the app's answer is partly out: all that is left is to close
            self.close_connection = True
            return
        error = _MALFORMED if error_code < 500 else _INTERNAL
        body = orjson.dumps(error.to_control_body())
        headers = [
            ("Content-Type", "application/json"),
            ("Content-Length", str(len(body))),
            ("Connection", "close"),
        ]
        try:
            self.start_response(status_line(error.http_status), headers)
            self.write(body)
        except OSError:
            self.close_connection = True

    def log_request(self) -> None:
        if self.environ is None:  # rejected before gevent built an environ: log it without one
            self.environ = {**_NO_REQUEST, "REMOTE_ADDR": _remote_addr(self.client_address)}
        if self.response_headers is None:
            self.response_headers = []
        super().log_request()

    # --- HEAD: headers only ------------------------------------------------------------------------

    # gevent's pywsgi writes whatever the app returns even for HEAD (gunicorn's own parser does not);
    # on a kept-alive connection the client would read those bytes as the start of the next response.

    def finalize_headers(self) -> None:
        super().finalize_headers()
        if self.command == "HEAD":
            self.response_use_chunked = False  # no chunk framing either: a HEAD answer has no body

    def write(self, data: bytes) -> None:
        super().write(b"" if self.command == "HEAD" else data)


def _remote_addr(address: Any) -> str:
    return str(address[0]) if isinstance(address, tuple) and address else "-"


class _Handler(HeadDeadlineHandler, LlmtsPyWSGIHandler):
    pass


class _UnloggedHandler(_Handler):
    def log_request(self) -> None:
        return None


class LlmtsPyWSGIWorker(GracefulWorker, GeventPyWSGIWorker):  # type: ignore[misc]
    wsgi_handler = _Handler

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not self.cfg.accesslog:
            self.wsgi_handler = _UnloggedHandler


class LlmtsGeventWorker(GracefulWorker, GeventWorker):  # type: ignore[misc]
    pass
