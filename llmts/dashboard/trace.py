"""A test's trace file (docs/dashboard.md, "Trace files"): ONE self-contained HTML page that shows a
session's export (``llmts.client.trace_export.collect_trace_export``) through the dashboard's own views,
with no server and no network.

The page is the dashboard's own ``index.html`` with its stylesheet inlined, its ES modules bundled into
one inline module script (``bundle.py``), the export embedded as JSON (every ``<``, ``>`` and ``&``
escaped, so request content can never end the script element), and a Content Security Policy that lets
only that script and that style run and allows no fetch at all. ``api.js`` sees the embedded export and
answers every call from it (``trace_source.js``).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import html
import json
import os
import re
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from llmts.dashboard import TRACE_DATA_ID, TRACE_FORMAT
from llmts.dashboard.bundle import BundleError, bundle_modules

__all__ = ["TRACE_FORMAT", "BundleError", "read_trace", "render_trace", "write_trace"]

_DATA_ID = TRACE_DATA_ID
_DATA_OPEN = f'<script type="application/json" id="{_DATA_ID}">'
# index.html's references to the dashboard's files, each replaced by the file's contents.
_STYLESHEET = re.compile(r'<link rel="stylesheet" href="/dashboard/static/([\w/-]+\.css)">')
_SCRIPT = re.compile(r'<script type="module" src="/dashboard/static/([\w/-]+\.js)"></script>')
_TITLE = re.compile(r"<title>[^<]*</title>")
_CHARSET = '<meta charset="utf-8">'
# Whatever else index.html points at must stay inside the page: a fragment or a data: URL.
_REFERENCE = re.compile(r"""\b(?:src|href|action|srcset|poster)\s*=\s*["']?([^"'\s>]*)""", re.IGNORECASE)
_INLINE_SAFE = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})


def _read_static(name: str) -> str:
    """One of the dashboard's files by its path under ``static/`` (``OSError`` when there is none)."""
    file = resources.files("llmts.dashboard") / "static"
    for part in name.split("/"):
        file = file / part
    if not file.is_file():
        raise FileNotFoundError(f"no file static/{name} in llmts.dashboard")
    return file.read_text(encoding="utf-8")


def _only(pattern: re.Pattern[str], page: str, what: str) -> re.Match[str]:
    found = list(pattern.finditer(page))
    if len(found) != 1:
        raise BundleError(f"index.html must have exactly one {what} (found {len(found)}): {pattern.pattern}")
    return found[0]


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def _data_json(export: dict[str, Any]) -> str:
    """The export as JSON text that is safe inside a script element: ``</script>``, ``<!--`` and the like
    cannot occur (every ``<``, ``>`` and ``&`` is a ``\\u`` escape, which ``JSON.parse`` reads back)."""
    # default=str: a caller's test description may hold a value JSON has no type for (shown as its text).
    text = json.dumps(export, ensure_ascii=True, allow_nan=False, separators=(",", ":"), default=str)
    return text.translate(_INLINE_SAFE)


def _names(export: dict[str, Any]) -> tuple[str, str]:
    """(what the trace is of, its outcome) for the page's title."""
    test = export.get("test") or {}
    session = export.get("session") or {}
    subject = test.get("nodeid") or session.get("label") or session.get("id") or "a session"
    outcome = test.get("outcome") or session.get("test_outcome") or "no outcome"
    return str(subject), str(outcome)


@dataclass(frozen=True)
class _Page:
    """The parts of a trace page that do not depend on the export."""

    page: str
    stylesheet: str  # index.html's stylesheet link, and below what replaces each tag
    script: str
    old_title: str
    css: str
    code: str
    policy: str


@functools.lru_cache(maxsize=1)
def _page() -> _Page:
    """index.html, its stylesheet and its bundled modules, checked and hashed once per process: the
    dashboard's files do not change while a test run writes its traces (a bundle costs ~150 ms)."""
    page = _read_static("index.html")
    stylesheet = _only(_STYLESHEET, page, "stylesheet link")
    script = _only(_SCRIPT, page, "module script")
    old_title = _only(_TITLE, page, "title").group(0)
    if page.count(_CHARSET) != 1:
        raise BundleError(f"index.html must start its head with {_CHARSET}")
    rest = page.replace(stylesheet.group(0), "").replace(script.group(0), "")
    for reference in _REFERENCE.finditer(rest):
        if not reference.group(1).startswith(("#", "data:")):
            raise BundleError(f"index.html refers to {reference.group(1)!r}, which a trace file cannot load")
    if re.search(r"<(script|iframe|object|embed|base|style)\b", rest, re.IGNORECASE):
        raise BundleError("index.html has an element a trace file does not know how to inline")

    css = _read_static(stylesheet.group(1))
    if "</style" in css.lower():
        raise BundleError(f"{stylesheet.group(1)} contains '</style', which would end the inline style early")
    code = bundle_modules(_read_static, script.group(1))
    policy = (
        f"default-src 'none'; script-src '{_sha256(code)}'; style-src '{_sha256(css)}'; img-src data:; "
        "connect-src 'none'; base-uri 'none'; form-action 'none'"
    )
    return _Page(page, stylesheet.group(0), script.group(0), old_title, css, code, policy)


def render_trace(export: dict[str, Any]) -> str:
    """The trace file's HTML for ``export`` (``collect_trace_export``'s dict, format ``llmts-trace/1``).
    Raises ``ValueError`` for another format and ``BundleError`` when the dashboard's files use a
    construct the bundler does not understand."""
    if export.get("format") != TRACE_FORMAT:
        raise ValueError(f"not a trace export: format {export.get('format')!r}, expected {TRACE_FORMAT!r}")
    parts = _page()
    subject, outcome = _names(export)
    # The policy is hashes and keywords only: nothing in it needs escaping in the attribute.
    head = (
        f'{_CHARSET}\n<meta http-equiv="Content-Security-Policy" content="{parts.policy}">\n'
        f'<meta name="llmts-trace" content="{TRACE_FORMAT}">'
    )
    title = f"<title>{html.escape(f'{outcome}: {subject} · llmts trace')}</title>"
    inline = f'{_DATA_OPEN}{_data_json(export)}</script>\n<script type="module">{parts.code}</script>'
    # Literal replacements (str.replace, not re.sub: the inlined text holds backslashes).
    page = parts.page.replace(_CHARSET, head, 1)
    page = page.replace(parts.old_title, title, 1)
    page = page.replace(parts.stylesheet, f"<style>{parts.css}</style>", 1)
    return page.replace(parts.script, inline, 1)


def write_trace(path: str | os.PathLike[str], export: dict[str, Any]) -> Path:
    """Render ``export`` into the file ``path`` (its folder made if missing) and return the path. The file
    appears whole or not at all (written beside it, then renamed), so parallel workers and readers never
    see half a trace."""
    target = Path(path)
    text = render_trace(export)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        os.chmod(temporary, 0o644)  # as an ordinary file (mkstemp makes it private)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target


def read_trace(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The export a trace file embeds (``ValueError`` when the file is not an llmts trace)."""
    text = Path(path).read_text(encoding="utf-8")
    start = text.find(_DATA_OPEN)
    end = text.find("</script>", start)
    if start < 0 or end < 0:
        raise ValueError(f"{path} is not an llmts trace file (no {_DATA_ID} element)")
    export = json.loads(text[start + len(_DATA_OPEN) : end])
    if not isinstance(export, dict) or export.get("format") != TRACE_FORMAT:
        raise ValueError(f"{path} is not an {TRACE_FORMAT} trace file")
    return export
