"""The suite's server template (tests/support/server_template.py; docs/design/test-suite.md, "The server
template"): its servers are ``llmts serve`` processes that report their exit like ``subprocess.Popen``,
and what must start from a fresh interpreter does."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from llmts import LlmTestServer
from tests.helpers import parent_pid
from tests.support.server_template import ServerTemplate, TemplateChild


def test_a_server_forked_from_the_template_serves_and_reports_its_exit(
    own_server_factory: Callable[..., LlmTestServer],
) -> None:
    server = own_server_factory(control_key="template-key", extra_args=["--max-sessions", "3"])
    assert isinstance(server.process, TemplateChild)
    session = server.create_session()
    answer = session.openai_client(max_retries=0).chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": "Hi"}]
    )
    assert answer.choices[0].message.content  # the default scenario's text
    stats = server.process_stats()
    assert int(stats["pid"]) != server.process.pid  # gunicorn's worker, forked by the arbiter

    assert server.process.poll() is None
    with pytest.raises(subprocess.TimeoutExpired):
        server.process.wait(0.05)
    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(15) == 0  # a graceful stop, as `llmts serve` exits
    assert "Shutting down: Master" in (server.log_path or Path()).read_text()


def test_an_invalid_option_is_the_clis_exit_status_and_message(tmp_path: Path) -> None:
    template = ServerTemplate()
    try:
        log = tmp_path / "server.log"
        args = [sys.executable, "-m", "llmts", "serve", "--port", "0", "--max-sessions", "0"]
        child = template.launch(args, log, dict(os.environ))
        assert child.wait(15) == 2
        assert "--max-body-bytes and --max-sessions must be positive" in log.read_text()
    finally:
        template.close()


def test_another_pythonpath_starts_a_fresh_interpreter(tmp_path: Path) -> None:
    template = ServerTemplate()
    try:
        log = tmp_path / "server.log"
        args = [sys.executable, "-m", "llmts", "--version"]
        env = {**os.environ, "PYTHONPATH": str(tmp_path)}
        process = template.launch(args, log, env)
        assert isinstance(process, subprocess.Popen)
        assert process.wait(15) == 0
        assert log.read_text().startswith("llmts ")
    finally:
        template.close()


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads parent pids from /proc")
def test_a_workers_supervisor_forks_its_processes_and_stops_them(
    own_server_factory: Callable[..., LlmTestServer],
) -> None:
    """The supervisor of ``--workers`` forked by the template forks its processes too, and they are what
    ``llmts serve`` runs: each serves its own sessions, and a graceful stop ends every one with 0."""
    server = own_server_factory(workers=2, access_log=False)
    assert isinstance(server.process, TemplateChild)
    members = server.members()
    arbiters = []
    for member in members:
        session = member.create_session()
        answer = session.openai_client(max_retries=0).chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": "Hi"}]
        )
        assert answer.choices[0].message.content
        arbiters.append(parent_pid(int(member.process_stats()["pid"])))
    for arbiter in arbiters:
        assert parent_pid(arbiter) == server.process.pid  # the supervisor's children
        assert b"server_template.py" in Path(f"/proc/{arbiter}/cmdline").read_bytes()  # no new interpreter
    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(30) == 0
    assert not any(Path(f"/proc/{arbiter}").exists() for arbiter in arbiters)
    # Each process stopped gracefully (gunicorn's arbiter says so as it exits), into the supervisor's log.
    assert (server.log_path or Path()).read_text().count("Shutting down: Master") == 2


@pytest.mark.fresh_interpreter
def test_a_fresh_interpreter_test_starts_llmts_serve_itself(
    own_server_factory: Callable[..., LlmTestServer],
) -> None:
    server = own_server_factory(access_log=False)
    assert isinstance(server.process, subprocess.Popen)
    assert server.process.args[1:4] == ["-m", "llmts", "serve"]
    assert server.health()
