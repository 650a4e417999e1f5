"""Every core of one machine: ``llmts serve --workers N`` (N processes, N ports, each owning its sessions)
and the refusal of ``gunicorn -w N`` (docs/deployment.md)."""

from __future__ import annotations

import itertools
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from llmts import ConfigBuilder, LlmTestServer
from llmts.client import new_session_id
from llmts.server.process.workers import worker_ports
from tests.helpers import USER_HI, alternating_session_ids, free_port, parent_pid, raw_request
from tests.support.server_template import fresh_interpreter
from tests.support.servers import BackgroundStops

pytestmark = pytest.mark.sdk

_KEY = "ctl-secret"
_CONTROL = {"Authorization": f"Bearer {_KEY}"}


def _listening(url: str) -> bool:
    parts = urlsplit(url)
    try:
        socket.create_connection((parts.hostname, parts.port), timeout=1).close()
        return True
    except OSError:
        return False


def _wait_closed(urls: list[str], timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while any(_listening(url) for url in urls):
        assert time.monotonic() < deadline, f"still listening: {[u for u in urls if _listening(u)]}"
        time.sleep(0.1)


def test_worker_ports_are_consecutive_or_all_free() -> None:
    assert worker_ports(8080, 3) == [8080, 8081, 8082]
    assert worker_ports(0, 2) == [0, 0]


def test_each_process_owns_its_sessions_and_names_its_own_port(configured: LlmTestServer) -> None:
    server = configured
    assert len(server.urls) == 2 and len(set(server.urls)) == 2
    first, second = server.members()
    # A session created on one process is unknown to the other: sessions are never split.
    session_id = new_session_id()
    created = raw_request(first.url, "PUT", f"/admin-api/sessions/{session_id}", headers=_CONTROL)
    assert created.json()["provider_base"] == f"{first.url}/sessions/{session_id}"
    assert raw_request(second.url, "GET", f"/admin-api/sessions/{session_id}", headers=_CONTROL).status == 404

    # The Python API spreads sessions by id and talks to each one's owner only. The ids' last hex digits
    # alternate in parity, so both processes own some (the owner is the id's number modulo 2).
    ids = list(itertools.islice(alternating_session_ids(), 8))
    sessions = [
        server.create_session(session_id, config=ConfigBuilder().scenario().text(f"s{i}"))
        for i, session_id in enumerate(ids)
    ]
    owners = {session.provider_base.split("/sessions/")[0] for session in sessions}
    assert owners == set(server.urls)
    for index, session in enumerate(sessions):
        owner = server.owner(session.id)
        assert session.provider_base == f"{owner.url}/sessions/{session.id}"
        reply = session.openai_client(max_retries=0).chat.completions.create(
            model="gpt-4.1-mini", messages=USER_HI
        )
        assert reply.choices[0].message.content == f"s{index}"
        assert server.session(session.id).provider_base == session.provider_base
    listed = {s["id"] for s in server.sessions()}
    assert {s.id for s in sessions} <= listed
    pids = {member.process_stats()["pid"] for member in server.members()}
    assert len(pids) == 2


@pytest.fixture(scope="module")
def base_port() -> int:
    return free_port(2)


@pytest.fixture(scope="module")
def configured(background_stops: BackgroundStops, base_port: int) -> Iterator[LlmTestServer]:
    """Two processes from a fixed base port, with keys and a setting, for the tests that only look at
    them (one start of the N-process server for both); from a fresh interpreter, whose processes are
    started with command lines (the suite's server template forks them)."""
    with fresh_interpreter():
        server = LlmTestServer.start(
            port=base_port,
            workers=2,
            control_key=_KEY,
            extra_args=["--metrics-key", "m-key", "--ws-idle-timeout", "7.5"],
        )
    try:
        yield server
    finally:
        background_stops.stop(server)


def test_fixed_base_port_gives_consecutive_ports(configured: LlmTestServer, base_port: int) -> None:
    assert [urlsplit(url).port for url in configured.urls] == [base_port, base_port + 1]
    assert [urlsplit(member.url).port for member in configured.members()] == [base_port, base_port + 1]


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads parent pids from /proc")
def test_one_process_dying_stops_the_others_and_the_supervisor_fails() -> None:
    server = LlmTestServer.start(workers=2)
    try:
        assert server.process is not None
        worker = server.members()[1].process_stats()["pid"]
        victim = parent_pid(worker)  # the process's gunicorn master (it would respawn a killed worker)
        assert victim != server.process.pid
        os.kill(victim, signal.SIGKILL)
        assert server.process.wait(30) == 1
        _wait_closed(server.urls)
    finally:
        server.stop()


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="reads command lines from /proc")
def test_every_process_gets_the_settings_and_keys_stay_off_command_lines(configured: LlmTestServer) -> None:
    for member in configured.members():
        assert raw_request(member.url, "GET", "/admin-api/sessions").status == 401
        assert raw_request(member.url, "GET", "/metrics").status == 401
        metrics = raw_request(member.url, "GET", "/metrics", headers={"Authorization": "Bearer m-key"})
        assert metrics.status == 200
        assert member.sessions()[0]["id"] == "default"  # the client sends the control key
        worker = member.process_stats()["pid"]
        for pid in (worker, parent_pid(worker)):
            assert b"secret" not in Path(f"/proc/{pid}/cmdline").read_bytes()
            assert b"m-key" not in Path(f"/proc/{pid}/cmdline").read_bytes()
        assert b"\0--ws-idle-timeout\x007.5\0" in Path(f"/proc/{worker}/cmdline").read_bytes()


def test_supervisor_sigterm_stops_every_process_and_reports_no_restart() -> None:
    """A graceful stop ends every process with 0 and is no worker restart (tests/server/process/
    test_worker_restart.py has the restarts): no restart is logged or listed."""
    server = LlmTestServer.start(workers=2)
    try:
        assert server.process is not None and server.log_path is not None
        assert server.worker_restarts() == []
        assert all(raw_request(url, "GET", "/ready").status == 200 for url in server.urls)
        server.process.send_signal(signal.SIGTERM)
        assert server.process.wait(60) == 0
        _wait_closed(server.urls)
        log = server.log_path.read_text()
        assert "llmts: worker pid" not in log and "llm_test_server_worker_restarted" not in log, log[-3000:]
    finally:
        server.stop()


def test_invalid_worker_count_is_refused(cli: Callable[..., tuple[int, str, str]]) -> None:
    status, _, err = cli("serve", "--workers", "0")  # main in process: refused before anything starts
    assert status == 2
    assert "--workers must be at least 1" in err


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (["-w", "2"], {}),
        (["-w", "3", "--preload"], {}),
        ([], {"WEB_CONCURRENCY": "2"}),
    ],
    ids=["workers", "preload", "web-concurrency"],
)
def test_plain_gunicorn_with_several_workers_refuses_to_start(args: list[str], env: dict[str, str]) -> None:
    command = [sys.executable, "-m", "gunicorn", "-k", "gevent", "--no-control-socket"]
    command += ["-b", f"127.0.0.1:{free_port()}", *args, "llmts.app:create_app()"]
    result = subprocess.run(
        command, capture_output=True, timeout=60, env={**os.environ, **env}, stdin=subprocess.DEVNULL
    )
    assert result.returncode != 0
    err = result.stderr.decode()
    assert "refusing to run under" in err and "llmts serve --workers N" in err, err
