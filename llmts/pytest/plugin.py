"""pytest plugin (entry point ``pytest11``): one llmts server per test run, a fresh session per test.

* ``llmts_server`` (session scope): the run's server. Under pytest-xdist the workers share the run's
  servers: the first worker that needs one starts ``--llmts-servers N`` server processes (``llmts serve
  --workers N``) under a file lock in a directory the controlling process chose, every worker uses server
  ``worker index mod N`` from the URLs written there, and the controlling process stops them when the run
  ends. ``--llmts-url URL`` (or ``LLMTS_URL``) attaches to an external server instead. ``--llmts-tls``
  (ini ``llmts_tls``) starts them on https with a generated certificate, recorded beside the URLs so every
  worker's clients trust it; ``--llmts-ca-file`` is the certificate of an attached https server.
* ``llmts_session``: a new session for each test, labelled with the test's node id; sessions never see
  each other. A failed test's session is kept (``--llmts-keep``), traced into a self-contained HTML file
  (``--llmts-trace``) and summed up in a report section titled ``llmts`` (``llmts.pytest.failures``).
* ``llmts_openai``, ``llmts_anthropic``, ``llmts_gemini``, ``llmts_azure_openai``, ``llmts_bedrock``,
  ``llmts_cohere``, ``llmts_ollama``: that official SDK's client bound to ``llmts_session`` (the SDK is
  imported when the fixture is used).
* ``llmts_expect`` and the marker ``@pytest.mark.llmts_verify(**expectations)``: expectations on what the
  test sent (see ``llmts.pytest.verify``), checked with ``POST /admin-api/verify`` once the test body
  passed; a failed verification fails the test with the server's explanation.
* The marker ``@pytest.mark.llmts_record``: the test's ``llmts_session`` records real provider traffic
  into one fixture file per test, or replays it (``--llmts-record``, ``--llmts-fixtures-dir``,
  ``--llmts-upstream``; ``llmts.pytest.recording``, docs/recording.md).
* A server whose gunicorn worker died during the run lost its sessions (docs/deployment.md, "When a worker
  dies"): a test whose session was lost errors at teardown, and the run fails with the reason.

Nothing starts unless a test asks for one of these fixtures.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import tempfile
import time
import warnings
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock

from llmts.catalog.info import SdkClient
from llmts.catalog.registry import CATALOG
from llmts.catalog.sdk_env import SDK_OVERRIDDEN_VARIABLES
from llmts.client import LlmTestServer, ServerError, SessionClient
from llmts.client.tls import CA_BUNDLE_VARIABLES, write_ca_bundle
from llmts.errors import WorkerRestarted
from llmts.pytest.failures import FailureLoop, add_failure_options, session_label
from llmts.pytest.recording import RECORD_MARKER, RecordingPlan, add_recording_options
from llmts.pytest.verify import MARKER, LlmtsExpectations

__all__ = [
    "default_server_count",
    "llmts_env",
    "llmts_expect",
    "llmts_server",
    "llmts_session",
    "pytest_addoption",
    "pytest_collection_modifyitems",
    "pytest_configure",
    "pytest_configure_node",
    "pytest_runtest_call",
    "pytest_runtest_makereport",
    "pytest_sessionfinish",
    "pytest_terminal_summary",
    "pytest_unconfigure",
]

_RUN_KEY = "llmts_run_dir"
_CONTROLLER_KEY = "llmts_controller_pid"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("llmts", "LLM test server")
    group.addoption(
        "--llmts-url",
        default=os.environ.get("LLMTS_URL"),
        help="attach to a running llmts server instead of starting one; several comma-separated URLs: "
        "each xdist worker uses one, worker index mod N (env LLMTS_URL)",
    )
    group.addoption(
        "--llmts-control-key",
        default=os.environ.get("LLMTS_CONTROL_KEY"),
        help="control key of the server (env LLMTS_CONTROL_KEY)",
    )
    add_recording_options(parser, group)
    add_failure_options(parser, group)
    group.addoption(
        "--llmts-tls",
        action="store_true",
        default=False,
        help="start the run's servers on https (llmts serve --tls, a certificate generated for the run); "
        "the fixtures' SDK clients trust it (ini llmts_tls; docs/tls.md)",
    )
    group.addoption(
        "--llmts-ca-file",
        default=os.environ.get("LLMTS_CA_FILE"),
        help="the certificate an https --llmts-url server is trusted through (env LLMTS_CA_FILE)",
    )
    parser.addini("llmts_tls", "start the run's servers on https (--llmts-tls)", type="bool", default=False)
    group.addoption(
        "--llmts-servers",
        type=int,
        default=int(os.environ["LLMTS_SERVERS"]) if os.environ.get("LLMTS_SERVERS") else None,
        help="server processes to start for the run; each xdist worker uses one (worker index mod N). "
        "Default: min(xdist workers, max(1, CPUs // 2)), 1 without xdist (env LLMTS_SERVERS)",
    )


def default_server_count(xdist_workers: int, cpus: int | None) -> int:
    """``--llmts-servers`` when not given: one server per two CPUs (the SDK side of a test costs at least
    what the server does), never more than there are xdist workers."""
    return max(1, min(xdist_workers, max(1, (cpus or 1) // 2)))


def _worker_index(workerinput: dict[str, Any] | None) -> int:
    """This xdist worker's index (``gw3`` -> 3); 0 outside xdist."""
    name = str((workerinput or {}).get("workerid", "gw0"))
    return int(name[2:]) if name[2:].isdigit() else 0


class _Run:
    """Where the run's shared server is recorded: ``<dir>/server.json`` holds its URL and pid."""

    def __init__(self, directory: Path, controller_pid: int, owner: bool, worker_index: int = 0) -> None:
        self.directory = directory
        self.controller_pid = controller_pid
        self.owner = owner
        self.worker_index = worker_index
        self.started: LlmTestServer | None = None

    @property
    def record(self) -> Path:
        return self.directory / "server.json"

    def server(self, control_key: str | None, count: int, tls: bool = False) -> LlmTestServer:
        """This worker's server: ``worker index mod N`` of the run's servers (started on first use);
        without xdist, all of them (sessions spread by id). With ``tls`` they serve https, and the
        certificate's path travels with the URLs."""
        self.directory.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.directory / "server.lock")):
            if self.record.exists():
                record = json.loads(self.record.read_text())
                urls, ca_file = record["urls"], record.get("ca_file")
            else:
                server = LlmTestServer.start(
                    control_key=control_key, parent_pid=self.controller_pid, workers=count, tls=tls
                )
                urls, ca_file = server.urls, server.ca_file
                record = {"urls": urls, "pid": server.pid, "log": str(server.log_path), "ca_file": ca_file}
                self.record.write_text(json.dumps(record))
                self.started = server
        if self.owner:  # no xdist: this one process spreads its sessions over all servers, by id
            return LlmTestServer.attach(urls, control_key=control_key, ca_file=ca_file)
        # An xdist worker: a handle on its one server (worker index mod N).
        url = urls[self.worker_index % len(urls)]
        return LlmTestServer.attach(url, control_key=control_key, ca_file=ca_file)

    def worker_restarts(self) -> list[str]:
        """What the servers this run started say about workers that died in them (``worker_restarts``)."""
        if not self.record.exists():
            return []
        record = json.loads(self.record.read_text())
        urls = record["urls"]
        try:
            return LlmTestServer(urls[0], urls=urls, ca_file=record.get("ca_file")).worker_restarts()
        except OSError:  # already gone: the run's own stop, or a crash the tests reported
            return []

    def stop(self) -> None:
        """Called in the controlling process once every worker is done."""
        if self.started is not None:
            self.started.stop()
        elif self.record.exists():
            record = json.loads(self.record.read_text())
            _terminate(int(record["pid"]))
            # Its working directory (log, and a generated certificate and key): ``stop`` removes it when
            # this process started the server.
            shutil.rmtree(Path(record["log"]).parent, ignore_errors=True)
        shutil.rmtree(self.directory, ignore_errors=True)


_RUN_STASH = pytest.StashKey[_Run]()
_LOOP_STASH = pytest.StashKey[FailureLoop]()
_RESTARTS_STASH = pytest.StashKey[list[str]]()


def _terminate(pid: int, timeout: float = 10.0) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _running(pid):
            return
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _running(pid: int) -> bool:
    """Whether ``pid`` still runs. The server's parent (the xdist worker that started it) is gone, so once
    it exits it waits as a zombie until the system's init reaps it: a second in some containers, forever
    where pytest itself is pid 1. A zombie has exited."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            return stat.read().rpartition(")")[2].split()[0] != "Z"
    except (OSError, IndexError):
        return True  # no procfs: the signal above is all there is


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(**expectations): verify the test's requests with POST /admin-api/verify after the test "
        "(keyword arguments: the verification request's fields, e.g. no_unexpected_calls=True)",
    )
    config.addinivalue_line(
        "markers",
        f"{RECORD_MARKER}: record this test's provider traffic into its fixture file, or replay it "
        "(--llmts-record none|once|new_episodes|all; docs/recording.md)",
    )
    workerinput: dict[str, Any] | None = getattr(config, "workerinput", None)
    if workerinput is not None and _RUN_KEY in workerinput:
        run = _Run(
            Path(workerinput[_RUN_KEY]),
            int(workerinput[_CONTROLLER_KEY]),
            owner=False,
            worker_index=_worker_index(workerinput),
        )
    else:
        directory = Path(tempfile.gettempdir()) / f"llmts-run-{os.getpid()}-{os.urandom(4).hex()}"
        run = _Run(directory, os.getpid(), owner=True)
    config.stash[_RUN_STASH] = run
    loop = FailureLoop(config, attached=bool(config.getoption("--llmts-url")))
    config.stash[_LOOP_STASH] = loop
    if run.owner and loop.trace != "off":
        loop.remove_stale_traces()


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """pytest-xdist hook (controller side): tell each worker where the run's server is recorded."""
    run = node.config.stash[_RUN_STASH]
    node.workerinput[_RUN_KEY] = str(run.directory)
    node.workerinput[_CONTROLLER_KEY] = run.controller_pid


def pytest_unconfigure(config: pytest.Config) -> None:
    run = config.stash.get(_RUN_STASH, None)
    if run is not None and run.owner:
        run.stop()


@pytest.fixture(scope="session")
def llmts_server(request: pytest.FixtureRequest) -> LlmTestServer:
    """The test run's llmts server (shared by all xdist workers)."""
    url = request.config.getoption("--llmts-url")
    control_key = request.config.getoption("--llmts-control-key")
    run = request.config.stash[_RUN_STASH]
    if url:
        urls = [part.strip() for part in url.split(",") if part.strip()]
        ca_file = request.config.getoption("--llmts-ca-file")
        url = urls[run.worker_index % len(urls)]
        return LlmTestServer.attach(url, control_key=control_key, ca_file=ca_file)
    count = request.config.getoption("--llmts-servers")
    if count is None:
        xdist_workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
        count = default_server_count(xdist_workers, os.cpu_count())
    if count < 1:
        raise pytest.UsageError("--llmts-servers must be at least 1")
    tls = bool(request.config.getoption("--llmts-tls") or request.config.getini("llmts_tls"))
    return run.server(control_key, count, tls)


@pytest.fixture
def llmts_session(llmts_server: LlmTestServer, request: pytest.FixtureRequest) -> Iterator[SessionClient]:
    """A fresh session for this test, labelled with its node id; with the ``llmts_record`` marker it
    records or replays the test's fixture file (docs/recording.md). Afterwards it is deleted, or kept
    (``--llmts-keep``) with the test's outcome, and traced (``--llmts-trace``) (docs/pytest-plugin.md)."""
    session = llmts_server.create_session(label=session_label(request.node.nodeid))
    plan = RecordingPlan.for_item(request) if request.node.get_closest_marker(RECORD_MARKER) else None
    try:
        if plan is not None:
            plan.begin(session)
        yield session
        if plan is not None:
            plan.end(session)
    finally:
        _end_session(request, session)


def _end_session(request: pytest.FixtureRequest, session: SessionClient) -> None:
    """Trace, keep or delete the test's session (a session lost with a dead worker fails the test)."""
    kept = False
    try:
        kept, _ = request.config.stash[_LOOP_STASH].finish(request.node, session)
    except ServerError as exc:
        if exc.code == WorkerRestarted.code:
            raise  # the session died with the server's worker: the test ran against lost state
        warnings.warn(f"llmts: could not trace or keep session {session.id}: {exc}", stacklevel=1)
    except OSError:
        return  # the server may already be gone at the very end of a run
    if kept:
        return
    try:
        session.delete()
    except ServerError as exc:
        if exc.code == WorkerRestarted.code:
            raise
    except OSError:
        pass


@pytest.fixture(scope="session")
def _llmts_ca_bundle(llmts_server: LlmTestServer, tmp_path_factory: pytest.TempPathFactory) -> str | None:
    """The usual CAs plus an https server's certificate, for ``llmts_env`` (None without one)."""
    if llmts_server.ca_file is None or not llmts_server.url.startswith("https://"):
        return None
    return str(write_ca_bundle(llmts_server.ca_file, tmp_path_factory.mktemp("llmts-ca") / "bundle.pem"))


@pytest.fixture
def llmts_env(
    llmts_session: SessionClient, monkeypatch: pytest.MonkeyPatch, _llmts_ca_bundle: str | None
) -> dict[str, str]:
    """Point every official SDK's environment variables at ``llmts_session`` for this test (restored
    afterwards), so code that builds its own clients from the environment talks to llmts. Returns what
    was set (docs/pytest-plugin.md). On https it also makes them trust the server: ``SSL_CERT_FILE`` and
    ``AWS_CA_BUNDLE`` name a bundle of the usual CAs plus its certificate, ``NODE_EXTRA_CA_CERTS`` the
    certificate (docs/tls.md)."""
    environment = llmts_session.sdk_environment()
    if _llmts_ca_bundle is not None:
        environment.update(dict.fromkeys(CA_BUNDLE_VARIABLES, _llmts_ca_bundle))
    for name in SDK_OVERRIDDEN_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    return environment


def _sdk_fixture(spec: SdkClient) -> Any:
    """A fixture returning ``llmts_session.<spec.name>()``; a missing SDK fails the test with what to
    install."""

    def fixture(llmts_session: SessionClient) -> Any:
        try:
            return getattr(llmts_session, spec.name)()
        except ModuleNotFoundError as exc:
            package = spec.package()
            pytest.fail(
                f"llmts: this fixture needs the {package} package ({exc}); pip install {package}",
                pytrace=False,
            )

    fixture.__doc__ = f"``llmts_session.{spec.name}()``: the official SDK client (``{spec.package()}``)."
    fixture.__name__ = spec.fixture
    return pytest.fixture(fixture, name=spec.fixture)


def _sdk_fixtures() -> dict[str, Any]:
    """One fixture per client a provider declares one for (``SdkClient.fixture``: ``llmts_openai``,
    ``llmts_anthropic``...), made from the declarations so a new provider's comes with its ``info.py``."""
    fixtures: dict[str, Any] = {}
    for name in CATALOG.sdk_client_names():
        spec = CATALOG.sdk_client(name)[1]
        if not spec.fixture:
            continue
        if spec.fixture in fixtures or spec.fixture in globals():
            raise RuntimeError(f"SDK client {name!r} declares fixture {spec.fixture!r}, a name already taken")
        fixtures[spec.fixture] = _sdk_fixture(spec)
    return fixtures


@pytest.fixture
def llmts_expect(request: pytest.FixtureRequest, llmts_session: SessionClient) -> LlmtsExpectations:
    """Expectations on ``llmts_session``'s requests, verified once the test body passed (together with the
    test's ``llmts_verify`` marker, if any)."""
    marker = request.node.get_closest_marker(MARKER)
    return LlmtsExpectations(llmts_session, **(marker.kwargs if marker is not None else {}))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test with the ``llmts_verify`` marker gets ``llmts_expect`` (and so ``llmts_session``)."""
    for item in items:
        names = getattr(item, "fixturenames", None)
        if item.get_closest_marker(MARKER) is not None and names is not None and "llmts_expect" not in names:
            names.append("llmts_expect")


def pytest_sessionfinish(session: pytest.Session) -> None:
    """In the controlling process: a server of this run whose worker died fails the run, even when no
    test touched a lost session afterwards (the reason is printed in the summary)."""
    run = session.config.stash.get(_RUN_STASH, None)
    if run is None or not run.owner:
        return
    reasons = run.worker_restarts()
    if reasons:
        session.config.stash[_RESTARTS_STASH] = reasons
        if session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    reasons = config.stash.get(_RESTARTS_STASH, None)
    if reasons:
        terminalreporter.section("llmts: the test run's server lost its sessions", sep="=", red=True)
        for reason in reasons:
            terminalreporter.line(f"llmts: {reason}", red=True)
    FailureLoop.summarize(terminalreporter)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, Any]:
    result = yield  # a test body that failed already re-raises here: its own failure is the report
    funcargs = getattr(item, "funcargs", {})
    expect = funcargs.get("llmts_expect")
    if isinstance(expect, LlmtsExpectations) and expect.active:
        verdict = expect.verify()
        assert expect.sent is not None
        FailureLoop.record_verdict(item, expect.sent, verdict)
        if not verdict.passed:
            pytest.fail(f"llmts: {verdict.report()}", pytrace=False)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    """Remember each phase's report (the session's teardown reads the outcome from them) and give a failed
    set-up or call of a test with ``llmts_session`` the report section ``llmts``."""
    report: pytest.TestReport = yield
    FailureLoop.record_report(item, report)
    session = getattr(item, "funcargs", {}).get("llmts_session")
    if report.failed and report.when in ("setup", "call") and isinstance(session, SessionClient):
        loop = item.config.stash[_LOOP_STASH]
        try:
            loop.mark_report(item, session, report)
            report.sections.append(("llmts", loop.report_section(item, session, report)))
        except (OSError, ServerError) as exc:
            report.sections.append(("llmts", f"session {session.id}: the server could not be asked ({exc})"))
        except Exception as exc:  # the plugin must never turn a test's failure into an internal error
            report.sections.append(
                ("llmts", f"session {session.id}: no report ({type(exc).__name__}: {exc})")
            )
    return report


# Last, so that a declared name is checked against every fixture and hook this module defines.
_SDK_FIXTURES = _sdk_fixtures()
globals().update(_SDK_FIXTURES)
__all__ += sorted(_SDK_FIXTURES)
