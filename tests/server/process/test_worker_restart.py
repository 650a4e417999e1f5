"""A killed gevent worker is loud (docs/deployment.md, "When a worker dies"): gunicorn replaces it with an
empty one, and every request naming a session it lost gets 500 ``llm_test_server_worker_restarted``
instead of a quiet 404, ``/ready`` answers 503 from then on, the arbiter and the ``--workers``
supervisor log it, and new sessions (and the other processes of ``--workers N``) keep working."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from llmts import ConfigBuilder, LlmTestServer, SessionClient
from llmts.client import ServerError, new_session_id
from tests.helpers import OPENAI_CHAT_PATH, USER_HI, RawResponse, free_port, parent_pid, raw_request
from tests.support.servers import BackgroundStops

pytestmark = [
    pytest.mark.sdk,
    pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="finds the gunicorn worker in /proc"),
]

CODE = "llm_test_server_worker_restarted"
# A busy 2-core machine: gunicorn notices the death and boots a worker in well under a second, but allow
# for a loaded machine (polls, never a fixed sleep).
WAIT_SECONDS = 90.0


def _kill_worker(member: LlmTestServer, master: int | None = None) -> int:
    """SIGKILL the gevent worker of one server process (the gunicorn master's child); its pid."""
    worker = int(member.process_stats()["pid"])
    if master is not None:
        assert parent_pid(worker) == master, "the worker is the gunicorn master's child"
    assert worker != parent_pid(worker)
    os.kill(worker, signal.SIGKILL)
    return worker


def _wait_replaced(member: LlmTestServer, old: int) -> int:
    """Poll until gunicorn's replacement worker answers; its pid."""
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        try:
            pid = int(member.process_stats()["pid"])
            if pid != old:
                return pid
        except (OSError, ServerError):
            pass  # the old worker is gone and the new one is not listening yet
        assert time.monotonic() < deadline, f"no replacement worker within {WAIT_SECONDS} s"
        time.sleep(0.05)


def _wait_for_line(path: Path, text: str) -> str:
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        for line in path.read_text(errors="replace").splitlines():
            if text in line:
                return line
        assert time.monotonic() < deadline, f"no log line with {text!r}:\n{path.read_text()[-3000:]}"
        time.sleep(0.05)


def _session_on(server: LlmTestServer, member: LlmTestServer, text: str) -> SessionClient:
    """A session with one scripted answer, on the given process (ids are owned by ``int(id) mod N``)."""
    while server.owner(session_id := new_session_id()).url != member.url:
        pass
    return server.create_session(session_id, config=ConfigBuilder().scenario().text(text).text(text))


def _answer(session: SessionClient) -> str | None:
    client = session.openai_client(_strict_response_validation=True, max_retries=0)
    reply = client.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI)
    return reply.choices[0].message.content


def _chat(url: str, path_prefix: str = "", headers: dict[str, str] | None = None) -> RawResponse:
    body = {"model": "gpt-4.1-mini", "messages": USER_HI}
    return raw_request(url, "POST", path_prefix + OPENAI_CHAT_PATH, body, headers=headers)


def _assert_names_the_restart(message: str, old: int, new: int) -> None:
    assert f"pid {old}" in message and "SIGKILL" in message, message
    assert f"pid {new}" in message and "restarted" in message, message


@pytest.fixture
def started(background_stops: BackgroundStops) -> Iterator[list[LlmTestServer]]:
    servers: list[LlmTestServer] = []
    yield servers
    for server in servers:
        background_stops.stop(server)


def test_workers_2_a_killed_worker_fails_its_lost_sessions_loudly_and_the_rest_keep_serving(
    started: list[LlmTestServer], tmp_path: Path
) -> None:
    restart_file = tmp_path / "restarts"
    server = LlmTestServer.start(workers=2, extra_args=["--restart-file", str(restart_file)])
    started.append(server)
    supervisor = server.process
    assert supervisor is not None and server.log_path is not None
    first, second = server.members()
    kept = _session_on(server, first, "kept")
    lost = _session_on(server, second, "lost")
    assert _answer(kept) == "kept" and _answer(lost) == "lost"

    old = _kill_worker(second, master=parent_pid(int(second.process_stats()["pid"])))
    new = _wait_replaced(second, old)

    # The official SDK raises its typed 5xx error, never NotFoundError.
    client = lost.openai_client(_strict_response_validation=True, max_retries=0)
    with pytest.raises(openai.InternalServerError) as caught:
        client.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI)
    assert caught.value.status_code == 500 and caught.value.code == CODE
    _assert_names_the_restart(caught.value.message, old, new)

    # Raw HTTP: the provider's envelope, the code, the message and no retry (by path and by header).
    for reply in (
        _chat(second.url, f"/sessions/{lost.id}"),
        _chat(second.url, headers={"X-Llm-Test-Server-Session": lost.id}),
    ):
        assert reply.status == 500, reply.body
        error = reply.json()["error"]
        assert error["code"] == CODE and error["type"] == "server_error"
        assert lost.id in error["message"]
        _assert_names_the_restart(error["message"], old, new)
        assert reply.headers["x-should-retry"] == "false"
    # Control routes answer in the control envelope.
    control = raw_request(second.url, "GET", f"/admin-api/sessions/{lost.id}")
    assert control.status == 500 and control.json()["error"]["code"] == CODE
    assert control.json()["error"]["details"] == []
    with pytest.raises(ServerError) as failed:
        lost.requests()
    assert failed.value.status == 500 and failed.value.code == CODE

    # /ready says why from now on; /health stays live.
    ready = raw_request(second.url, "GET", "/ready")
    assert ready.status == 503
    assert ready.json()["status"] == "worker_restarted"
    _assert_names_the_restart(ready.json()["reason"], old, new)
    assert ready.json()["worker_restart"]["previous_pid"] == old
    assert ready.json()["worker_restart"]["worker_pid"] == new
    assert raw_request(second.url, "GET", "/health").status == 200
    assert raw_request(first.url, "GET", "/ready").status == 200

    # The other process's sessions are untouched; a new session on the restarted process works.
    assert _answer(kept) == "kept"
    assert _answer(_session_on(server, second, "fresh")) == "fresh"

    # The Python API and the supervisor's log surface it; the supervisor keeps serving.
    (reason,) = server.worker_restarts()
    assert reason.startswith(second.url) and f"pid {old}" in reason
    _wait_for_line(server.log_path, f"llmts: worker pid {old} was killed by SIGKILL")
    line = _wait_for_line(server.log_path, "llmts: server process 1 ")
    assert second.url in line and f"pid {old}" in line and CODE in line
    assert supervisor.poll() is None
    (event,) = [json.loads(line) for line in restart_file.read_text().splitlines()]
    assert event["process"] == 1 and event["url"] == second.url and event["previous_pid"] == old

    # A graceful stop still works after the restart.
    server.stop()
    assert supervisor.returncode == 0


def test_one_instance_a_killed_worker_loses_every_session_and_the_default_until_reset(
    started: list[LlmTestServer], tmp_path: Path
) -> None:
    """Also: the restart file gets one JSON line per restart (one server, one restart, for both)."""
    restarts = tmp_path / "restarts"
    fixtures = ConfigBuilder().scenario().text("one").text("two")
    server = LlmTestServer.start(fixtures=fixtures, extra_args=["--restart-file", str(restarts)])
    started.append(server)
    assert server.process is not None
    default = server.default_session
    assert _answer(default) == "one"
    lost = server.create_session(config=ConfigBuilder().scenario().text("lost"))
    assert _answer(lost) == "lost"

    old = _kill_worker(server, master=server.process.pid)  # `llmts serve` is the gunicorn master
    new = _wait_replaced(server, old)
    deadline = time.monotonic() + WAIT_SECONDS
    while not restarts.exists() or not restarts.read_text().endswith("\n"):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    (line,) = restarts.read_text().splitlines()
    event = json.loads(line)
    assert event["previous_pid"] == old and event["previous_exit"] == "was killed by SIGKILL"
    assert event["server_pid"] == server.pid and event["ended_at"].endswith("Z")
    assert CODE in event["message"]

    with pytest.raises(openai.InternalServerError) as caught:
        _answer(lost)
    assert caught.value.code == CODE
    _assert_names_the_restart(caught.value.message, old, new)
    # Anthropic's envelope too (its SDK's typed 5xx error).
    anthropic_client = lost.anthropic_client(_strict_response_validation=True, max_retries=0)
    with pytest.raises(anthropic.InternalServerError) as anthropic_caught:
        anthropic_client.messages.create(model="claude-sonnet-4-5", max_tokens=16, messages=USER_HI)
    assert anthropic_caught.value.status_code == 500
    _assert_names_the_restart(anthropic_caught.value.message, old, new)

    # The default session's state (queue position, journal) is gone too: it would answer "one" again.
    with pytest.raises(openai.InternalServerError) as default_caught:
        _answer(default)
    assert default_caught.value.code == CODE
    assert "default session" in default_caught.value.message
    assert "/admin-api/reset" in default_caught.value.message
    for path in ("/admin-api/requests", "/admin-api/configuration", "/admin-api/queues"):
        reply = raw_request(server.url, "GET", path)
        assert reply.status == 500 and reply.json()["error"]["code"] == CODE, path

    # Resetting (or configuring) the default session starts it over, knowingly.
    default.reset()
    assert _answer(default) == "one"
    assert len(default.requests()) == 1
    # Sessions created from now on work; the unknown ones still fail; /ready stays 503.
    assert _answer(server.create_session(config=ConfigBuilder().scenario().text("new"))) == "new"
    assert _chat(server.url, f"/sessions/{lost.id}").status == 500
    assert raw_request(server.url, "GET", "/ready").status == 503
    assert raw_request(server.url, "GET", "/health").status == 200
    assert len(server.worker_restarts()) == 1

    process = server.process
    server.stop()
    assert process.returncode == 0


def test_plain_gunicorn_with_llmts_worker_reports_the_restart(tmp_path: Path) -> None:
    """Under gunicorn's own arbiter the worker still knows it is a replacement (its generation); the
    message then cannot name the old worker's end."""
    url = f"http://127.0.0.1:{free_port()}"
    command = [sys.executable, "-m", "gunicorn", "-k", "llmts.server.worker.LlmtsWorker", "-w", "1"]
    command += ["--no-control-socket", "-b", url.removeprefix("http://"), "llmts.app:create_app()"]
    log = tmp_path / "gunicorn.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        member = LlmTestServer.attach(url, timeout=WAIT_SECONDS)
        old = _kill_worker(member, master=process.pid)
        new = _wait_replaced(member, old)
        ready = raw_request(url, "GET", "/ready")
        assert ready.status == 503 and ready.json()["status"] == "worker_restarted"
        reason: Any = ready.json()["reason"]
        assert f"pid {new}" in reason and "restarted" in reason
        reply = _chat(url)
        assert reply.status == 500 and reply.json()["error"]["code"] == CODE
    finally:
        process.terminate()
        process.wait(60)


def test_describe_end_names_the_signal_or_the_exit_status() -> None:
    from llmts.server.process.worker_restarts import describe_end

    assert describe_end(os.CLD_KILLED, signal.SIGKILL) == "was killed by SIGKILL"
    assert describe_end(os.CLD_DUMPED, signal.SIGSEGV) == "was killed by SIGSEGV (core dumped)"
    assert describe_end(os.CLD_EXITED, 3) == "exited with status 3"
    assert describe_end(os.CLD_EXITED, 0) == "exited with status 0"
    assert describe_end(os.CLD_KILLED, 200) == "was killed by signal 200"
