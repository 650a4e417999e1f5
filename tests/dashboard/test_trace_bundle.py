"""The trace file's machinery without a browser (docs/dashboard.md, "Trace files"): the bundler turns every
dashboard module into one script and refuses what it does not understand, and the embedded export can
never end its script element early. The browser side is tests/dashboard/test_trace_browser.py."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from llmts.dashboard.bundle import BundleError, bundle_modules
from llmts.dashboard.js_tokens import tokenize
from llmts.dashboard.trace import TRACE_FORMAT, read_trace, render_trace, write_trace
from llmts.schema.journal import QUERY_TEXT_CHARS, JournalQuery

STATIC = Path(__file__).resolve().parents[2] / "llmts" / "dashboard" / "static"
MODULES = sorted(path.relative_to(STATIC).as_posix() for path in STATIC.rglob("*.js"))
# Statements only: a line that starts with import/export (the bundle keeps comments and strings as written).
STATEMENT = re.compile(r"^\s*(import|export)\b[\s{*]", re.MULTILINE)


def _reader(files: dict[str, str]) -> Any:
    def read(name: str) -> str:
        if name not in files:
            raise FileNotFoundError(name)
        return files[name]

    return read


def _static(name: str) -> str:
    return (STATIC / name).read_text(encoding="utf-8")


def _export(**changes: Any) -> dict[str, Any]:
    export: dict[str, Any] = {
        "format": TRACE_FORMAT,
        "created_at": "2026-01-01T00:00:00Z",
        "server_url": "http://127.0.0.1:1",
        "test": {"nodeid": "tests/test_app.py::test_weather", "outcome": "failed"},
        "session": {"id": "ses_" + "0" * 32, "label": "tests/test_app.py::test_weather"},
        "configured": False,
        "configuration": {},
        "queues": [],
        "conversations": [],
        "requests": [],
        "total_observed": 0,
        "evicted_count": 0,
        "verification": None,
        "expectation": None,
    }
    export.update(changes)
    return export


def _scripts(page: str) -> list[str]:
    """The text of every script element, as an HTML parser ends each (at the first ``</script``)."""
    return re.findall(r"<script[^>]*>(.*?)</script", page, re.DOTALL | re.IGNORECASE)


@pytest.mark.parametrize("entry", MODULES)
def test_every_dashboard_module_bundles_with_no_import_or_export_left(entry: str) -> None:
    bundled = bundle_modules(_static, entry)
    assert f"// --- {entry} ---" in bundled
    assert STATEMENT.findall(bundled) == []
    # What remains is plain script: the tokenizer reads it whole, and no import/export statement is left.
    names = [token.text for token in tokenize(bundled, "bundle") if token.kind == "name"]
    assert "export" not in names


def test_the_page_bundles_every_module_of_the_dashboard_once() -> None:
    bundled = bundle_modules(_static, "app.js")
    headers = re.findall(r"^// --- (.+) ---$", bundled, re.MULTILINE)
    assert sorted(headers) == MODULES  # app.js reaches every module; none twice
    assert headers[-1] == "app.js" and headers.index("dom.js") < headers.index("views/journal.js")
    # app.js's top-level await stays at the top level of an async scope.
    assert "const __llmts_module_" in bundled and "await (async () => {" in bundled


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to parse the bundle as a module")
def test_the_bundle_parses_as_an_es_module(tmp_path: Path) -> None:
    target = tmp_path / "bundle.mjs"
    target.write_text(bundle_modules(_static, "app.js"))
    checked = subprocess.run(["node", "--check", str(target)], capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stderr


def test_imports_become_destructurings_and_exports_are_collected() -> None:
    files = {
        "main.js": 'import { a, b as c } from "./lib/x.js";\nconst top = await Promise.resolve(a + c());\n',
        "lib/x.js": (
            "// export function fake() in a comment, and in a string: 'export const no = 1;'\n"
            'export const a = `import { z } from "./nope.js"; ${1 + 1}`;\n'
            "export async function b() { return /export\\/[}{]/.source; }\n"
            "export class K {}\nexport let d = 1;\nconst o = { import: 1, export: 2 };\n"
        ),
    }
    bundled = bundle_modules(_reader(files), "main.js")
    assert "const { a, b: c } = __llmts_module_0;" in bundled
    assert "return Object.freeze({ a, b, K, d });" in bundled
    assert "export function fake() in a comment" in bundled  # comments, strings and regexes untouched
    assert "'export const no = 1;'" in bundled and '`import { z } from "./nope.js"; ${1 + 1}`' in bundled
    assert bundled.index("lib/x.js ---") < bundled.index("main.js ---")


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ('import x from "./lib.js";\n', "only named imports"),
        ('import * as lib from "./lib.js";\n', "only named imports"),
        ('import "./lib.js";\n', "only named imports"),
        ('import { f } from "https://cdn.example/lib.js";\n', "only relative .js paths"),
        ('import { f } from "./lib.mjs";\n', "only relative .js paths"),
        ('import { f } from "../outside.js";\n', "leaves the dashboard's folder"),
        ('import { f } from "./lib.js"\nf();\n', "must end with ';'"),
        ('import { default as f } from "./lib.js";\n', "'default' is not supported"),
        ('import { missing } from "./lib.js";\n', "does not export it"),
        ('f();\nimport { f } from "./lib.js";\n', "must come before every other statement"),
        ("export default function main() {}\n", "only export function"),
        ("const a = 1;\nexport { a };\n", "only export function"),
        ('export { f } from "./lib.js";\n', "only export function"),
        ('export * from "./lib.js";\n', "only export function"),
        ("export var a = 1;\n", "only export function"),
        ("export const a = 1, b = 2;\n", "one declaration per export"),
        ("export const { a } = {};\n", "must name one binding"),
        ("export function* gen() {}\n", "must name one binding"),
        ("export let n = 1;\nfunction bump() { n += 1; }\n", "live bindings are not supported"),
        ("export let n = 1;\nn++;\n", "live bindings are not supported"),
        ('async function load() { return import("./lib.js"); }\n', "unsupported use of 'import'"),
        ("const where = import.meta.url;\n", "unsupported use of 'import'"),
        ("const __llmts_module_0 = 1;\n", "reserved for the bundle"),
        ("const s = 'never closed;\n", "unterminated string"),
        ("const t = `never closed;\n", "unterminated template"),
        ("function f() {\n", "unclosed"),
        ('const s = "</script><script>alert(1)";\n', "would end the inline script early"),
        ('const s = "<!-- hidden";\n', "would end the inline script early"),
    ],
)
def test_a_construct_the_bundler_does_not_understand_raises(source: str, message: str) -> None:
    files = {"main.js": source, "lib.js": "export function f() {}\n"}
    with pytest.raises(BundleError, match=re.escape(message)):
        bundle_modules(_reader(files), "main.js")


def test_import_cycles_and_missing_modules_raise() -> None:
    cycle = {
        "a.js": 'import { b } from "./b.js";\nexport function a() { return b; }\n',
        "b.js": 'import { a } from "./a.js";\nexport function b() { return a; }\n',
    }
    with pytest.raises(BundleError, match=re.escape("import cycle a.js -> b.js -> a.js")):
        bundle_modules(_reader(cycle), "a.js")
    with pytest.raises(BundleError, match=re.escape("a.js imports gone.js, which cannot be read")):
        bundle_modules(_reader({"a.js": 'import { x } from "./gone.js";\n'}), "a.js")


def test_a_bundler_error_names_the_module_and_line() -> None:
    files = {"views/x.js": "const a = 1;\n\nexport default a;\n"}
    with pytest.raises(BundleError, match=r"^views/x\.js:3: "):
        bundle_modules(_reader(files), "views/x.js")


HOSTILE = [
    "</script><script>window.__xss=1</script>",
    "</SCRIPT >",
    "<!-- <script>",
    "]]> & &amp; <b>",
    "\u2028\u2029 \ud83d\ude00",
]


def test_request_content_cannot_break_out_of_the_embedded_json(tmp_path: Path) -> None:
    entry = {"sequence": 1, "request_id": "req_1", "request_preview": json.dumps({"messages": HOSTILE})}
    export = _export(requests=[entry], test={"nodeid": "t.py::test[</script>]", "longrepr": "<!--"})
    page = render_trace(export)
    scripts = _scripts(page)
    assert len(scripts) == 2  # the data and the module: nothing in the data ended its element
    data, code = scripts
    assert "<" not in data and ">" not in data and "&" not in data
    assert json.loads(data) == export
    assert "window.__xss" not in code
    written = write_trace(tmp_path / "deeper" / "trace.html", export)
    assert read_trace(written) == export
    assert written.stat().st_mode & 0o777 == 0o644
    assert [p.name for p in written.parent.iterdir()] == ["trace.html"]  # no temporary left behind


def test_the_page_is_self_contained_with_a_csp_that_allows_only_its_own_script_and_style() -> None:
    page = render_trace(_export(test={"nodeid": "tests/t.py::test_a[<b>]", "outcome": "failed"}))
    assert "<title>failed: tests/t.py::test_a[&lt;b&gt;] · llmts trace</title>" in page
    assert f'<meta name="llmts-trace" content="{TRACE_FORMAT}">' in page
    assert "/dashboard/static/" not in page and '<link rel="stylesheet"' not in page
    assert re.findall(r"\b(?:src|href)=\"([^\"]*)\"", page.split("<style>")[0]) == ["data:,"]
    (policy,) = re.findall(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
    assert directives["default-src"] == "'none'" and directives["connect-src"] == "'none'"
    assert directives["img-src"] == "data:"
    code = _scripts(page)[1]
    style = page.split("<style>", 1)[1].split("</style>", 1)[0]
    for directive, text in (("script-src", code), ("style-src", style)):
        import base64
        import hashlib

        digest = base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()
        assert directives[directive] == f"'sha256-{digest}'"
    assert page.index("Content-Security-Policy") < page.index("<style>")  # the policy comes first


def test_render_refuses_what_is_not_a_trace_export(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a trace export"):
        render_trace({"format": "something else"})
    (tmp_path / "page.html").write_text("<html></html>")
    with pytest.raises(ValueError, match="not an llmts trace file"):
        read_trace(tmp_path / "page.html")


def _js_names(source: str, table: str) -> set[str]:
    """The names a constant of a dashboard module lists: an array's strings or an object's keys."""
    body = source.split(f"const {table} = ", 1)[1]
    if body.startswith("["):
        return set(re.findall(r'"([a-z0-9_]+)"', body[: body.index("]")]))
    return set(re.findall(r"^\s*([a-z0-9_]+):", body[: body.index("}")], re.MULTILINE))


def test_the_trace_source_knows_every_parameter_of_the_journal_query() -> None:
    """trace_source.js answers GET /admin-api/requests from a trace's entries (docs/dashboard.md, "Trace
    files"): every parameter of ``JournalQuery`` is one it parses, or a trace would silently ignore it
    (the browser test compares the answers for the queries it asks)."""
    source = _static("trace_source.js")
    known = _js_names(source, "EXACT") | _js_names(source, "TOOL_RESULTS") | _js_names(source, "PAGING")
    parameters = {field.alias or name for name, field in JournalQuery.model_fields.items()}
    assert known == parameters
    assert f"const QUERY_TEXT_CHARS = {QUERY_TEXT_CHARS};" in source
    fields = JournalQuery.model_fields
    connection_chars = next(
        m.max_length for m in fields["realtime_connection"].metadata if hasattr(m, "max_length")
    )
    assert f"const CONNECTION_CHARS = {connection_chars};" in source
    page_limit = next(m.le for m in fields["limit"].metadata if hasattr(m, "le"))
    assert f"export const QUERY_PAGE_LIMIT = {page_limit};" in source
