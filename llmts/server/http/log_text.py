"""Client-supplied text in log lines, escaped so that no request can write a log line of its own.

A percent-encoded newline in a path (``/x%0aforged``), a Basic-auth user name with a newline, a header
with a carriage return or terminal escape sequences: each would forge or hide log lines if logged
verbatim. Every log line that carries client text passes it through :func:`log_text`, which keeps
printable ASCII and writes everything else as ``\\xNN`` / ``\\uNNNN`` (nginx's access-log rule). The access
log does the same through :class:`EscapingLogger` (gunicorn's ``logger_class``), which escapes only the
atoms the log format actually uses, so the default access log costs no more than gunicorn's own.

Credentials never reach a log line either: :func:`redact` replaces the value of every query parameter that
carries one (Gemini's ``?key=``, ``api-key``, ``access_token``, a presigned AWS URL's ``X-Amz-Signature``...)
with ``[redacted]`` in paths and referers, and gunicorn's header atoms (``%({authorization}i)s`` in a custom
format) show ``[redacted]`` for credential headers. Both logs, text and JSON, go through them.
"""

from __future__ import annotations

import functools
import logging
import re
import time
from typing import Any

import orjson
from gunicorn.glogging import Logger, SafeAtoms

__all__ = ["REDACTED", "EscapingLogger", "JsonLogger", "log_text", "redact"]

REDACTED = "[redacted]"
# Query parameters that carry a credential, in any case (Gemini ``key``, Azure ``api-key``, OAuth
# ``access_token``, presigned AWS and Azure SAS signatures...). A parameter is matched by its name as sent.
_SECRET_QUERY = re.compile(
    r"(?i)((?:^|[?&;])(?:key|api[-_]?key|apikey|x-goog-api-key|access[-_]?token|id[-_]?token|token|"
    r"auth|authorization|client[-_]?secret|secret|password|passwd|sig|signature|"
    r"x-amz-(?:signature|credential|security-token))=)[^&;#\s\"]*"
)

# Printable ASCII except the backslash, which is escaped too so that an escape in the log is unambiguous.
_UNSAFE = re.compile(r"[^\x20-\x5b\x5d-\x7e]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def redact(text: str) -> str:
    """``text`` (a path with its query, a request line, a URL) with each credential parameter's value
    replaced by ``[redacted]``; text without ``=`` is returned as is (the hot path's case)."""
    if "=" not in text:
        return text
    return _SECRET_QUERY.sub(r"\1" + REDACTED, text)


def log_text(value: object) -> str:
    """``value`` as one line of printable ASCII (control, non-ASCII and ``\\`` characters escaped), its
    credential query parameters redacted."""
    text = redact(value if isinstance(value, str) else str(value))
    if _UNSAFE.search(text) is None:
        return text
    return _UNSAFE.sub(_escape, text)


def _access_text(text: str) -> str:
    # Inside the access log's quoted fields a '"' would end the field early: escape it as well.
    text = log_text(text)
    return text.replace('"', "\\x22") if '"' in text else text


@functools.cache
def _secret_headers() -> frozenset[str]:
    """Read on first use: the arbiter loads the logger classes, and the providers' declarations the set
    is made of are the worker's to import (the arbiter stays small: tests/test_layers.py)."""
    from llmts.catalog.credentials import SECRET_HEADERS

    return SECRET_HEADERS


class _EscapedAtoms(SafeAtoms):  # type: ignore[misc]
    """gunicorn's access-log atoms, escaped lazily: only the atoms the format names are looked at."""

    def __init__(self, atoms: dict[str, Any]) -> None:
        dict.__init__(self, atoms)  # skip SafeAtoms' eager '"' pass over every atom

    def __getitem__(self, key: str) -> Any:
        value = super().__getitem__(key)
        # ``{name}i``: a request header, ``{name}o``: a response header (the dashboard login's Set-Cookie).
        if (
            key[:1] == "{"
            and key[-2:] in ("}i", "}o")
            and value != "-"
            and key[1:-2].lower() in _secret_headers()
        ):
            return REDACTED
        return _access_text(value) if isinstance(value, str) else value


class EscapingLogger(Logger):  # type: ignore[misc]
    """gunicorn's logger whose access-log lines never carry raw client text."""

    atoms_wrapper_class = _EscapedAtoms
    json_lines = False


class _JsonFormatter(logging.Formatter):
    """An error-log record as one JSON object: ``time``, ``type`` (``log``), ``level``, ``pid``,
    ``message`` (and ``exception`` with the traceback text, when there is one)."""

    def format(self, record: logging.LogRecord) -> str:
        document: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "type": "log",
            "level": record.levelname.lower(),
            "pid": record.process,
            "message": record.getMessage(),
        }
        if record.exc_info:
            document["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(document).decode()


class JsonLogger(EscapingLogger):
    """``--log-format json``: error-log records and access-log lines (server/http/access_log.py) as JSON."""

    json_lines = True

    def setup(self, cfg: Any) -> None:
        super().setup(cfg)
        for handler in self.error_log.handlers:
            handler.setFormatter(_JsonFormatter())
