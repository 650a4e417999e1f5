"""``llmts serve`` and plain gunicorn, as real subprocesses."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from llmts import LlmTestServer
from llmts.server.process.settings import load_fixtures_file
from tests.helpers import USER_HI, free_port, raw_request

_URL = re.compile(r"llmts listening on (http://\S+)")


class _Proc:
    def __init__(self, args: list[str], env: dict[str, str] | None = None) -> None:
        self.popen = subprocess.Popen(
            args,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            env={**os.environ, **(env or {})},
        )

    def url_from_stdout(self, timeout: float = 20) -> str:
        assert self.popen.stdout is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.popen.stdout.readline().decode()
            match = _URL.search(line)
            if match:
                return match.group(1)
            if not line and self.popen.poll() is not None:
                break
        raise AssertionError(
            "no URL printed: " + self.popen.stderr.read().decode() if self.popen.stderr else ""
        )

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.kill()
        self.popen.wait(10)
        for pipe in (self.popen.stdout, self.popen.stderr):
            if pipe is not None:
                pipe.close()


@pytest.fixture
def procs() -> Iterator[list[_Proc]]:
    started: list[_Proc] = []
    yield started
    for proc in started:
        proc.stop()


def _serve(procs: list[_Proc], *args: str, env: dict[str, str] | None = None) -> _Proc:
    proc = _Proc([sys.executable, "-m", "llmts", "serve", *args], env)
    procs.append(proc)
    return proc


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_port_zero_prints_url_and_signals_stop_cleanly(procs: list[_Proc], signum: int) -> None:
    proc = _serve(procs, "--port", "0")
    url = proc.url_from_stdout()
    LlmTestServer.attach(url)

    proc.popen.send_signal(signum)

    assert proc.popen.wait(15) == 0
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1])), timeout=1).close()


def test_env_settings_and_access_log(procs: list[_Proc]) -> None:
    port = free_port()
    proc = _serve(procs, env={"LLMTS_PORT": str(port), "LLMTS_HOST": "127.0.0.1", "LLMTS_CONTROL_KEY": "ck"})
    url = proc.url_from_stdout()
    assert url == f"http://127.0.0.1:{port}"
    assert raw_request(url, "GET", "/admin-api/sessions").status == 401
    raw_request(url, "GET", "/health")

    proc.popen.send_signal(signal.SIGTERM)
    out, _ = proc.popen.communicate(timeout=15)
    access_lines = [line for line in out.decode().splitlines() if "GET /health" in line]
    assert len(access_lines) == 1 and " 200 " in access_lines[0]


def test_json_log_format_writes_one_json_object_per_line(procs: list[_Proc]) -> None:
    proc = _serve(procs, "--port", "0", "--log-format", "json")
    url = proc.url_from_stdout()
    raw_request(url, "GET", "/health", headers={"User-Agent": 'probe "x" \x9b[2J'})  # CSI, a C1 escape
    raw_request(url, "GET", "/openai/v1/nope%0aFORGED")
    raw_request(url, "POST", "/openai/v1/chat/completions", {"model": "gpt-4.1-mini", "messages": USER_HI})

    proc.popen.send_signal(signal.SIGTERM)
    out, err = proc.popen.communicate(timeout=15)
    access = [json.loads(line) for line in out.decode().splitlines() if line.startswith("{")]
    assert [(a["method"], a["path"], a["status"]) for a in access] == [
        ("GET", "/health", 200),
        ("GET", "/openai/v1/nope%0aFORGED", 404),
        ("POST", "/openai/v1/chat/completions", 200),
    ]
    assert access[0]["user_agent"] == 'probe "x" \x9b[2J' and access[0]["type"] == "access"
    assert all(a["duration_ms"] >= 0 and a["bytes"] > 0 and a["remote"] == "127.0.0.1" for a in access)
    log_lines = [line for line in err.decode().splitlines() if line.strip()]
    assert log_lines, "gunicorn logs its start and stop"
    records = [json.loads(line) for line in log_lines]  # every error-log line is one JSON object
    assert {r["type"] for r in records} == {"log"} and any("Booting worker" in r["message"] for r in records)


def test_fixtures_file_configures_default_session(procs: list[_Proc], tmp_path: Path) -> None:
    """A YAML file served by a real ``llmts serve``; a JSON file with the same content loads (in process,
    with the loader ``serve`` runs) to the same configuration."""
    fixtures = tmp_path / "fixtures.yaml"
    fixtures.write_text("scenarios:\n  - responses:\n      - text: from file\n")
    as_json = tmp_path / "fixtures.json"
    as_json.write_text('{"scenarios": [{"responses": [{"text": "from file"}]}]}')
    assert load_fixtures_file(as_json) == load_fixtures_file(fixtures)
    url = _serve(procs, "--port", "0", "--fixtures", str(fixtures)).url_from_stdout()

    response = raw_request(
        url, "POST", "/openai/v1/chat/completions", {"model": "gpt-4.1-mini", "messages": USER_HI}
    )

    assert response.json()["choices"][0]["message"]["content"] == "from file"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"scenarios": [{"responses": [{"text": "a", "json": 1}]}]}', "scenarios[0].responses[0]"),
        ("{broken", "not valid JSON"),
        ('{"models": "gpt"}', "models"),
    ],
)
def test_invalid_fixtures_file_stops_start_up(
    cli: Callable[..., tuple[int, str, str]], tmp_path: Path, content: str, expected: str
) -> None:
    """Through ``llmts serve``'s ``main`` in process: the file is checked before anything starts (the real
    process's exit with 2 is ``test_missing_fixtures_file``'s)."""
    fixtures = tmp_path / "bad.json"
    fixtures.write_text(content)

    status, out, err = cli("serve", "--port", "0", "--fixtures", str(fixtures))

    assert status == 2
    assert str(fixtures) in err
    assert expected in err
    assert "listening" not in out


def test_fixtures_over_the_memory_budget_stop_start_up(
    cli: Callable[..., tuple[int, str, str]], tmp_path: Path
) -> None:
    """The default session's configuration is charged to ``--max-memory`` like any other (docs/journal.md,
    "Process memory budget"): one that cannot fit stops the start, not the worker's boot."""
    fixtures = tmp_path / "many.json"
    fixtures.write_text(json.dumps({"scenarios": [{"responses": [{"text": f"a{n}"} for n in range(600)]}]}))

    status, out, err = cli("serve", "--port", "0", "--max-memory", "1M", "--fixtures", str(fixtures))

    assert status == 2 and "listening" not in out
    assert err.startswith("llmts: --fixtures: the configuration needs ") and "--max-memory is 1048576" in err
    with pytest.raises(AssertionError, match="would have started a server"):  # it fits 2M
        cli("serve", "--port", "0", "--max-memory", "2M", "--fixtures", str(fixtures))


def test_missing_fixtures_file(tmp_path: Path) -> None:
    """The real process exits with 2, naming the file, for every start-up check that ``main`` fails."""
    result = subprocess.run(
        [sys.executable, "-m", "llmts", "serve", "--fixtures", str(tmp_path / "nope.yaml")],
        capture_output=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 2
    assert "nope.yaml" in result.stderr.decode()


def test_plain_gunicorn_with_create_app(procs: list[_Proc], tmp_path: Path) -> None:
    fixtures = tmp_path / "f.json"
    fixtures.write_text('{"scenarios": [{"responses": [{"text": "plain gunicorn"}]}]}')
    port = free_port()
    proc = _Proc(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "-k",
            "gevent",
            "-w",
            "1",
            "--no-control-socket",
            "-b",
            f"127.0.0.1:{port}",
            "llmts.app:create_app()",
        ],
        {"LLMTS_FIXTURES": str(fixtures)},
    )
    procs.append(proc)
    url = f"http://127.0.0.1:{port}"
    LlmTestServer.attach(url, timeout=20)

    response = raw_request(
        url, "POST", "/openai/v1/chat/completions", {"model": "gpt-4.1-mini", "messages": USER_HI}
    )

    assert response.json()["choices"][0]["message"]["content"] == "plain gunicorn"


def test_server_exits_with_its_parent(tmp_path: Path) -> None:
    """A server started for a test run stops by itself when the run's process dies."""
    parent = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        server = LlmTestServer.start(parent_pid=parent.pid)
        assert server.process is not None
        parent.kill()
        parent.wait()
        assert server.process.wait(15) == 0
    finally:
        parent.kill()
        server.stop()


def test_a_missing_gevent_is_a_start_up_error_in_the_arbiter(monkeypatch: pytest.MonkeyPatch) -> None:
    """The arbiter holds stand-ins for the gevent workers (llmts/server/worker.py) and never imports gevent;
    gunicorn's ``check_config`` still says so before the fork, instead of every worker failing to boot."""
    import importlib.util

    import llmts.server.worker as worker

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "gevent" else real(name, *a)
    )
    for stand_in in (worker.LlmtsWorker, worker.LlmtsGeventWorker):
        with pytest.raises(RuntimeError, match="need gevent"):
            stand_in.check_config(None, None)
    monkeypatch.undo()
    worker.LlmtsWorker.check_config(None, None)  # gevent is installed here
