"""The pytest plugin, run for real: in a subprocess pytest where pytest-xdist or the run's processes are
the subject, else in an inner pytest in this process."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.helpers import alternating_session_ids
from tests.support.inner_pytest import run_in_process, run_in_subprocess

INNER_TESTS = """
import json, os, pathlib
import pytest
from llmts import ConfigBuilder

RECORD = pathlib.Path(os.environ["LLMTS_PLUGIN_RECORD"])

@pytest.mark.parametrize("n", range(12))
def test_session_is_private(llmts_server, llmts_session, llmts_openai, n):
    sid = llmts_session.id
    llmts_session.configure(ConfigBuilder().scenario().text(sid + "-1").text(sid + "-2").build())
    got = [
        llmts_openai.chat.completions.create(
            model="gpt-4.1-mini", messages=[{"role": "user", "content": "hi"}]
        ).choices[0].message.content
        for _ in range(2)
    ]
    assert got == [sid + "-1", sid + "-2"]
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    record = {"url": llmts_server.url, "session": sid, "worker": worker, "base": llmts_session.provider_base}
    (RECORD / f"{worker}-{n}.json").write_text(json.dumps(record))
"""


def _records(directory: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in directory.glob("*.json")]


def _port_open(url: str) -> bool:
    parts = urlsplit(url)
    try:
        socket.create_connection((parts.hostname, parts.port), timeout=1).close()
        return True
    except OSError:
        return False


def test_xdist_workers_share_the_runs_servers_by_worker_index_and_never_see_each_others_sessions(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    record = tmp_path / "record"
    record.mkdir()
    monkeypatch.setenv("LLMTS_PLUGIN_RECORD", str(record))
    monkeypatch.delenv("LLMTS_URL", raising=False)
    pytester.makepyfile(test_inner=INNER_TESTS)

    # Three workers on two servers (said explicitly: the default depends on the machine's CPU count): gw2
    # wraps around to gw0's server, so one run shows both the sharing and the spreading (each worker is an
    # interpreter that imports the SDK: more only cost time).
    result = run_in_subprocess(
        pytester, "-n", "3", "-p", "no:cacheprovider", "--llmts-servers", "2", "--dist", "load"
    )

    result.assert_outcomes(passed=12)
    records = _records(record)
    assert len(records) == 12
    assert len({r["session"] for r in records}) == 12, "every test has a session of its own"
    by_worker = {r["worker"]: r["url"] for r in records}
    assert all(by_worker[r["worker"]] == r["url"] for r in records), "a worker keeps one server"
    urls = set(by_worker.values())
    assert len(urls) == 2, f"two servers, got {urls}"
    # Worker index mod 2: gw0 and gw2 share one server, gw1 has the other.
    assert set(by_worker) == {"gw0", "gw1", "gw2"}, "all three workers ran tests"
    for worker, url in by_worker.items():
        index = int(worker[2:])
        assert all(by_worker[w] == url for w in by_worker if int(w[2:]) % 2 == index % 2)
        assert all(by_worker[w] != url for w in by_worker if int(w[2:]) % 2 != index % 2)
    # Each session lives on its worker's server and its provider_base names that server.
    assert all(r["base"] == f"{r['url']}/sessions/{r['session']}" for r in records), records
    assert not any(_port_open(url) for url in urls), "every server stops when the run ends"


def test_without_xdist_several_servers_share_the_sessions_by_id(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("LLMTS_PLUGIN_RECORD", str(tmp_path))
    monkeypatch.delenv("LLMTS_URL", raising=False)
    pytester.makepyfile(test_inner=INNER_TESTS)
    # Random ids whose last hex digits alternate in parity (the owner is the id's number modulo 2), so
    # both servers own some every run: 12 plain random ids all land on one server once in 2,048 runs.
    minted = alternating_session_ids()
    monkeypatch.setattr("llmts.client.server.new_session_id", lambda: next(minted))

    result = run_in_process(pytester, "-p", "no:xdist", "--llmts-servers", "2", preload=("openai",))

    result.assert_outcomes(passed=12)
    owners = {r["base"].split("/sessions/")[0] for r in _records(tmp_path)}
    assert len(owners) == 2, "ids of both parities land on both servers"
    assert not any(_port_open(url) for url in owners)


def test_default_server_count_follows_cpus_and_workers() -> None:
    from llmts.pytest.plugin import default_server_count

    assert default_server_count(1, 64) == 1  # no xdist: one server
    assert default_server_count(2, 2) == 1  # a 2-core machine: tests and servers share the cores
    assert default_server_count(32, 32) == 16
    assert default_server_count(4, 64) == 4  # never more servers than workers
    assert default_server_count(8, None) == 1


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="a zombie is recognised through procfs")
def test_stopping_a_server_nobody_reaps_returns_once_it_exited() -> None:
    # The run's server outlives the xdist worker that started it, so once it exits only init reaps it:
    # stopping it must not wait for that (here nobody reaps it until the end of the test).
    from llmts.pytest.plugin import _terminate

    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        started = time.monotonic()
        _terminate(process.pid, timeout=30)
        assert time.monotonic() - started < 10, "waited for the zombie to be reaped"
        assert process.wait(timeout=5) == -15, "SIGTERM stopped it, not SIGKILL"
    finally:
        process.kill()
        process.wait()


def test_invalid_server_count_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_inner="def test_one(llmts_server):\n    pass\n")
    result = run_in_process(pytester, "-p", "no:xdist", "--llmts-servers", "0")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*--llmts-servers must be at least 1*"])


def test_without_xdist_the_run_starts_and_stops_its_server(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("LLMTS_PLUGIN_RECORD", str(tmp_path))
    monkeypatch.delenv("LLMTS_URL", raising=False)
    pytester.makepyfile(test_inner=INNER_TESTS)

    result = run_in_process(
        pytester,
        "-p",
        "no:xdist",
        "test_inner.py::test_session_is_private[0]",
        "test_inner.py::test_session_is_private[1]",
        preload=("openai",),
    )

    result.assert_outcomes(passed=2)
    (url,) = {r["url"] for r in _records(tmp_path)}
    assert not _port_open(url)


def test_llmts_url_attaches_to_external_servers_spread_over_xdist_workers(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, own_server_factory: Any
) -> None:
    first, second = own_server_factory(), own_server_factory()
    monkeypatch.setenv("LLMTS_PLUGIN_RECORD", str(tmp_path))
    monkeypatch.delenv("LLMTS_URL", raising=False)
    pytester.makepyfile(test_inner=INNER_TESTS)

    result = run_in_subprocess(
        pytester, "-n", "2", "-p", "no:cacheprovider", "--llmts-url", f"{first.url},{second.url}"
    )

    result.assert_outcomes(passed=12)
    by_worker = {r["worker"]: r["url"] for r in _records(tmp_path)}
    assert by_worker == {"gw0": first.url, "gw1": second.url}  # worker index mod 2
    assert first.health() and second.health(), "attached servers are left running"
    # Every test's session was deleted afterwards: only the default session remains.
    assert [s["id"] for s in first.sessions()] == ["default"]
    assert [s["id"] for s in second.sessions()] == ["default"]

    # One URL, from the environment, without xdist: every test uses it.
    for stale in tmp_path.glob("*.json"):
        stale.unlink()
    monkeypatch.setenv("LLMTS_URL", first.url)
    result = run_in_process(pytester, "-p", "no:xdist", "-p", "no:cacheprovider", preload=("openai",))

    result.assert_outcomes(passed=12)
    assert {r["url"] for r in _records(tmp_path)} == {first.url}
    assert first.health(), "an attached server is left running"
    assert [s["id"] for s in first.sessions()] == ["default"]


def test_tests_that_need_no_server_start_none(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # A server started makes its working directory (llmts-*/server.log) in the temporary directory: the run
    # gets one of its own to look in.
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setenv("TMPDIR", str(temporary))
    pytester.makepyfile(test_plain="def test_nothing():\n    assert True\n")
    result = run_in_subprocess(pytester, "-n", "1", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert not list(temporary.glob("llmts-*")), "a server was started"


# The fixtures the contract names, one per provider's own SDK (a new provider's comes on top).
_CONTRACT_SDK_FIXTURES = {
    "llmts_openai",
    "llmts_anthropic",
    "llmts_gemini",
    "llmts_azure_openai",
    "llmts_bedrock",
    "llmts_cohere",
    "llmts_ollama",
}


def test_the_sdk_fixtures_are_made_from_the_providers_declarations() -> None:
    from llmts.catalog.registry import CATALOG
    from llmts.pytest import plugin

    declared = {
        spec.fixture: name
        for name in CATALOG.sdk_client_names()
        if (spec := CATALOG.sdk_client(name)[1]).fixture
    }
    assert set(declared) >= _CONTRACT_SDK_FIXTURES
    assert set(plugin.__all__) >= set(declared)
    docs = (Path(__file__).resolve().parents[2] / "docs" / "pytest-plugin.md").read_text()
    assert [name for name in declared if f"`{name}`" not in docs] == [], "docs/pytest-plugin.md names each"
    assert declared["llmts_bedrock"] == "bedrock_client"


def test_a_missing_sdk_fails_the_test_saying_what_to_install(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
import pytest

class _NoSdks:
    def __getattr__(self, name):
        def build():
            raise ModuleNotFoundError("No module named " + repr(name))
        return build

@pytest.fixture
def llmts_session():
    return _NoSdks()
"""
    )
    pytester.makepyfile(test_inner="def test_one(llmts_gemini):\n    pass\n")
    result = run_in_process(pytester, "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*llmts: this fixture needs the google-genai package (No module named 'gemini_client'); "
         "pip install google-genai*"]
    )  # fmt: skip
