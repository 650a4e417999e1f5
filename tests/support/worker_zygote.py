"""A fork server for the run's pytest-xdist workers (docs/design/test-suite.md, "The workers' zygote").

Each xdist worker is an interpreter that imports the official SDKs before it can collect (about 2 s of
its 4.5 s of collection on the 2-core VM; ``anthropic`` alone about 1 s), five of them at once before the
first test runs. The zygote is one process of the run that imports those libraries once and forks a child
per worker, which then runs what the worker's interpreter would have run.

How a worker gets one: execnet starts a ``popen`` worker as ``<python> -u -c <bootstrap>``, where
``<python>`` is the spec's ``python=`` command line. The controller (``tests/conftest.py``) gives it this
file in ``connect`` mode, run by an interpreter without ``site`` (``-S``: a few milliseconds): it passes
its standard input, output and error (execnet's pipes) to the zygote over a Unix socket with its
environment and working directory; once the zygote says it forked, it closes its own copies and waits for
the child's exit status, which it exits with (or dies of its signal). The forked child becomes ``python -u
-c <bootstrap>`` on those descriptors: the same pipes, environment, directory, ``sys.argv``,
``sys.path[0]``, unbuffered standard streams, its own random state; it ends as the interpreter does
(non-daemon threads joined, exit handlers run, a ``KeyboardInterrupt`` kills it with SIGINT). What differs:
the zygote's string-hash seed, shared by every worker (as the server template's children share theirs).
When the zygote cannot be reached, or the client's ``PYTHON*`` variables differ from the zygote's (they
are read as an interpreter starts), the client runs the interpreter itself (``os.execv``), as execnet
would have; except folders put first on ``PYTHONPATH`` (as pytester's subprocess runs put theirs), which
the child puts first on ``sys.path``, unless one holds a module the zygote imported. The run's inner
xdist runs take their workers from the zygote too (``SPEC_VARIABLE``, tests/support/inner_pytest.py).
The socket is in Linux's abstract namespace: no path to outlive the run.

What the zygote imports must not be asserted on: pytest rewrites the asserts of the modules of every
distribution that declares a pytest plugin when pytest imports them, so those stay out (``llmts``,
``hypothesis``, pytest-xdist); ``anyio``, which the SDKs import, is one, and setup.cfg silences pytest's
warning that it was imported before pytest could rewrite it. The imports run under the run's warning
filters; what they still warn is printed (pytest would have shown it from a worker's collection), and the
filters they add are undone.
``LLMTS_TEST_WORKER_ZYGOTE=0`` starts every worker from a fresh interpreter.

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
import warnings
from collections.abc import Sequence
from typing import Any, NoReturn

__all__ = ["SPEC_VARIABLE", "WorkerZygote"]

# Where a run with a zygote tells its processes the zygote's ``popen`` spec: inner xdist runs
# (tests/support/inner_pytest.py) take their workers from it too.
SPEC_VARIABLE = "LLMTS_TEST_WORKER_ZYGOTE_SPEC"

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

    def __init__(self, process: subprocess.Popen[bytes], address: str) -> None:
        self._process = process
        client = [sys.executable, "-S", os.path.abspath(__file__), "connect", address]
        self.spec = "popen//python=" + shlex.join(client)

    @classmethod
    def start(
        cls,
        preload: tuple[str, ...] = _PRELOADED,
        config_filters: Sequence[str] = (),
        cmdline_filters: Sequence[str] = (),
    ) -> WorkerZygote | None:
        """The zygote, or None where it cannot listen (not Linux: no abstract socket namespace).
        ``config_filters`` (``filterwarnings``) and ``cmdline_filters`` (``-W``) are the run's, which a
        worker's collection would have applied to these imports."""
        if not sys.platform.startswith("linux"):
            return None
        address = f"@llmts-zygote-{os.getpid()}-{os.urandom(6).hex()}"
        # Listening before the zygote runs: a worker connects at once and waits in the backlog while the
        # zygote starts and imports, instead of finding no socket and starting an interpreter itself.
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
            listener.bind(_socket_name(address))
            listener.listen(64)
            # -u: the flags the workers' interpreters would have had (execnet passes -u).
            command = [sys.executable, "-u", os.path.abspath(__file__), "serve", str(listener.fileno())]
            # The run's filters, and whether the interpreter was given any (pytest adds its defaults if not).
            command.append(json.dumps([list(config_filters), list(cmdline_filters), bool(sys.warnoptions)]))
            process = subprocess.Popen(
                [*command, *preload], stdin=subprocess.PIPE, pass_fds=[listener.fileno()]
            )
        return cls(process, address)

    @property
    def client(self) -> list[str]:
        """The command line execnet runs, less its ``-u -c <bootstrap>``."""
        return shlex.split(self.spec.partition("python=")[2])

    def close(self) -> None:
        """End the zygote now, importing or not (a run that started no worker: ``--collect-only``)."""
        self._process.kill()
        self._process.wait()
        assert self._process.stdin is not None
        with contextlib.suppress(OSError):
            self._process.stdin.close()


def _socket_name(address: str) -> str:
    """``@name`` (a command line holds no NUL) is the abstract socket ``\\0name``."""
    return "\0" + address[1:]


# --- the client: what execnet starts ----------------------------------------------------------------------


def _connect(address: str, argv: list[str]) -> NoReturn:
    """Hand this process's streams to a child of the zygote and exit with that child's status."""
    request = json.dumps({"argv": argv, "env": dict(os.environ), "cwd": os.getcwd()}).encode()
    try:
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        connection.connect(_socket_name(address))
        socket.send_fds(connection, [_LENGTH.pack(len(request))], list(range(_STREAMS)))
        connection.sendall(request)
        answer = connection.makefile("rb")
        forked = answer.readline()  # "forked", or "exec" (run it yourself), or nothing (the zygote failed)
    except OSError:
        forked = b""
    if forked != b"forked\n":
        os.execv(sys.executable, [sys.executable, *argv])  # the interpreter itself, as execnet runs it
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C is the worker's to handle
    null = os.open(os.devnull, os.O_RDWR)
    for fd in range(_STREAMS):  # the child holds execnet's pipes alone: their end is its end
        os.dup2(null, fd)
    text = answer.read().strip()
    # Killed by a signal: so is this process, as execnet would have seen the interpreter.
    _exit_as(int(text) if text.lstrip(b"-").isdigit() else 1)


def _exit_as(status: int) -> NoReturn:
    """Exit with ``status`` as ``subprocess`` reports it: a negative one is death by that signal."""
    if status < 0:
        with contextlib.suppress(OSError, ValueError):  # SIGKILL and SIGSTOP take no handler: already default
            signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    os._exit(status & 0xFF)


# --- the zygote ---------------------------------------------------------------------------------------------


def _preload(names: list[str], warning_filters: list[Any]) -> None:
    """Import ``names`` under the warning filters pytest applies while a worker collects
    (``Config._catch_configured_warnings``: ``[config filters, -W filters, interpreter had its own]``);
    what fails or warns is printed, the filters the imports add are undone."""
    import gc
    import importlib
    import traceback

    from _pytest.config import apply_warning_filters  # pytest's own reading of the filter lines

    config_filters, cmdline_filters, interpreter_has_filters = warning_filters
    with warnings.catch_warnings(record=True) as caught:
        if not interpreter_has_filters:  # as pytest: its defaults only where the interpreter has none
            warnings.filterwarnings("always", category=DeprecationWarning)
            warnings.filterwarnings("always", category=PendingDeprecationWarning)
        apply_warning_filters(config_filters, cmdline_filters)
        for name in names:
            try:
                importlib.import_module(name)
            except ImportError:
                pass  # an optional extra not installed: its tests skip
            except Exception:  # the workers import it themselves, and fail the way they would have
                print(f"llmts worker zygote: importing {name} failed:", file=sys.stderr)
                traceback.print_exc()
    for warning in caught:
        text = warnings.formatwarning(
            warning.message, warning.category, warning.filename, warning.lineno, warning.line
        )
        print(f"llmts worker zygote: {text}", end="", file=sys.stderr)
    gc.collect()
    gc.freeze()  # what the imports made stays out of every child's collections, as in a worker


def _serve(listener: socket.socket, preload: list[str], warning_filters: list[Any]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # it ends with the controller's input, not Ctrl-C
    _preload(preload, warning_filters)
    settings = _interpreter_settings(os.environ)
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
                _fork_worker(listener, children, selector, settings)
            elif children.get(key.data) is key.fileobj:  # not reaped during this select
                # A client's connection: it ended before its child, which has no one left to serve.
                selector.unregister(key.fileobj)
                with contextlib.suppress(ProcessLookupError):
                    os.kill(key.data, signal.SIGKILL)


def _fork_worker(
    listener: socket.socket,
    children: dict[int, socket.socket],
    selector: selectors.BaseSelector,
    settings: dict[str, str],
) -> None:
    connection, _ = listener.accept()
    connection.settimeout(10)
    fds: list[int] = []
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
        added = _added_path(request["env"], settings)
        if added is None:
            connection.sendall(b"exec\n")  # read as an interpreter starts: the client runs one itself
            raise OSError("other interpreter settings")
        request["added_path"] = added
    except (OSError, ValueError, KeyError, TypeError, struct.error):
        for fd in fds:
            os.close(fd)
        connection.close()
        return
    with warnings.catch_warnings():
        # Python 3.12+ warns of a fork in a process with threads. The zygote's only ones are OpenBLAS's
        # idle pool, which numpy's import starts and OpenBLAS shuts down around a fork (pthread_atfork).
        warnings.filterwarnings("ignore", r".*multi-threaded, use of fork\(\)", DeprecationWarning)
        pid = os.fork()
    if pid == 0:
        _become(request, fds)
    for fd in fds:
        os.close(fd)
    try:
        connection.sendall(b"forked\n")
    except OSError:  # the client is gone: so is the child's reason to run
        os.kill(pid, signal.SIGKILL)
    children[pid] = connection
    selector.register(connection, selectors.EVENT_READ, pid)


def _interpreter_settings(env: dict[str, str] | os._Environ[str]) -> dict[str, str]:
    return {key: value for key, value in env.items() if key.startswith("PYTHON")}


def _added_path(env: dict[str, str], settings: dict[str, str]) -> list[str] | None:
    """The folders a client's ``PYTHONPATH`` puts before the zygote's (pytester's subprocess runs put their
    own folder first), when that is all that differs in its interpreter settings and none of them holds a
    module the zygote imported (which would shadow it in a fresh interpreter); else None."""
    theirs, ours = _interpreter_settings(env), dict(settings)
    path, mine = theirs.pop("PYTHONPATH", ""), ours.pop("PYTHONPATH", "")
    if theirs != ours or not path.endswith(mine):
        return None
    head = path[: len(path) - len(mine)]
    if mine and head:
        if not head.endswith(os.pathsep):
            return None
        head = head[: -len(os.pathsep)]
    added = head.split(os.pathsep) if head else []
    if "" in added:
        return None  # an empty entry is the working directory, wherever the worker runs
    import importlib.machinery

    imported = {name.partition(".")[0] for name in sys.modules}
    suffixes = tuple(importlib.machinery.all_suffixes())
    for folder in added:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue  # a folder that does not exist adds nothing to import
        # What an import could find there: a package (a folder) or a module file (not a pytest.ini).
        names = {
            entry.name.partition(".")[0]
            for entry in entries
            if entry.is_dir() or entry.name.endswith(suffixes)
        }
        if names & imported:
            return None
    return added


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
    """In the forked child: become ``python -u -c <code>`` on the client's streams, and end as it would."""
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
        sys.path[1:1] = [os.path.abspath(folder) for folder in request["added_path"]]  # PYTHONPATH's
        sys.dont_write_bytecode = "-B" in argv[: argv.index("-c")]
        random.seed()  # a state of its own, as a fresh interpreter's
        encoding, _, errors = os.environ.get("PYTHONIOENCODING", "").partition(":")
        stdin = open(0, encoding=encoding or None, errors=errors or None, closefd=False)  # noqa: SIM115
        sys.stdin = sys.__stdin__ = stdin
        for fd, name in ((1, "stdout"), (2, "stderr")):  # -u: unbuffered, as execnet starts workers
            stream = io.TextIOWrapper(
                io.FileIO(fd, "w", closefd=False),
                encoding=encoding or None,
                errors="backslashreplace" if fd == 2 else (errors or None),
                write_through=True,
            )
            setattr(sys, name, stream)
            setattr(sys, f"__{name}__", stream)
        main = types.ModuleType("__main__")
        sys.modules["__main__"] = main
        exec(compile(source, "<string>", "exec"), main.__dict__)  # execnet's bootstrap
        code = 0
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            code = (exc.code or 0) & 0xFF  # as the interpreter's exit(): a byte, never a signal
        else:  # as the interpreter: the message to stderr, status 1
            print(exc.code, file=sys.stderr)
    except KeyboardInterrupt:
        import traceback

        traceback.print_exc()
        code = -signal.SIGINT  # the interpreter dies of SIGINT then
    except BaseException:
        import traceback

        traceback.print_exc()
    _end(code)


def _end(code: int) -> NoReturn:
    """The interpreter's end: non-daemon threads joined, exit handlers run, streams flushed."""
    import atexit
    import threading

    with contextlib.suppress(BaseException):
        threading._shutdown()  # type: ignore[attr-defined]
    with contextlib.suppress(BaseException):
        atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    _exit_as(code)


if __name__ == "__main__":
    if sys.argv[1] == "connect":
        _connect(sys.argv[2], sys.argv[3:])
    sys.path[0] = ""  # not this file's folder; each child's is its worker's
    _serve(socket.socket(fileno=int(sys.argv[2])), sys.argv[4:], json.loads(sys.argv[3]))
