"""The trace bundler: the dashboard's own ES modules (``static/``) as ONE inline module script, so a trace
file (``trace.py``) runs the dashboard's own views with no server and no network.

Hand-written (docs/architecture.md, "The dashboard"): Python has no well-kept JavaScript bundler, and
esbuild, rollup and the like need a binary or a Node install. It only needs to understand the dashboard's
own module style, and it raises ``BundleError`` on anything else, so an edit of the dashboard that it
would misread breaks the trace tests instead of the traces. Its rules:

* Each module becomes one ``async`` function scope, run once, dependencies first (in import order, as
  ES modules evaluate), so top-level names never collide and top-level ``await`` keeps working.
* ``import { a, b as c } from "./x.js";`` (relative ``.js`` paths, before any other statement) becomes
  ``const { a, b: c } = <x's exports>;``; importing a name ``x.js`` does not export raises.
* ``export function|async function|class|const|let NAME`` loses ``export`` and ``NAME`` joins the
  module's frozen exports. One declaration per ``export const``/``let``; an exported ``let`` must never be
  assigned again (importers hold its value, not a live binding).
* Anything else raises: default, namespace or side-effect imports, ``export default``, ``export {...}``,
  re-exports, dynamic ``import()``, ``import.meta``, import cycles, and names starting ``__llmts_``
  (the bundle's own).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from llmts.dashboard.js_tokens import BundleError, Token, tokenize

__all__ = ["BundleError", "bundle_modules"]

_RESERVED_PREFIX = "__llmts_"
_SPECIFIER = re.compile(r"\.\.?/[\w./-]+\.js")
_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")
_NOT_BINDINGS = frozenset({"default", "as", "from", "import", "export", "await", "yield", "let", "static"})
_ASSIGNMENTS = frozenset(
    {"=", "+=", "-=", "*=", "/=", "%=", "**=", "<<=", ">>=", ">>>=", "&=", "|=", "^=", "&&=", "||=", "??="}
)
_UPDATES = frozenset({"++", "--"})


@dataclass(frozen=True, slots=True)
class _Import:
    target: str  # the imported module's path under static/
    names: tuple[tuple[str, str], ...]  # (exported name, local name)
    start: int
    end: int


@dataclass(slots=True)
class _Module:
    name: str
    source: str
    imports: list[_Import] = field(default_factory=list)
    exports: list[str] = field(default_factory=list)
    removals: list[tuple[int, int]] = field(default_factory=list)  # the ``export `` keywords to drop


class _Parser:
    """Finds one module's import and export statements among its tokens."""

    def __init__(self, name: str, source: str) -> None:
        self.module = _Module(name, source)
        self.tokens = tokenize(source, name)

    def fail(self, token: Token | None, message: str) -> BundleError:
        at = token.start if token is not None else len(self.module.source)
        line = self.module.source.count("\n", 0, at) + 1
        return BundleError(f"{self.module.name}:{line}: {message} (llmts/dashboard/bundle.py)")

    def token(self, index: int) -> Token | None:
        return self.tokens[index] if 0 <= index < len(self.tokens) else None

    def is_punct(self, index: int, *texts: str) -> bool:
        token = self.token(index)
        return token is not None and token.kind == "punct" and token.text in texts

    def is_name(self, index: int, *texts: str) -> bool:
        token = self.token(index)
        return token is not None and token.kind == "name" and (not texts or token.text in texts)

    def parse(self) -> _Module:
        for index, token in enumerate(self.tokens):
            if token.kind == "name" and token.text.startswith(_RESERVED_PREFIX):
                raise self.fail(token, f"the name {token.text} is reserved for the bundle's own use")
            if token.kind != "name" or token.text not in ("import", "export"):
                continue
            if self.is_punct(index - 1, ".", "?."):
                continue  # a property: ``something.import``
            if token.depth > 0 and self.is_punct(index + 1, ":"):
                continue  # an object's key: ``{ import: ... }``
            at_statement_start = token.depth == 0 and (index == 0 or self.is_punct(index - 1, ";", "}"))
            if not at_statement_start:
                raise self.fail(token, f"unsupported use of {token.text!r} (dynamic import, import.meta?)")
            if token.text == "import":
                self.parse_import(index)
            else:
                self.parse_export(index)
        self.imports_first()
        return self.module

    def imports_first(self) -> None:
        """ES hoists imports; a destructuring does not: so no statement may come before an import."""
        imports = self.module.imports
        if not imports:
            return
        for token in self.tokens:
            if token.start >= imports[-1].end:
                return
            if not any(imported.start <= token.start < imported.end for imported in imports):
                raise self.fail(token, "imports must come before every other statement")

    def parse_import(self, index: int) -> None:
        """``import { a, b as c } from "./x.js";`` and nothing else."""
        start = self.tokens[index]
        if not self.is_punct(index + 1, "{"):
            raise self.fail(start, 'only named imports are supported: import { a, b as c } from "./x.js";')
        names: list[tuple[str, str]] = []
        at = index + 2
        while not self.is_punct(at, "}"):
            exported = self.binding(at, start)
            local = exported
            at += 1
            if self.is_name(at, "as"):
                local = self.binding(at + 1, start)
                at += 2
            names.append((exported, local))
            if self.is_punct(at, ","):
                at += 1
            elif not self.is_punct(at, "}"):
                raise self.fail(self.token(at) or start, "malformed import list")
        specifier = self.token(at + 2)
        if not self.is_name(at + 1, "from") or specifier is None or specifier.kind != "string":
            raise self.fail(start, 'an import needs from "./module.js"')
        path = specifier.text[1:-1]
        if not _SPECIFIER.fullmatch(path):
            raise self.fail(specifier, f"import {path!r}: only relative .js paths (./x.js, ../x.js)")
        if not self.is_punct(at + 3, ";"):
            raise self.fail(specifier, "an import must end with ';'")
        target = posixpath.normpath(posixpath.join(posixpath.dirname(self.module.name), path))
        if target.startswith("../"):
            raise self.fail(specifier, f"import {path!r} leaves the dashboard's folder")
        end = self.tokens[at + 3].end
        self.module.imports.append(_Import(target, tuple(names), start.start, end))

    def binding(self, index: int, statement: Token) -> str:
        token = self.token(index)
        if token is None or token.kind != "name" or not _IDENTIFIER.fullmatch(token.text):
            raise self.fail(token or statement, "expected a name in the import list")
        if token.text in _NOT_BINDINGS:
            raise self.fail(token, f"importing or binding {token.text!r} is not supported")
        return token.text

    def parse_export(self, index: int) -> None:
        """``export function|async function|class|const|let NAME``: drop ``export``, remember NAME."""
        keyword = self.tokens[index]
        at = index + 1
        if self.is_name(at, "async") and self.is_name(at + 1, "function"):
            at += 1
        kind = self.token(at)
        if kind is None or not self.is_name(at, "function", "class", "const", "let"):
            raise self.fail(
                keyword,
                "only export function|async function|class|const|let NAME is supported "
                "(no export default, export { ... }, re-exports or var)",
            )
        name = self.token(at + 1)
        if name is None or name.kind != "name" or not _IDENTIFIER.fullmatch(name.text):
            raise self.fail(
                keyword, f"export {kind.text} must name one binding (no generator or destructuring)"
            )
        if kind.text in ("const", "let"):
            self.single_declaration(at + 1, keyword)
            if kind.text == "let":
                self.never_reassigned(at + 1)
        if name.text in self.module.exports:
            raise self.fail(name, f"{name.text} is exported twice")
        self.module.exports.append(name.text)
        following = self.tokens[index + 1]
        self.module.removals.append((keyword.start, following.start))

    def single_declaration(self, name_index: int, keyword: Token) -> None:
        """``export const A = ...;``: one declarator, ended by its own ';'."""
        if not self.is_punct(name_index + 1, "="):
            raise self.fail(keyword, "an exported const or let needs an initializer")
        depth = keyword.depth
        for token in self.tokens[name_index + 2 :]:
            if token.depth == depth and token.kind == "punct" and token.text == ";":
                return
            if token.depth == depth and token.kind == "punct" and token.text == ",":
                raise self.fail(token, "one declaration per export const/let")
            if token.depth == depth and token.kind == "name" and token.text in ("import", "export"):
                break
        raise self.fail(keyword, "an exported const or let must end with ';'")

    def never_reassigned(self, name_index: int) -> None:
        declared = self.tokens[name_index]
        for index, token in enumerate(self.tokens):
            if index == name_index or token.kind != "name" or token.text != declared.text:
                continue
            if self.is_punct(index - 1, ".", "?."):
                continue
            if self.is_punct(index + 1, *_ASSIGNMENTS, *_UPDATES) or self.is_punct(index - 1, *_UPDATES):
                raise self.fail(
                    token,
                    f"exported let {declared.text} is assigned again: importers would keep its first value "
                    "(live bindings are not supported)",
                )


def _body(module: _Module, variables: dict[str, str]) -> str:
    """The module's source with its imports turned into destructurings and ``export`` keywords dropped."""
    edits: list[tuple[int, int, str]] = [(start, end, "") for start, end in module.removals]
    for imported in module.imports:
        pairs = ", ".join(name if name == local else f"{name}: {local}" for name, local in imported.names)
        edits.append((imported.start, imported.end, f"const {{ {pairs} }} = {variables[imported.target]};"))
    text = module.source
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    return text


def bundle_modules(read: Callable[[str], str], entry: str) -> str:
    """The module ``entry`` (a path under the dashboard's folder, e.g. ``app.js``) and every module it
    imports, as the text of one inline ``<script type="module">``. ``read(path)`` returns a module's source
    (``OSError`` when there is none). ``BundleError`` names the module, line and construct it refused."""
    parsed: dict[str, _Module] = {}
    order: list[str] = []
    visiting: list[str] = []

    def visit(name: str, importer: str | None) -> _Module:
        if name in parsed:
            return parsed[name]
        if name in visiting:
            cycle = " -> ".join([*visiting[visiting.index(name) :], name])
            raise BundleError(f"import cycle {cycle}: the trace bundler runs each module once, in order")
        try:
            source = read(name)
        except OSError as error:
            where = f"{importer} imports {name}" if importer else f"entry module {name}"
            raise BundleError(f"{where}, which cannot be read: {error}") from None
        module = _Parser(name, source).parse()
        visiting.append(name)
        for imported in module.imports:
            target = visit(imported.target, name)
            for exported, _ in imported.names:
                if exported not in target.exports:
                    raise BundleError(
                        f"{name} imports {exported} from {target.name}, which does not export it"
                    )
        visiting.pop()
        parsed[name] = module
        order.append(name)
        return module

    visit(posixpath.normpath(entry), None)
    variables = {name: f"{_RESERVED_PREFIX}module_{index}" for index, name in enumerate(order)}
    parts = [
        "// The llmts dashboard's ES modules as one script (llmts/dashboard/bundle.py): each module is one\n"
        "// async function scope, run once, dependencies first.\n"
    ]
    for name in order:
        module = parsed[name]
        exports = ", ".join(module.exports)
        parts.append(
            f"// --- {name} ---\nconst {variables[name]} = await (async () => {{\n"
            f"{_body(module, variables)}\n;return Object.freeze({{ {exports} }});\n}})();\n"
        )
    text = "".join(parts)
    lowered = text.lower()
    # In a script element only these two change how HTML parses it ("<script" matters only after "<!--").
    for marker in ("</script", "<!--"):
        if marker in lowered:
            raise BundleError(
                f"the dashboard's code contains {marker!r}: it would end the inline script early"
            )
    return text
