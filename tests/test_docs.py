"""Every ```python block in README.md and docs/*.md runs, against a real server.

Conventions for documentation code blocks (so examples read naturally and still run here):

* A block that contains ``def test_`` is a complete pytest test file. It is written to a temporary
  directory and run by an inner pytest in this process against the run's server (``--llmts-url`` from
  the ``llmts_server`` fixture); every test in it must pass.
* Any other ``python`` block is a script, executed on its own as ``__main__``. A script that talks to a
  server started by ``llmts serve`` reads its URL with ``os.environ.get("LLMTS_URL",
  "http://127.0.0.1:8080")``; this test sets ``LLMTS_URL``. Blocks may also start their own server with
  ``with LlmTestServer.start() as server:``. A block that works only in sessions it creates
  (``create_session``, ``llmts session create`` or ``POST /admin-api/sessions``; no default session,
  session list, log or process) shares the run's real server with the other such blocks (one TLS server
  if it starts ``tls=True``); any other block gets a dedicated, unconfigured server, so it may configure
  (and echo from) the ``default`` session.
* Blocks in other languages (``sh``, ``json``, ``yaml``...) are not executed.

Test ids are ``<file>:<line of the opening fence>``. Scripts are compiled with the Markdown file as their
file name and their real line numbers, so a failing assertion's traceback points into the document.
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

import pytest

import llmts.errors
from llmts import LlmTestServer, SessionClient
from llmts.providers.adapters import ADAPTERS
from llmts.schema import LIMITS
from llmts.schema.conversations import MatchExplanation
from tests.support.control_routes import control_routes
from tests.support.docs import doc_table, headings
from tests.support.inner_pytest import attached_to, run_in_process
from tests.support.servers import BackgroundStops, SpareServers

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<info>[^`\n]*)$")


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # 1-based line of the opening fence
    language: str
    source: str

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"

    @property
    def is_test_file(self) -> bool:
        return re.search(r"^\s*(async\s+)?def test_", self.source, re.MULTILINE) is not None


def code_blocks(path: Path) -> Iterator[Block]:
    lines = path.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        fence, indent = opening["fence"], len(opening["indent"])
        language = opening["info"].strip().split(" ")[0].lower()
        body: list[str] = []
        end = index + 1
        while end < len(lines):
            closing = _FENCE.match(lines[end])
            if (
                closing
                and not closing["info"].strip()
                and closing["fence"][0] == fence[0]
                and len(closing["fence"]) >= len(fence)
            ):
                break
            body.append(lines[end][indent:] if lines[end][:indent].isspace() else lines[end])
            end += 1
        yield Block(path, index + 1, language, "\n".join(body) + "\n")
        index = end + 1


def python_blocks() -> list[Block]:
    return [
        block
        for path in DOCUMENTS
        for block in code_blocks(path)
        if block.language in ("python", "py", "python3")
    ]


PYTHON_BLOCKS = python_blocks()
SCRIPTS = [b for b in PYTHON_BLOCKS if not b.is_test_file]
TEST_FILES = [b for b in PYTHON_BLOCKS if b.is_test_file]


def _params(blocks: list[Block]) -> list[object]:
    return [pytest.param(block, id=block.where) for block in blocks]


@pytest.fixture
def docs_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A clean environment: no inherited llmts settings, and a scratch working directory."""
    for name in ("LLMTS_URL", "LLMTS_CONTROL_KEY", "LLMTS_FIXTURES", "LLMTS_HOST", "LLMTS_PORT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


# What a block must not touch to share a server with other blocks: anything beyond the sessions it
# creates (the default session, the session list, the server's process, log and stop).
_SERVER_WIDE = re.compile(
    r"\.sessions\(|default_session|\.session\(|log_path|\.pid\b|\.process\b|\.stop\(|\.urls\b|members\(|"
    r"worker_restarts|process_stats"
)


# How a block creates a session: the Python client, the CLI (``llmts session create``), the control API.
_CREATES_SESSIONS = re.compile(
    r"\.create_session\(|\"session\", \"create\"|\"POST\", \"/admin-api/sessions\""
)


def _own_sessions_only(block: Block) -> bool:
    """The block works only in sessions it creates, so it may share a server with other such blocks."""
    return _CREATES_SESSIONS.search(block.source) is not None and _SERVER_WIDE.search(block.source) is None


def _pools(block: Block) -> set[str]:
    """Which of ``_Servers``' spare pools the script ``block`` takes a server from (as far as its text
    shows: a block missed here only waits for its server to start)."""
    if _own_sessions_only(block):
        return set()
    if "LLMTS_URL" in block.source:
        return {"quiet"}
    pools = set()
    if "LlmTestServer.start(access_log=False)" in block.source:
        pools.add("quiet")
    if "LlmTestServer.start()" in block.source:
        pools.add("logging")
    return pools


class _NextTest:
    """The test this worker runs after the current one (pytest's ``nextitem``; pytest-xdist keeps one
    queued), so that a spare server is started only for a block that will take it: not once per pool and
    worker at the end of the run."""

    UNKNOWN = object()

    def __init__(self) -> None:
        self.item: object = self.UNKNOWN

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> None:
        self.item = nextitem

    def needs(self, pool: str) -> bool:
        """Whether the next test takes a server of ``pool`` (``True`` while unknown)."""
        if self.item is self.UNKNOWN:
            return True
        callspec = getattr(self.item, "callspec", None)
        block = callspec.params.get("block") if callspec is not None else None
        if getattr(self.item, "originalname", None) != "test_python_block_runs" or not isinstance(
            block, Block
        ):
            return False
        return pool in _pools(block)


class _Servers:
    """The script blocks' servers. A block that works only in sessions it creates shares a server with
    the other such blocks and with the rest of the run: the run's server (``LLMTS_URL``, or what its
    ``LlmTestServer.start()`` returns: a handle whose ``stop`` leaves the server running; with
    ``tls=True``, a shared TLS server). Any other block gets a fresh server, started while the previous
    block ran if that block's text shows it needs one (``start(access_log=False)`` and ``start()``; other
    options start one as usual)."""

    def __init__(self, stops: BackgroundStops, run_server: LlmTestServer, next_test: _NextTest) -> None:
        self._stops = stops
        self._run_server = run_server
        self._next_test = next_test
        self._shared: LlmTestServer | None = None
        self._shared_tls: LlmTestServer | None = None
        self.quiet = SpareServers(stops, access_log=False)
        self.logging = SpareServers(stops)

    def take_quiet(self) -> LlmTestServer:
        return self.quiet.take(start_next=self._next_test.needs("quiet"))

    def take_logging(self) -> LlmTestServer:
        return self.logging.take(start_next=self._next_test.needs("logging"))

    def shared(self) -> LlmTestServer:
        if self._run_server.control_key is None:  # the blocks call the control API without a key
            return LlmTestServer.attach(self._run_server.url)
        if self._shared is None:
            self._shared = _START(LlmTestServer, access_log=False)
        return LlmTestServer.attach(self._shared.url)

    def shared_tls(self) -> LlmTestServer:
        """The TLS server the blocks that work in their own sessions share (``start(tls=True)``)."""
        if self._shared_tls is None:
            self._shared_tls = _START(LlmTestServer, tls=True, access_log=False)
        return LlmTestServer.attach(self._shared_tls.url, ca_file=self._shared_tls.ca_file)

    def starter(self, block: Block) -> classmethod[LlmTestServer, ..., LlmTestServer]:
        """What ``LlmTestServer.start`` is while ``block`` runs."""
        shares = _own_sessions_only(block)

        def start(cls: type[LlmTestServer], **options: Any) -> LlmTestServer:
            if shares and set(options) <= {"access_log"}:
                return self.shared()
            if shares and options.get("tls") is True and set(options) <= {"tls", "access_log"}:
                return self.shared_tls()
            if options == self.quiet.options:
                return self.take_quiet()
            if not options:
                return self.take_logging()
            return _START(cls, **options)

        return classmethod(start)

    def close(self) -> None:
        self.quiet.close()
        self.logging.close()
        for shared in (self._shared, self._shared_tls):
            if shared is not None:
                self._stops.stop(shared)


_START = LlmTestServer.start.__func__  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def spare_servers(
    background_stops: BackgroundStops, llmts_server: LlmTestServer, pytestconfig: pytest.Config
) -> Iterator[_Servers]:
    next_test = _NextTest()
    pytestconfig.pluginmanager.register(next_test)
    servers = _Servers(background_stops, llmts_server, next_test)
    try:
        yield servers
    finally:
        pytestconfig.pluginmanager.unregister(next_test)
        servers.close()


def _execute(block: Block) -> None:
    # Pad with blank lines so tracebacks show the Markdown file's own line numbers.
    code = compile("\n" * block.line + block.source, str(block.path), "exec")
    namespace: dict[str, object] = {"__name__": "__main__", "__file__": str(block.path)}
    trace = None
    try:
        exec(code, namespace)
    except Exception as exc:
        # Only the example's own frames: not this helper's.
        assert exc.__traceback__ is not None
        trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__.tb_next))
    if trace is not None:
        pytest.fail(f"the example at {block.where} failed:\n{trace}", pytrace=False)


# Docs examples are written for the newest SDK majors: they run in the default suite, not in the tox
# SDK-major factors (no ``sdk`` marker), since e.g. openai 1.x lacks responses.input_tokens.
@pytest.mark.parametrize("block", _params(SCRIPTS))
def test_python_block_runs(
    block: Block, docs_env: Path, monkeypatch: pytest.MonkeyPatch, spare_servers: _Servers
) -> None:
    if "LLMTS_URL" not in block.source:
        monkeypatch.setattr(LlmTestServer, "start", spare_servers.starter(block))
        _execute(block)
        return
    shared = _own_sessions_only(block)
    with spare_servers.shared() if shared else spare_servers.take_quiet() as server:
        monkeypatch.setenv("LLMTS_URL", server.url)
        _execute(block)


# What the test-file blocks import (see run_in_process).
_EXAMPLE_IMPORTS = ("openai", "anthropic", "google.genai", "cohere", "ollama", "boto3")


@pytest.mark.parametrize("block", _params(TEST_FILES))
def test_python_test_file_block_passes(
    block: Block, docs_env: Path, pytester: pytest.Pytester, llmts_server: LlmTestServer
) -> None:
    name = "test_" + re.sub(r"\W", "_", block.where)
    pytester.makepyfile(**{name: block.source})
    args = attached_to(llmts_server)

    result = run_in_process(pytester, *args, preload=_EXAMPLE_IMPORTS)

    assert result.ret == 0, f"{block.where}: the example tests failed:\n{result.stdout.str()}"
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) >= 1 and not outcomes.keys() - {"passed"}, (
        f"{block.where}: expected only passing tests, got {outcomes}"
    )


def test_documents_have_python_examples() -> None:
    documents = {block.path.name for block in PYTHON_BLOCKS}
    assert documents >= {
        "README.md",
        "quickstart.md",
        "configuration.md",
        "python-api.md",
        "pytest-plugin.md",
    }
    assert TEST_FILES, "at least one example is a pytest test file"


def test_readme_opens_with_the_quickstart() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    sections = re.split(r"^## ", text, flags=re.MULTILINE)
    head, first = sections[0], sections[1]
    assert head.startswith("# "), "README starts with its title"
    assert len([p for p in head.split("\n\n")[1:] if p.strip()]) == 1, "then one pitch paragraph"
    assert first.startswith("Quickstart\n"), "then the Quickstart section"
    commands = [block.source.strip() for block in code_blocks(ROOT / "README.md") if block.language == "sh"]
    assert commands[:2] == ["pip install -e . && llmts serve", "pip install -e '.[test]' && pytest -n auto"]
    assert "http://127.0.0.1:8080" in first


def test_relative_links_resolve() -> None:
    broken = []
    for path in DOCUMENTS:
        for target in re.findall(r"\]\(([^)\s]+)\)", path.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):
                continue
            file_part = target.split("#", 1)[0]
            if file_part and not (path.parent / file_part).exists():
                broken.append(f"{path.relative_to(ROOT)}: {target}")
    assert not broken, "broken links: " + ", ".join(broken)


def _slug(heading: str) -> str:
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_anchors_resolve() -> None:
    anchors = {path: {_slug(h) for h in headings(path)} for path in DOCUMENTS}
    broken = []
    for path in DOCUMENTS:
        for file_part, anchor in re.findall(r"\]\(([^)#\s]*)#([^)\s]+)\)", path.read_text(encoding="utf-8")):
            target = (path.parent / file_part).resolve() if file_part else path
            if target in anchors and anchor not in anchors[target]:
                broken.append(f"{path.relative_to(ROOT)}: {file_part}#{anchor}")
    assert not broken, "links to missing headings: " + ", ".join(broken)


# Where code, tests, benchmarks and docs cite a section: ``docs/<file>.md, "<Section>"``,
# ``docs/<file>.md ("<Section>")`` or ``docs/<file>.md#<anchor>``; a citation may break across the lines
# of a comment or docstring.
_CITATION = re.compile(r'(docs/[\w/.-]+\.md)(?:(?:,\s*|\s+\()"([^"]+)"|#([\w-]+))')
_CONTINUED_LINE = re.compile(r"\s*\n\s*(?:#|//|\*)?\s*")
_CITING_SUFFIXES = {".py", ".js", ".md", ".sh", ".cfg", ".ini", ".toml"}
_GENERATED = {"__pycache__", "node_modules"}  # caches, and tests/js's packages after ``tox -e js``


def _citing_files() -> Iterator[Path]:
    for folder in ("llmts", "tests", "benchmarks", "docs", ".ci"):
        for path in (ROOT / folder).rglob("*"):
            citing = path.suffix in _CITING_SUFFIXES or path.parent.name == ".ci"
            if citing and path.is_file() and not _GENERATED.intersection(path.parts):
                yield path
    yield from (ROOT / name for name in ("README.md", "setup.cfg", "tox.ini", "pyproject.toml"))


def _names_a_heading(cited: str, titles: list[str]) -> bool:
    """The heading itself, or its part before a colon (``"Metrics"`` for ``## Metrics: `GET /metrics```)."""
    return any(title == cited or title.startswith(cited + ":") for title in titles)


def test_cited_sections_exist() -> None:
    """Code and docs cite sections by title: a renamed or removed section must take
    its citations along, so no citation points at a heading that is not there."""
    titles = {path.relative_to(ROOT).as_posix(): headings(path) for path in DOCUMENTS}
    stale = []
    for path in _citing_files():
        text = _CONTINUED_LINE.sub(" ", path.read_text(encoding="utf-8", errors="replace"))
        for document, title, anchor in _CITATION.findall(text):
            if document not in titles:
                stale.append(f"{path.relative_to(ROOT)}: {document} does not exist")
            elif title and not _names_a_heading(" ".join(title.split()), titles[document]):
                stale.append(f'{path.relative_to(ROOT)}: {document}, "{title}"')
            elif anchor and anchor not in {_slug(h) for h in titles[document]}:
                stale.append(f"{path.relative_to(ROOT)}: {document}#{anchor}")
    assert not stale, "citations of missing sections:\n" + "\n".join(stale)


def _error_classes() -> dict[str, type[llmts.errors.LlmtsError]]:
    """Each error code of ``llmts.errors`` by the class that declares it (a subclass may keep its
    parent's)."""
    return {
        cls.code: cls
        for name in llmts.errors.__all__
        if isinstance(cls := getattr(llmts.errors, name), type)
        and issubclass(cls, llmts.errors.LlmtsError)
        and "code" in vars(cls)
    }


def test_configuration_reference_covers_every_limit_and_error_code() -> None:
    """docs/configuration.md drifts from the code: name what is missing."""
    text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    missing_limits = [
        f"{key} = {value}" for key, value in LIMITS.items() if f"`{key}` | {value} |" not in text
    ]
    assert not missing_limits, f"limits missing from the Limits table: {missing_limits}"
    codes = set(_error_classes()) - {llmts.errors.LlmtsError.code}
    missing_codes = sorted(code for code in codes if f"`{code}`" not in text)
    assert not missing_codes, f"error codes missing from the Error codes table: {missing_codes}"


def test_the_error_codes_table_gives_each_errors_status_and_retry_header() -> None:
    """Each row of configuration.md's "Error codes" table that names an error class's code gives its HTTP
    status, and its ``x-should-retry`` value where provider routes send one (blank where none is sent)."""
    errors = _error_classes()
    wrong = []
    for code, status, retry, scope, *_ in doc_table("docs/configuration.md", "| code | status |"):
        error = errors.get(code.strip("`"))
        if error is None:
            continue  # scripted errors and provider answers (budget, rate limits) have no class of their own
        sent = "" if error.should_retry is None or scope == "control" else str(error.should_retry).lower()
        if not status.startswith(str(error.http_status)) or retry.split(" ", 1)[0] != sent:
            wrong.append(f"{code}: {status}, {retry!r} (the code: {error.http_status}, {sent!r})")
    assert not wrong, wrong


def test_the_explanation_outcomes_are_the_ones_the_model_declares() -> None:
    """conversations.md's "Explanations" lists every ``outcome`` a match explanation can have."""
    text = (ROOT / "docs" / "conversations.md").read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| `outcome` |"))
    documented = re.findall(r"`([a-z_]+)`", row.split("|")[2])
    assert documented == list(get_args(MatchExplanation.model_fields["outcome"].annotation))


def test_the_control_api_table_lists_every_control_route() -> None:
    """server.md's control API table has a row for each route of the control API (``ControlApi``)."""
    routes = {(method, re.sub(r"<\w+>", "{}", rule)) for method, rule in control_routes()}
    documented = {
        (found.group(1), re.sub(r"\{\w+\}", "{}", found.group(2)))
        for request, *_ in doc_table("docs/server.md", "| request | success | errors |")
        if (found := re.match(r"`(GET|POST|PUT|DELETE) (/admin-api/[a-z/{}_]+)", request))
    }
    assert documented == routes


def test_the_journal_operations_table_names_every_route_operation() -> None:
    """providers.md's journal-operations table names the ``operation`` each declared route journals (an
    inference route's comes from its parse, so those rows are read by hand)."""
    header = "| surface | `operation` of inference requests | other routes |"
    table = " ".join(" ".join(row) for row in doc_table("docs/providers.md", header))
    declared = {getattr(route, "operation", "") for adapter in ADAPTERS for route in adapter.routes} - {""}
    assert declared and not {name for name in declared if f"`{name}`" not in table}


def test_the_dashboard_docs_name_every_control_route_the_dashboard_calls() -> None:
    """dashboard.md lists the control API routes the dashboard uses (``liveApi`` of ``api.js``), each once."""
    source = (ROOT / "llmts" / "dashboard" / "static" / "api.js").read_text(encoding="utf-8")
    live = source.split("const liveApi = {", 1)[1].split("\n};", 1)[0]
    called = set()
    for line in live.splitlines():
        for path in re.findall(r"call\([`\"](/admin-api/[^`\"?$]*)", line):  # a path stops at its ${id}
            method = next(iter(re.findall(r'method: "(\w+)"', line)), "GET")
            called.add((method, path + "{id}" if path.endswith("/") else path))
    text = (ROOT / "docs" / "dashboard.md").read_text(encoding="utf-8")
    listed = text.split("through the same routes (", 1)[1].split(").", 1)[0].replace("\n", " ")
    documented, method = set(), "GET"
    for item in re.findall(r"`([^`]+)`", listed):
        if " " in item:
            method, item = item.split(" ", 1)
        documented.add((method, item))
    assert documented == called


def test_the_python_api_lists_every_public_member_of_session_client() -> None:
    """python-api.md's SessionClient table names every public member (the SDK factories by name, and
    ``sdk_client``, which the paragraph after the table describes)."""
    text = (ROOT / "docs" / "python-api.md").read_text(encoding="utf-8")
    section = text.split("## SessionClient", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"`(?:await )?([a-z0-9_]+)[`(]", section))
    public = {name for name in dir(SessionClient) if not name.startswith("_")}
    assert public <= named, sorted(public - named)
