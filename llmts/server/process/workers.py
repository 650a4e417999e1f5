"""``llmts serve --workers N``: N independent server processes, each on its own port, each owning its
sessions (docs/deployment.md, "Every core of one machine").

A session lives in exactly one process, so the processes never share a listening socket: process ``i``
listens on ``--port`` + ``i`` (each on a free port with ``--port 0``), and the ``provider_base`` a
process returns names its own port, so every client reaches a session's owner directly. Clients spread
sessions over the processes (the Python API by session id, the pytest plugin by xdist worker index, a
load balancer by hashing the id). This supervisor only starts, watches and stops them: it is never in a
request's path. When one process dies the supervisor stops the others and exits non-zero: a partial
server would answer 404 for the lost sessions with no one told why. When only a process's gunicorn worker
dies, gunicorn replaces it and that process answers its lost sessions with 500
``llm_test_server_worker_restarted`` (server/process/worker_restarts.py); the supervisor reads the process's
``--restart-file``, logs the restart and keeps every process serving.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType

__all__ = ["serve_workers", "worker_ports"]

# Seconds the processes have to start listening.
_START_TIMEOUT = 60.0
_POLL_SECONDS = 0.05


def _popen(args: list[str], env: dict[str, str] | None) -> subprocess.Popen[bytes]:
    # A session of its own: a terminal's Ctrl-C reaches only this supervisor, which stops them gracefully.
    return subprocess.Popen(args, stdin=subprocess.DEVNULL, env=env, start_new_session=True)


# How each process starts (``python -m llmts serve ...``). The test suite's server template, whose forked
# children already hold llmts's modules, forks them instead (tests/support/server_template.py), as
# ``llmts.client.server._launch`` for the servers it starts.
_start: Callable[[list[str], dict[str, str] | None], subprocess.Popen[bytes]] = _popen


def worker_ports(port: int, workers: int) -> list[int]:
    """The port of each process: consecutive from ``port``, or all free ports (0) when ``port`` is 0."""
    return [0 if port == 0 else port + index for index in range(workers)]


def serve_workers(
    child_args: Sequence[str],
    *,
    port: int,
    workers: int,
    ready_file: str | None,
    parent_pid: int | None,
    stop_timeout: float,
    env: dict[str, str] | None = None,
    restart_file: str | None = None,
) -> int:
    """Run ``workers`` ``llmts serve`` processes with ``child_args`` (everything but port, ready file and
    parent pid); return the exit status once they are stopped (SIGTERM/SIGINT) or one of them died.
    A worker restart inside a process is logged (and appended to ``restart_file``), not fatal."""
    stop = threading.Event()

    def _on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    workdir = Path(tempfile.mkdtemp(prefix="llmts-workers-"))
    children: list[subprocess.Popen[bytes]] = []
    try:
        for index, child_port in enumerate(worker_ports(port, workers)):
            args = [sys.executable, "-m", "llmts", "serve", *child_args, "--port", str(child_port)]
            args += ["--ready-file", str(workdir / f"{index}.url"), "--parent-pid", str(os.getpid())]
            args += ["--restart-file", str(workdir / f"{index}.restarts")]
            children.append(_start(args, env))
        urls = _wait_ready(children, workdir, stop)
        if urls is None:
            return 1 if not stop.is_set() else 0
        print(f"llmts: {workers} server processes: {' '.join(urls)}", flush=True)
        if ready_file:
            partial = ready_file + ".partial"
            Path(partial).write_text("\n".join(urls) + "\n")
            os.replace(partial, ready_file)
        files = [workdir / f"{index}.restarts" for index in range(workers)]
        restarts = _RestartWatch(files, urls, restart_file)
        return _supervise(children, stop, parent_pid, restarts)
    finally:
        _stop_all(children, stop_timeout)
        for leftover in workdir.iterdir():
            leftover.unlink(missing_ok=True)
        workdir.rmdir()


def _wait_ready(
    children: list[subprocess.Popen[bytes]], workdir: Path, stop: threading.Event
) -> list[str] | None:
    files = [workdir / f"{index}.url" for index in range(len(children))]
    deadline = time.monotonic() + _START_TIMEOUT
    while not all(path.exists() for path in files):
        if stop.is_set():
            return None
        for index, child in enumerate(children):
            if child.poll() is not None:
                print(
                    f"llmts: server process {index} exited with {child.returncode} during start-up",
                    file=sys.stderr,
                    flush=True,
                )
                return None
        if time.monotonic() > deadline:
            print(f"llmts: the server processes did not start within {_START_TIMEOUT:g} s", file=sys.stderr)
            return None
        time.sleep(_POLL_SECONDS)
    return [path.read_text().strip() for path in files]


class _RestartWatch:
    """The processes' restart files: each new line is one worker that died in that process."""

    def __init__(self, files: list[Path], urls: list[str], restart_file: str | None) -> None:
        self._files = files
        self._urls = urls
        self._read = [0] * len(files)
        self._restart_file = restart_file

    def poll(self) -> None:
        for index, path in enumerate(self._files):
            try:
                with open(path, "rb") as handle:
                    handle.seek(self._read[index])
                    data = handle.read()
            except FileNotFoundError:
                continue
            complete = data[: data.rfind(b"\n") + 1]  # a line still being written waits for the next poll
            self._read[index] += len(complete)
            for line in complete.splitlines():
                self._report(index, line)

    def _report(self, index: int, line: bytes) -> None:
        try:
            event = json.loads(line)
            message = str(event["message"])
        except (ValueError, KeyError, TypeError):
            event, message = {}, line.decode(errors="replace")
        if self._restart_file:  # before the log line, so whoever reads the log finds the event written
            event.update(process=index, url=self._urls[index])
            try:
                with open(self._restart_file, "a") as handle:
                    handle.write(json.dumps(event) + "\n")
            except OSError as exc:
                print(f"llmts: cannot append to --restart-file: {exc}", file=sys.stderr, flush=True)
        where = f"server process {index} ({self._urls[index]})"
        print(f"llmts: {where}: {message}; the other processes keep serving", file=sys.stderr, flush=True)


def _supervise(
    children: list[subprocess.Popen[bytes]],
    stop: threading.Event,
    parent_pid: int | None,
    restarts: _RestartWatch,
) -> int:
    while not stop.wait(0.2):
        if parent_pid is not None and not _alive(parent_pid):
            return 0
        restarts.poll()
        for index, child in enumerate(children):
            if child.poll() is not None:
                print(
                    f"llmts: server process {index} exited with {child.returncode}; stopping the others "
                    "(its sessions are gone)",
                    file=sys.stderr,
                    flush=True,
                )
                return 1
    return 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _stop_all(children: list[subprocess.Popen[bytes]], timeout: float) -> None:
    """SIGTERM every process (each drains its in-flight streams), SIGKILL what outlives ``timeout``."""
    for child in children:
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + timeout
    for child in children:
        try:
            child.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
