"""A fork server for the run's pytest-xdist workers (docs/design/test-suite.md, "The workers' zygote").

Each xdist worker is an interpreter that imports the official SDKs before it can collect (about 2 s of
its 4.5 s of collection on the 2-core VM; ``anthropic`` alone about 1 s), five of them at once before the
first test runs. The zygote is one process of the run that imports those libraries once and forks a child
per worker, which then runs what the worker's interpreter would have run.

How a worker gets one: execnet starts a ``popen`` worker as ``<python> -u -c <bootstrap>``, where
``<python>`` is the spec's ``python=`` command line. The controller (``tests/conftest.py``) gives it this
file in ``connect`` mode, run by an interpreter without ``site`` (``-S``: a few milliseconds): it passes
its standard input, output and error (execnet's pipes) to the zygote over a Unix socket with its
environment and working directory, closes its own copies, and waits for the child's exit status, which it
exits with. The forked child becomes ``python -u -c <bootstrap>`` on those descriptors: the same pipes,
environment, directory, ``sys.argv``, ``sys.path[0]`` and standard streams, its own random state. When the
zygote cannot be reached the client runs the interpreter itself (``os.execv``), as execnet would have.

What the zygote imports must not be asserted on: pytest rewrites the asserts of the modules of every
distribution that declares a pytest plugin when pytest imports them, so those stay out (``llmts``,
``hypothesis``, pytest-xdist); ``anyio``, which the SDKs import, is one, and setup.cfg silences pytest's
warning that it was imported before pytest could rewrite it. ``LLMTS_TEST_WORKER_ZYGOTE=0`` starts every
worker from a fresh interpreter.

Only the standard library is imported at the top: the client runs without ``site``.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import shlex
import signal
import socket
import struct
import subprocess
import sys
import tempfile
from typing import Any, NoReturn

__all__ = ["WorkerZygote"]

# The libraries the xdist workers import, that no pytest plugin's distribution owns (see above), heaviest
# first: what each worker imports while it collects, then what most import as their tests run (bpe_openai
# 0.43 s, cohere's clients 0.14 s, Playwright 0.26 s; measured in a run's workers, 2026-12-05). One missing
# (an optional extra) is skipped.
_PRELOADED = (
    "anthropic",
    "openai",
    "mcp",
    "mcp.types",
    "google.genai",
    "ollama",
    "cohere",
    "cohere.client_v2",
    "boto3",
    "botocore.session",
    "bpe_openai",
    "playwright.sync_api",
    "a2a.client",
    "numpy",
    "av",
    "soundfile",
    "PIL.Image",
    "jsonschema",
    "yaml",
    "werkzeug",
    "httpx",
    "pydantic",
    "orjson",
)

_LENGTH = struct.Struct("!I")
_STREAMS = 3  # standard input, output and error


# --- the controller's side ------------------------------------------------------------------------------


class WorkerZygote:
    """The zygote process of a run, started by the xdist controller, and the ``popen`` spec that makes
    execnet's workers come from it. ``close`` ends it (the workers it forked have ended by then)."""

    def __init__(self, process: subprocess.Popen[bytes], address: str, folder: str) -> None:
        self._process = process
        self._folder = folder
        client = [sys.executable, "-S", os.path.abspath(__file__), "connect", address]
        self.spec = "popen//python=" + shlex.join(client)

    @classmethod
    def start(cls, preload: tuple[str, ...] = _PRELOADED) -> WorkerZygote:
        folder = tempfile.mkdtemp(prefix="llmts-zygote-")
        address = os.path.join(folder, "socket")
        # Listening before the zygote runs: a worker connects at once and waits in the backlog while the
        # zygote starts and imports, instead of finding no socket and starting an interpreter itself.
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
            listener.bind(address)
            listener.listen(64)
            # -u: the flags the workers' interpreters would have had (execnet passes -u).
            command = [sys.executable, "-u", os.path.abspath(__file__), "serve", str(listener.fileno())]
            process = subprocess.Popen(
                [*command, *preload], stdin=subprocess.PIPE, pass_fds=[listener.fileno()]
            )
        return cls(process, address, folder)

    @property
    def client(self) -> list[str]:
        """The command line execnet runs, less its ``-u -c <bootstrap>``."""
        return shlex.split(self.spec.partition("python=")[2])

    def close(self) -> None:
        assert self._process.stdin is not None
        with contextlib.suppress(OSError):
            self._process.stdin.close()  # the zygote ends at the end of its input
        try:
            self._process.wait(10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(self._folder, "socket"))
        with contextlib.suppress(OSError):
            os.rmdir(self._folder)


# --- the client: what execnet starts ----------------------------------------------------------------------


def _connect(address: str, argv: list[str]) -> NoReturn:
    """Hand this process's streams to a child of the zygote and exit with that child's status."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C is the worker's to handle
    request = json.dumps({"argv": argv, "env": dict(os.environ), "cwd": os.getcwd()}).encode()
    try:
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        connection.connect(address)
        socket.send_fds(connection, [_LENGTH.pack(len(request))], list(range(_STREAMS)))
        connection.sendall(request)
    except OSError:
        os.execv(sys.executable, [sys.executable, *argv])  # no zygote: the interpreter itself
    null = os.open(os.devnull, os.O_RDWR)
    for fd in range(_STREAMS):  # the child holds execnet's pipes alone: their end is its end
        os.dup2(null, fd)
    answer = b""
    while chunk := connection.recv(64):
        answer += chunk
    status = int(answer) if answer.strip().lstrip(b"-").isdigit() else 1
    if status < 0:  # killed by a signal: so is this process, as execnet would have seen the interpreter
        signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    os._exit(status & 0xFF)


# --- the zygote ---------------------------------------------------------------------------------------------


def _preload(names: list[str]) -> None:
    import gc
    import importlib

    for name in names:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    gc.collect()
    gc.freeze()  # what the imports made stays out of every child's collections, as in a worker


def _serve(listener: socket.socket, preload: list[str]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # it ends with the controller's input, not Ctrl-C
    _preload(preload)
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    children: dict[int, socket.socket] = {}  # a running child's pid -> its client's connection
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "client")
    selector.register(wake_read, selectors.EVENT_READ, "child")
    selector.register(sys.stdin.buffer, selectors.EVENT_READ, "controller")
    while True:
        for key, _ in selector.select():
            if key.data == "controller":
                if not sys.stdin.buffer.read1(4096):
                    return  # the controller is done (or gone)
            elif key.data == "child":
                os.read(wake_read, 4096)
                _reap(children, selector)
            elif key.data == "client":
                _fork_worker(listener, children, selector)
            else:  # a client's connection: it ended before its child, so the child has no one to serve
                selector.unregister(key.fileobj)
                with contextlib.suppress(ProcessLookupError):
                    os.kill(key.data, signal.SIGKILL)


def _fork_worker(
    listener: socket.socket, children: dict[int, socket.socket], selector: selectors.BaseSelector
) -> None:
    connection, _ = listener.accept()
    connection.settimeout(10)
    try:
        header, fds, _, _ = socket.recv_fds(connection, _LENGTH.size, _STREAMS)
        (length,) = _LENGTH.unpack(header)
        payload = b""
        while len(payload) < length:
            chunk = connection.recv(length - len(payload))
            if not chunk:
                raise OSError("the client left mid-request")
            payload += chunk
        request = json.loads(payload)
    except (OSError, ValueError, struct.error):
        connection.close()
        return
    pid = os.fork()
    if pid == 0:
        _become(request, fds)
    for fd in fds:
        os.close(fd)
    children[pid] = connection
    selector.register(connection, selectors.EVENT_READ, pid)


def _reap(children: dict[int, socket.socket], selector: selectors.BaseSelector) -> None:
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        connection = children.pop(pid, None)
        if connection is None:
            continue
        with contextlib.suppress(KeyError):  # still registered unless its client ended first
            selector.unregister(connection)
        with contextlib.suppress(OSError):
            connection.sendall(str(os.waitstatus_to_exitcode(status)).encode())
        connection.close()


def _become(request: dict[str, Any], fds: list[int]) -> NoReturn:
    """In the forked child: become ``python -u -c <code>`` on the client's streams."""
    code = 1
    try:
        import io
        import random
        import types

        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.set_wakeup_fd(-1)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        os.closerange(_STREAMS, 1 << 16)
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        argv = request["argv"]
        source = argv[argv.index("-c") + 1]
        sys.argv = ["-c", *argv[argv.index("-c") + 2 :]]
        sys.path[0] = ""  # as for ``-c``: the working directory
        sys.dont_write_bytecode = "-B" in argv[: argv.index("-c")]
        random.seed()  # a state of its own, as a fresh interpreter's
        sys.stdin = sys.__stdin__ = open(0, closefd=False)  # noqa: SIM115 (the interpreter's own stream)
        for fd, name in ((1, "stdout"), (2, "stderr")):  # -u: unbuffered, as execnet starts workers
            stream = io.TextIOWrapper(
                io.FileIO(fd, "w", closefd=False),
                write_through=True,
                errors="backslashreplace" if fd == 2 else None,
            )
            setattr(sys, name, stream)
            setattr(sys, f"__{name}__", stream)
        main = types.ModuleType("__main__")
        sys.modules["__main__"] = main
        exec(compile(source, "<string>", "exec"), main.__dict__)  # execnet's bootstrap
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        import atexit

        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)


if __name__ == "__main__":
    if sys.argv[1] == "connect":
        _connect(sys.argv[2], sys.argv[3:])
    sys.path[0] = ""  # not this file's folder; each child's is its worker's
    _serve(socket.socket(fileno=int(sys.argv[2])), sys.argv[3:])
