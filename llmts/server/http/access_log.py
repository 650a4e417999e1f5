"""The access log: one line per request, formatted in place and written in batches.

gunicorn's access log builds a dict of some twenty atoms, two ``datetime`` objects and a ``logging``
record for every request, then takes the logging lock and writes one line: about 40 % of a small
request's CPU (docs/architecture.md, "The server's hot path"). This log writes the same line (gunicorn's
default format, so log readers keep working) from the handful of values it needs, escapes client text
only when a line holds any unsafe byte, caches the timestamp per second, and appends to a buffer. The
buffer is written when the worker has nothing else to do (an *idle* watcher of the event loop, started
only while lines wait), when it passes ``FLUSH_BYTES``, and when the worker stops: under load many lines
leave in one ``write``; on a quiet server each line leaves before the next request is read.

``--log-format json`` writes one JSON object per line instead (fields in :func:`AccessLog.json_line`).
"""

from __future__ import annotations

import base64
import logging
import re
import time
from collections.abc import Callable
from typing import IO, Any

import orjson

from llmts.server.http.log_text import log_text, redact

__all__ = ["FLUSH_BYTES", "GUNICORN_DEFAULT_FORMAT", "AccessLog", "access_streams", "basic_auth_user"]

# gunicorn's default ``access_log_format``; another format is left to gunicorn's own logger.
GUNICORN_DEFAULT_FORMAT = '%(h)s %(l)s %(u)s %(t)s "%(r)s" %(s)s %(b)s "%(f)s" "%(a)s"'
FLUSH_BYTES = 64 * 1024

# Inside a line: printable ASCII except '"' (it would close a quoted field) and '\' (escapes stay
# unambiguous). A line without any other byte is written as is; else each client field is escaped.
_UNSAFE_FIELD = re.compile(r"[^\x20\x21\x23-\x5b\x5d-\x7e]")


def _quoted_field(text: str) -> str:
    text = log_text(text)
    return text.replace('"', "\\x22") if '"' in text else text


def access_streams(logger: Any) -> list[IO[str]] | None:
    """The streams gunicorn's access logger writes to, or None when one of its handlers is not a plain
    stream or file (syslog, a custom ``logconfig``): then gunicorn's own logger stays in charge."""
    access_log = getattr(logger, "access_log", None)
    handlers = getattr(access_log, "handlers", None)
    if not handlers:
        return None
    streams: list[IO[str]] = []
    for handler in handlers:
        if type(handler) not in (logging.StreamHandler, logging.FileHandler):
            return None
        streams.append(handler.stream)
    return streams


class AccessLog:
    """One worker's access log: lines appended per request, written in batches."""

    def __init__(
        self,
        streams: Callable[[], list[IO[str]] | None],
        *,
        json_lines: bool = False,
        loop: Any = None,
    ) -> None:
        # ``streams`` is asked at every flush: gunicorn reopens its log files on SIGUSR1.
        self._streams = streams
        self._format = self.json_line if json_lines else self.text_line
        self._lines: list[str] = []
        self._size = 0
        self._idle = loop.idle() if loop is not None else None
        if self._idle is not None:
            self._idle.ref = False  # waiting lines never keep the worker alive
        self._second = -1
        self._stamp = ""

    # --- per request ------------------------------------------------------------------------------

    def request(
        self,
        remote: str,
        user: str,
        request_line: str,
        status: str,
        length: int,
        referer: str,
        agent: str,
        started: float,
        finished: float,
    ) -> None:
        """Append the line of one request (``request_line``: method, path as sent, protocol); credential
        query parameters of the path and the referer are redacted (server/http/log_text.py)."""
        line = self._format(
            remote, user, redact(request_line), status, length, redact(referer), agent, started, finished
        )
        self._lines.append(line)
        self._size += len(line)
        if self._size >= FLUSH_BYTES:
            self.flush()
        elif self._idle is not None and not self._idle.active:
            self._idle.start(self.flush)

    def text_line(
        self,
        remote: str,
        user: str,
        request_line: str,
        status: str,
        length: int,
        referer: str,
        agent: str,
        started: float,
        finished: float = 0.0,
    ) -> str:
        """gunicorn's default format ``h l u t "r" s b "f" "a"`` (``u``: the Basic-auth user or ``-``)."""
        if _UNSAFE_FIELD.search(remote + user + request_line + referer + agent) is None:
            return (
                f'{remote} - {user} {self._timestamp(started)} "{request_line}" {status} {length} '
                f'"{referer}" "{agent}"\n'
            )
        return (
            f"{log_text(remote)} - {_quoted_field(user)} {self._timestamp(started)} "
            f'"{_quoted_field(request_line)}" {status} {length} "{_quoted_field(referer)}" '
            f'"{_quoted_field(agent)}"\n'
        )

    @staticmethod
    def json_line(
        remote: str,
        user: str,
        request_line: str,
        status: str,
        length: int,
        referer: str,
        agent: str,
        started: float,
        finished: float,
    ) -> str:
        """One JSON object: ``time`` (UTC, ISO 8601), ``remote``, ``user``, ``method``, ``path``,
        ``protocol``, ``status``, ``bytes``, ``duration_ms``, ``referer``, ``user_agent``; JSON
        escaping keeps client text on one line."""
        method, _, rest = request_line.partition(" ")
        path, _, protocol = rest.rpartition(" ") if rest.count(" ") else (rest, "", "")
        record = {
            "time": _iso_time(started),
            "type": "access",
            "remote": remote,
            "user": None if user == "-" else user,
            "method": method,
            "path": path,
            "protocol": protocol,
            "status": int(status) if status.isdigit() else status,
            "bytes": length,
            "duration_ms": round((finished - started) * 1000, 3) if finished >= started else None,
            "referer": None if referer == "-" else referer,
            "user_agent": None if agent == "-" else agent,
        }
        return orjson.dumps(record).decode() + "\n"

    def _timestamp(self, when: float) -> str:
        second = int(when)
        if second != self._second:
            self._second = second
            self._stamp = time.strftime("[%d/%b/%Y:%H:%M:%S %z]", time.localtime(second))
        return self._stamp

    # --- batches ----------------------------------------------------------------------------------

    def flush(self) -> None:
        if self._idle is not None:
            self._idle.stop()
        if not self._lines:
            return
        text = "".join(self._lines)
        self._lines.clear()
        self._size = 0
        for stream in self._streams() or ():
            try:
                stream.write(text)
                stream.flush()
            except (OSError, ValueError):  # a closed or broken log stream must not break requests
                continue

    def close(self) -> None:
        self.flush()
        if self._idle is not None:
            self._idle.close()
            self._idle = None


def basic_auth_user(authorization: str | None) -> str:
    """The user name of a Basic ``Authorization`` header (gunicorn's ``u`` atom), else ``-``."""
    if not authorization or authorization[:6].lower() != "basic ":
        return "-"
    try:
        decoded = base64.b64decode(authorization[6:].strip(), validate=False)
        return decoded.split(b":", 1)[0].decode("utf-8") or "-"
    except (ValueError, UnicodeDecodeError):
        return "-"


def _iso_time(when: float) -> str:
    whole = int(when)
    millis = int((when - whole) * 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{millis:03d}Z"
