"""Shared fixtures. The llmts pytest plugin (installed entry point) provides ``llmts_server`` and
``llmts_session``: this suite dogfoods it, so under ``pytest -n auto`` the workers share the run's
servers (``--llmts-servers``, docs/pytest-plugin.md)."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import llmts.client.server
from llmts import LlmTestServer, SessionClient
from llmts.client.server import _popen
from tests.helpers import CHROMIUM_ARGS, DASHBOARD_CONTROL_KEY, RawResponse, raw_request
from tests.support.in_process import InProcessServer, InProcessSession
from tests.support.server_template import ServerTemplate, fresh_interpreter
from tests.support.servers import BackgroundStops, SharedServers
from tests.support.worker_zygote import SPEC_VARIABLE, WorkerZygote

# One rank cache per run (docs/tokens.md, "The rank cache"), made by the first process that loads this
# conftest (the xdist controller, or the only process) and inherited by the workers, the servers and the
# subprocesses the run starts: the run builds each encoding's table once, never writes to the developer's
# home, and a test whose subject is the build or the mapping sets LLMTS_CACHE_DIR itself. A run given
# LLMTS_CACHE_DIR keeps it. Removed when the process that made it exits.
if "LLMTS_CACHE_DIR" not in os.environ:
    _RUN_CACHE = tempfile.mkdtemp(prefix="llmts-test-cache-")
    os.environ["LLMTS_CACHE_DIR"] = _RUN_CACHE
    atexit.register(shutil.rmtree, _RUN_CACHE, True)


@pytest.fixture
def raw() -> Callable[..., RawResponse]:
    return raw_request


@pytest.fixture
def openai_client(llmts_session: SessionClient) -> Any:
    """The official OpenAI client bound to this test's session, validating every response strictly."""
    return llmts_session.openai_client(_strict_response_validation=True, max_retries=0)


# --- in process: the app in this worker, no sockets (docs/contributing.md, "Which depth for which test") ---


@pytest.fixture(scope="session")
def llmts_app_server() -> InProcessServer:
    """This worker's in-process llmts: an ``LlmtsApp`` behind the ``LlmTestServer`` interface."""
    return InProcessServer()


@pytest.fixture
def app_session(llmts_app_server: InProcessServer) -> Iterator[InProcessSession]:
    """A fresh session of the in-process app (created and deleted through its control API), whose SDK
    clients call the app through their own httpx with a WSGI transport."""
    session = llmts_app_server.create_session()
    yield session
    session.delete()


@pytest.fixture
def app_openai(app_session: InProcessSession) -> Any:
    """``openai_client`` for ``app_session``: the official client, strict, calling the app in process."""
    return app_session.openai_client(_strict_response_validation=True, max_retries=0)


@pytest.fixture
def app_raw(llmts_app_server: InProcessServer) -> Callable[..., RawResponse]:
    """``raw`` for ``app_session``: ``(provider_base, method, path, body, headers)`` through the app."""
    return llmts_app_server.raw


# --- dedicated gunicorn servers --------------------------------------------------------------------------


@pytest.fixture(scope="session", autouse=True)
def server_template(llmts_server: LlmTestServer) -> Iterator[ServerTemplate]:
    """This test process's dedicated servers fork from a template that has imported llmts's server and
    app (tests/support/server_template.py; docs/design/test-suite.md, "The server template"); a test
    marked ``fresh_interpreter`` starts them from a fresh interpreter, as ``llmts serve`` starts
    elsewhere, and so does the run's server (the plugin's, as users get it), started before the template
    is in place. Set up first and torn down last of the session's fixtures, after the background stops.
    ``LLMTS_TEST_SERVER_TEMPLATE=0`` starts every server from a fresh interpreter."""
    template = ServerTemplate()
    if os.environ.get("LLMTS_TEST_SERVER_TEMPLATE") == "0":  # every server from a fresh interpreter
        yield template
        return
    llmts.client.server._launch = template.launch
    try:
        yield template
    finally:
        llmts.client.server._launch = _popen
        template.close()


def _launcher_for(node: pytest.Item | pytest.Collector) -> contextlib.AbstractContextManager[None]:
    marked = node.get_closest_marker("fresh_interpreter") is not None
    return fresh_interpreter() if marked else contextlib.nullcontext()


@pytest.fixture(scope="module", autouse=True)
def _fresh_interpreter_module(
    request: pytest.FixtureRequest, server_template: ServerTemplate
) -> Iterator[None]:
    """``fresh_interpreter`` on a module (``pytestmark``) reaches its module-scoped servers too (set up
    after ``server_template``, whose launch it puts back)."""
    with _launcher_for(request.node):
        yield


@pytest.fixture(autouse=True)
def _fresh_interpreter_test(
    request: pytest.FixtureRequest, server_template: ServerTemplate
) -> Iterator[None]:
    with _launcher_for(request.node):
        yield


@pytest.fixture(scope="session")
def background_stops() -> Iterator[BackgroundStops]:
    """Servers a test is done with stop on threads of their own; the run waits for them at its end."""
    stops = BackgroundStops()
    yield stops
    stops.join()


@pytest.fixture
def own_server_factory(background_stops: BackgroundStops) -> Iterator[Callable[..., LlmTestServer]]:
    """Start dedicated servers (for start-up options) and always stop them (in the background: a test
    that needs its server gone waits for ``server.stop()`` itself)."""
    started: list[LlmTestServer] = []

    def start(**kwargs: Any) -> LlmTestServer:
        server = LlmTestServer.start(**kwargs)
        started.append(server)
        return server

    yield start
    for server in started:
        background_stops.stop(server)


@pytest.fixture(scope="session")
def shared_server_factory(background_stops: BackgroundStops) -> Iterator[Callable[..., LlmTestServer]]:
    """A server started with these options, shared by every test of this worker's run that asks for the
    same options (``SharedServers``): for tests that need a start-up option but not a process of their
    own, and use only sessions of their own on it. Mind what stays server-wide: the control key's login
    throttle locks a client out after 10 wrong keys in 60 s, and the wrong-key checks that share the
    ``control_key="ctl-secret"`` server send 7 (test_journal_query 6, test_sessions 1); a check that
    needs more wrong keys takes a server of its own."""
    servers = SharedServers(background_stops)
    yield servers.get
    servers.close()


@pytest.fixture(scope="session")
def tls_server(background_stops: BackgroundStops) -> Iterator[LlmTestServer]:
    """A server behind ``llmts serve --tls`` (generated certificate; docs/tls.md), one per xdist worker
    (started on first use; its tests only read it or use sessions of their own): for clients that always
    dial ``wss://`` (google-genai's Live client, ``AzureOpenAI``'s realtime)."""
    server = LlmTestServer.start(tls=True, access_log=False)
    try:
        yield server
    finally:
        background_stops.stop(server)


@pytest.fixture
def tls_session(tls_server: LlmTestServer) -> Iterator[SessionClient]:
    """A fresh session of ``tls_server``, deleted afterwards."""
    session = tls_server.create_session()
    yield session
    session.delete()


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: without xdist (-p no:xdist) there is none
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` runs two workers per CPU and one more: many tests wait on other processes (Chromium, inner
    pytest runs, deadlines and SDK backoffs running out), and one worker per core leaves the cores idle
    meanwhile. Since dedicated servers fork from the server template (a boot of 0.07 s of CPU, not 0.48), a
    fifth worker on 2 cores hides more of those waits than it costs: one run after another on 2026-12-05,
    5 workers 128.6 and 124.5 s, 4 workers 133.4 and 130.9 s, 6 workers 129.2 and 141.0 s, 3 workers
    163.8 s. Before the template, two workers per CPU: 4 min 29 s with 2 workers and 3 min 48 s with 4 when
    the suite cost ~370 s of CPU; at ~275 s, 2 min 33 s to 2 min 50 s with 4, 2 min 43 s with 3 (within the
    noise), and 3 min 21 s with 4 beside a CPU-bound job; at ~270 s, 2 min 52 s with 3 and 2 min 41 s with 4
    back to back; at ~255 s, 5 and 6 workers were within the VM's drift of 4 (docs/design/test-suite.md,
    "Run times and worker counts"). ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still overrides it, as in
    pytest-xdist."""
    configured = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS")
    if configured:
        return int(configured)
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return 2 * cpus + 1


def pytest_configure(config: pytest.Config) -> None:
    """An xdist controller's ``popen`` workers come from the run's zygote (tests/support/worker_zygote.py),
    which has imported the SDKs they all import; ``LLMTS_TEST_WORKER_ZYGOTE=0`` starts each from a fresh
    interpreter."""
    if hasattr(config, "workerinput") or os.environ.get("LLMTS_TEST_WORKER_ZYGOTE") == "0":
        return
    if config.getoption("collectonly") or config.getoption("dist", "no") == "no":
        return  # no worker will start
    count = 0
    for spec in config.getoption("tx", None) or ():  # ["popen"] * N for -n N; --tx 2*popen
        times, star, kind = spec.rpartition("*")
        if kind != "popen" or (star and not times.isdigit()):
            return  # a gateway of another kind (ssh, a chdir, a python of its own): as given
        count += int(times) if star else 1
    config_filters = config.getini("filterwarnings")
    cmdline_filters = config.known_args_namespace.pythonwarnings or ()
    zygote = (
        WorkerZygote.start(config_filters=config_filters, cmdline_filters=cmdline_filters) if count else None
    )
    if zygote is not None:
        config.add_cleanup(zygote.close)
        config.add_cleanup(lambda: os.environ.pop(SPEC_VARIABLE, None))
        config.option.tx = [zygote.spec] * count
        os.environ[SPEC_VARIABLE] = zygote.spec  # for the inner xdist runs (tests/support/inner_pytest.py)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The deep fuzz run (``fuzz`` marker) runs only when ``-m`` names it: ``pytest -m fuzz``."""
    if "fuzz" in (config.getoption("markexpr", "") or ""):
        return
    deep = [item for item in items if item.get_closest_marker("fuzz") is not None]
    if deep:
        config.hook.pytest_deselected(items=deep)
        items[:] = [item for item in items if item.get_closest_marker("fuzz") is None]


# --- the dashboard's browser tests (tests/dashboard/, docs/dashboard.md) -----------------------------------


# Debian's ``chromium-headless-shell`` first: Chromium's own headless build, the one Playwright itself runs
# for headless tests. The same engine as the ``chromium`` browser at about two thirds of its CPU per test
# (a new context 0.17 s instead of 0.38 s, a dashboard load 0.31 s instead of 0.43 s on the 2-core VM).
_FULL_BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
_CHROMIUM_NAMES = ("chromium-headless-shell", *_FULL_BROWSERS)


def find_full_chromium() -> str | None:
    """The Chromium browser users run (Debian's ``chromium``), not its headless shell: None when only the
    shell, or nothing, is installed."""
    return next(filter(None, map(shutil.which, _FULL_BROWSERS)), None)


def find_chromium() -> str | None:
    """``LLMTS_CHROMIUM``, else a Chromium on PATH (Debian's ``chromium-headless-shell`` or ``chromium``)."""
    configured = os.environ.get("LLMTS_CHROMIUM")
    if configured:
        return configured if os.path.exists(configured) else None
    return next(filter(None, map(shutil.which, _CHROMIUM_NAMES)), None)


@pytest.fixture(scope="session")
def _chromium_of_the_worker() -> Iterator[tuple[Any, asyncio.AbstractEventLoop]]:
    """One headless Chromium per xdist worker, driven by Playwright, with Playwright's event loop: launched
    once, not once per module (a module's tests spread over the workers), ~0.7 s of CPU each time."""
    executable = find_chromium()
    if executable is None:
        pytest.skip(
            "no Chromium found: the dashboard's browser tests drive a real one "
            "(apt-get install chromium-headless-shell or chromium, or set LLMTS_CHROMIUM to its path)"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        loop = asyncio.get_running_loop()  # each sync call leaves Playwright's loop marked running
        try:
            yield browser, loop
        finally:
            asyncio._set_running_loop(loop)
            browser.close()


@pytest.fixture(scope="module")
def chromium(_chromium_of_the_worker: tuple[Any, asyncio.AbstractEventLoop]) -> Iterator[Any]:
    """The worker's headless Chromium, for one module. Playwright's sync API marks its event loop as
    running in this thread between calls, so ``asyncio.run`` refuses to start: the loop is marked only
    while a module that drives the browser runs, and other modules' tests run ``asyncio`` as usual."""
    browser, loop = _chromium_of_the_worker
    asyncio._set_running_loop(loop)
    try:
        yield browser
    finally:
        asyncio._set_running_loop(None)


@pytest.fixture(scope="session")
def dashboard_server(background_stops: BackgroundStops) -> Iterator[LlmTestServer]:
    """A real gunicorn server with a control key, so the dashboard must log in; one per xdist worker (the
    dashboard's tests work in sessions they create and find their rows by id or label)."""
    server = LlmTestServer.start(control_key=DASHBOARD_CONTROL_KEY)
    try:
        yield server
    finally:
        background_stops.stop(server)
