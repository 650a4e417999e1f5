"""A fork server for the suite's dedicated servers (docs/design/test-suite.md, "The server template").

A server started from a fresh interpreter spends about 0.45 s of CPU before it answers, nearly all of it
importing Python code (the CLI and gunicorn in the arbiter, the app in its forked worker); the suite
starts about a hundred. The template is one process per test process that imports those modules once
and forks a child per ``LlmTestServer.start``. The child runs what ``python -m llmts serve`` runs
(``llmts.server.cli.main`` with the same arguments and environment, stdout and stderr to the server's log,
a session of its own): the same arbiter, which forks the same gevent worker, which patches with gevent
before it loads the app. What differs is what gunicorn's ``preload_app`` changes: the app's modules
were imported before gevent patched, so the worker's boot only forks, patches and builds the app (about
0.07 s of CPU). A ``--workers`` supervisor forked here forks its processes too (``_fork_instance``). A test
whose subject is the boot itself (what the arbiter imports, resident memory, the interpreter's own start)
is marked ``fresh_interpreter`` and gets ``llmts serve`` from a fresh interpreter, as everything outside
the test suite does.

Run as a script, this file is the template: it reads one JSON request per line on stdin (``argv``,
``env``, ``cwd``, ``log``, ``exit_file``), answers each with the child's pid, and writes each child's exit
status to its ``exit_file`` when it reaps it. Imported, ``ServerTemplate`` starts it and hands out
``TemplateChild``\\ ren, which stand in for the ``subprocess.Popen`` objects of ``LlmTestServer.process``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, NoReturn

__all__ = ["ServerTemplate", "TemplateChild", "fresh_interpreter"]


@contextlib.contextmanager
def fresh_interpreter() -> Iterator[None]:
    """Servers started inside start from a fresh interpreter, as ``llmts serve`` elsewhere: for a fixture
    whose subject is the process (a module-scoped one starts before a test's ``fresh_interpreter`` marker
    applies)."""
    import llmts.client.server

    launch = llmts.client.server._launch
    llmts.client.server._launch = llmts.client.server._popen
    try:
        yield
    finally:
        llmts.client.server._launch = launch


class _Child:
    """What ``llmts.client.server`` and the ``--workers`` supervisor use of a ``subprocess.Popen``: ``pid``,
    ``returncode``, ``poll``, ``wait``, ``send_signal``, ``terminate`` and ``kill``; ``poll`` is each kind's
    own."""

    def __init__(self, pid: int, args: list[str]) -> None:
        self.pid = pid
        self.args = args
        self.returncode: int | None = None

    def poll(self) -> int | None:
        raise NotImplementedError

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while (code := self.poll()) is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
            time.sleep(0.01)
        return code

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class TemplateChild(_Child):
    """A server forked by the template, for the test process that asked for it. The template (its parent)
    reaps it and writes its exit status to ``exit_file``; until then it is running."""

    def __init__(self, pid: int, args: list[str], exit_file: Path) -> None:
        super().__init__(pid, args)
        self._exit_file = exit_file

    def poll(self) -> int | None:
        if self.returncode is None:
            text = self._read_exit_file()
            if text is None and not _exists(self.pid):
                # Reaped, and the template writes the status right after; or the template is gone and
                # init reaped it (its status is lost then).
                time.sleep(0.2)
                text = self._read_exit_file() or "-1"
            if text is not None:
                self.returncode = int(text)
        return self.returncode

    def _read_exit_file(self) -> str | None:
        try:
            return self._exit_file.read_text()
        except FileNotFoundError:
            return None


class _ForkedInstance(_Child):
    """One process of a ``--workers`` supervisor forked by the template, forked in turn by that
    supervisor, its parent, which reaps it."""

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode


def _interpreter_settings(env: Mapping[str, str]) -> dict[str, str]:
    return {key: value for key, value in env.items() if key.startswith("PYTHON")}


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class ServerTemplate:
    """The template process of this test process, started on first use and ended when this process
    exits (its children, servers with ``--parent-pid``, stop by themselves then too). An environment
    whose ``PYTHON*`` variables differ from the template's gets a fresh interpreter instead."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # one request and its answer at a time (servers start on threads)
        self._process: subprocess.Popen[bytes] | None = None
        self._owner = os.getpid()
        self._settings: dict[str, str] = {}  # the template's PYTHON* variables

    def launch(self, args: Sequence[str], log: Path, env: Mapping[str, str]) -> TemplateChild:
        """``llmts.client.server._launch``: ``args`` as ``LlmTestServer.start`` builds them (``python -m
        llmts serve ...``), the output to ``log``."""
        argv = list(args)
        if argv[1:3] != ["-m", "llmts"]:
            raise ValueError(f"the server template runs `python -m llmts ...`, not {argv}")
        exit_file = log.with_name(log.name + ".exit")
        request = {
            "argv": argv[3:],
            "env": dict(env),
            "cwd": os.getcwd(),
            "log": str(log),
            "exit_file": str(exit_file),
        }
        with self._lock:
            process = self._running()
            # Read as an interpreter starts (a PYTHONPATH that hides a package, say): the template's
            # modules were imported with the settings it started with.
            fresh = _interpreter_settings(env) != self._settings
            if not fresh:
                assert process.stdin is not None and process.stdout is not None
                process.stdin.write(json.dumps(request).encode() + b"\n")
                process.stdin.flush()
                answer = process.stdout.readline()
        if fresh:
            import llmts.client.server

            return llmts.client.server._popen(argv, log, dict(env))  # type: ignore[return-value]
        if not answer:
            raise RuntimeError(f"the server template (pid {process.pid}) ended")
        return TemplateChild(int(answer), argv, exit_file)

    def _running(self) -> subprocess.Popen[bytes]:
        if self._process is None or self._process.poll() is not None or self._owner != os.getpid():
            self._owner = os.getpid()
            self._settings = _interpreter_settings(os.environ)
            self._process = subprocess.Popen(
                [sys.executable, __file__],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                start_new_session=True,
            )
        return self._process

    def close(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None and self._owner == os.getpid():
            assert process.stdin is not None
            process.stdin.close()  # the template ends at the end of its input
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


# --- the template process -------------------------------------------------------------------------------


# In a server's order: the arbiter imports the CLI (and gunicorn, under the deferred ``ssl``; a ``--workers``
# supervisor its module) and the worker classes; its forked worker gevent, the app and the connection loop.
_PRELOADED = (
    "llmts.server.cli",
    "llmts.server.process.workers",
    "llmts.server.worker",
    "gevent",
    "gevent.monkey",
    "llmts.server.app",
    "llmts.server.http.connections",
)


def _preload() -> None:
    """What a ``llmts serve`` process imports, in its order: the arbiter's modules (the CLI, gunicorn under
    the deferred ``ssl``), then what its worker imports (the worker classes, gevent, the app)."""
    import gc
    import importlib

    for name in _PRELOADED:
        importlib.import_module(name)
    gc.collect()
    gc.freeze()  # as the arbiter does before it runs (server/process/gunicorn_app.py)


def _child(request: dict[str, Any]) -> None:
    """In the forked child: become ``python -m llmts <argv>`` and exit with its status."""
    try:
        log = os.open(request["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        _detach(request["env"], output=log)
        os.chdir(request["cwd"])
    except BaseException:
        _exit_with(1)
    _become(request["argv"])


def _fork_instance(args: list[str], env: dict[str, str] | None) -> subprocess.Popen[bytes]:
    """``llmts.server.process.workers._start`` in a server forked by the template: its ``--workers``
    supervisor forks each of its processes, as the template forks servers, instead of starting an
    interpreter (about 0.45 s of CPU each). Each runs what ``subprocess.Popen`` would have run: a session
    of its own, no input, the supervisor's output, ``env``."""
    from llmts.server.process import workers

    if args[1:3] != ["-m", "llmts"]:
        return workers._popen(args, env)
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    pid = os.fork()
    if pid == 0:
        try:
            _detach(env, output=None)
        except BaseException:
            _exit_with(1)
        _become(args[3:])
    return _ForkedInstance(pid, args)  # type: ignore[return-value]


def _detach(env: Mapping[str, str] | None, output: int | None) -> None:
    """In a forked child: what ``subprocess.Popen(..., start_new_session=True, stdin=DEVNULL)`` gives a
    new interpreter. A session of its own, an interpreter's signal handlers (not the template's or the
    supervisor's; Ctrl-C raises KeyboardInterrupt), no input, ``output`` (else the parent's) as stdout and
    stderr, no other descriptor, ``env`` (else the parent's) as the environment."""
    os.setsid()
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for signum in (signal.SIGTERM, signal.SIGCHLD):
        signal.signal(signum, signal.SIG_DFL)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    if output is not None:
        os.dup2(output, 1)
        os.dup2(output, 2)
    os.closerange(3, 1 << 16)
    if env is not None:
        os.environ.clear()
        os.environ.update(env)


def _become(argv: list[str]) -> NoReturn:
    """Run ``python -m llmts <argv>`` in this forked process and exit with its status."""
    code = 1
    try:
        import random

        from llmts.server.cli import main
        from llmts.server.process import workers

        random.seed()  # a state of its own, as a fresh interpreter's
        sys.argv = [sys.executable, *argv]
        workers._start = _fork_instance
        code = main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:
        _exit_with(1)
    _exit_with(code)


def _exit_with(code: int) -> NoReturn:
    """Print the exception being handled, if any, flush and leave without the parent's exit handlers."""
    if sys.exc_info()[0] is not None:
        import traceback

        traceback.print_exc()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # the log may be gone with its test's working directory
            stream.flush()
    os._exit(code)


def _reap(exit_files: dict[int, str]) -> None:
    while exit_files:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        path = exit_files.pop(pid, None)
        if path is None:
            continue
        code = os.waitstatus_to_exitcode(status)
        partial = path + ".partial"
        try:
            with open(partial, "w") as handle:
                handle.write(str(code))
            os.replace(partial, path)
        except OSError:  # the server's working directory is gone: nobody waits for it
            pass


def _serve(requests: IO[bytes], answers: IO[bytes]) -> None:
    import selectors

    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    exit_files: dict[int, str] = {}
    selector = selectors.DefaultSelector()
    selector.register(requests, selectors.EVENT_READ, "request")
    selector.register(wake_read, selectors.EVENT_READ, "child")
    while True:
        for key, _ in selector.select():
            if key.data == "child":
                os.read(wake_read, 4096)
                _reap(exit_files)
                continue
            line = requests.readline()
            if not line:
                # The test process closed its end, or exited. Servers still running go on (they stop with
                # the process named by their --parent-pid); the system reaps them.
                return
            request = json.loads(line)
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                _child(request)
            exit_files[pid] = request["exit_file"]
            answers.write(f"{pid}\n".encode())
            answers.flush()
        _reap(exit_files)


if __name__ == "__main__":
    sys.path[0] = os.getcwd()  # as ``python -m llmts`` has it, not this file's folder
    _preload()
    _serve(sys.stdin.buffer, sys.stdout.buffer)
