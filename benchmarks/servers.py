"""The benchmarks' server processes and their workload: llmts (``llmts serve`` as users start it, or a given
checkout's) and the floor app on gunicorn+gevent, started, pinned, measured from ``/proc`` and stopped;
the chat request every case sends, and the one-off check of each server's answer. Used by ``run.py``,
``compare.py``, ``scaling.py`` and ``realtime.py`` (benchmarks/README.md).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from loadgen import DONE

__all__ = [
    "MODEL",
    "PATH",
    "START_TIMEOUT",
    "STOP_TIMEOUT",
    "Server",
    "build_request",
    "check_answers",
    "configure_llmts",
    "cpus",
    "create_sessions",
    "http_request",
    "pin",
    "process_tree",
    "start_floor",
    "start_llmts",
    "tree_memory_mib",
]

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
MODEL = "gpt-4.1-mini"
PATH = "/openai/v1/chat/completions"
START_TIMEOUT = 30.0
STOP_TIMEOUT = 10.0


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as handle:
                found.extend(int(x) for x in handle.read().split())
        except (OSError, ValueError):
            continue
    return found


def process_tree(pid: int) -> list[int]:
    tree: list[int] = []
    todo = [pid]
    while todo and len(tree) < 1000:
        current = todo.pop()
        tree.append(current)
        todo.extend(_children(current))
    return tree


def _memory_kib(pid: int, path: str, field: str) -> int | None:
    try:
        text = Path(f"/proc/{pid}/{path}").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return None


def tree_memory_mib(pids: Sequence[int]) -> dict[str, list[float]]:
    """Per process, in order: resident memory (VmRSS, MiB) and its proportional share (Pss: pages shared
    between the arbiter and its forked worker count half in each), empty lists without /proc."""
    rss = [kib / 1024 for pid in pids if (kib := _memory_kib(pid, "status", "VmRSS")) is not None]
    pss = [kib / 1024 for pid in pids if (kib := _memory_kib(pid, "smaps_rollup", "Pss")) is not None]
    return {"rss": rss, "pss": pss}


def pin(pids: Sequence[int], cpu: int | None) -> None:
    """Pin every thread of the given processes to ``cpu``."""
    if cpu is None or not hasattr(os, "sched_setaffinity"):
        return
    for pid in pids:
        try:
            tids = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
        except OSError:
            tids = [pid]
        for tid in tids:
            with contextlib.suppress(OSError):
                os.sched_setaffinity(tid, {cpu})


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """A server subprocess in its own process group, with its output in a temporary log file."""

    def __init__(
        self, name: str, argv: list[str], env: dict[str, str] | None = None, cwd: Path = REPO
    ) -> None:
        self.name = name
        self.log = tempfile.NamedTemporaryFile(prefix=f"bench-{name}-", suffix=".log", delete=False)  # noqa: SIM115
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            cwd=str(cwd),
            env=env,
            start_new_session=True,
        )
        self.url = ""
        self.urls: list[str] = []  # one per server process (``llmts serve --workers N``)
        self.pids: list[int] = [self.proc.pid]

    def alive(self) -> bool:
        return self.proc.poll() is None

    def log_text(self) -> str:
        try:
            return Path(self.log.name).read_text(errors="replace")
        except OSError:
            return ""

    def fail(self, message: str) -> RuntimeError:
        tail = "\n".join(self.log_text().splitlines()[-30:])
        return RuntimeError(f"{self.name}: {message}\n--- server log (tail) ---\n{tail}")

    def wait_ready_file(self, ready: Path, deadline: float) -> str:
        """The text ``llmts serve --ready-file`` writes once it listens (its URL or URLs)."""
        while not ready.exists():
            if not self.alive():
                raise self.fail(f"exited with code {self.proc.returncode}")
            if time.monotonic() > deadline:
                raise self.fail("ready file never appeared")
            time.sleep(0.05)
        return ready.read_text()

    def wait_http(self, path: str, deadline: float) -> None:
        while time.monotonic() < deadline:
            if not self.alive():
                raise self.fail(f"exited with code {self.proc.returncode}")
            with contextlib.suppress(OSError, http.client.HTTPException):
                status, _ = http_request(self.url, "GET", path, timeout=2.0)
                if status == 200:
                    return
            time.sleep(0.05)
        raise self.fail(f"GET {path} did not answer 200 within {START_TIMEOUT:.0f} s")

    def wait_workers(self, deadline: float) -> None:
        """Wait until gunicorn's worker process exists, then remember the whole process tree."""
        while time.monotonic() < deadline:
            tree = process_tree(self.proc.pid)
            if len(tree) > 1 or not Path("/proc").is_dir():
                self.pids = tree
                return
            time.sleep(0.05)
        raise self.fail("no worker process appeared")

    def stop(self) -> None:
        pgid = self.proc.pid
        if self.alive():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGTERM)
            try:
                self.proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pgid, signal.SIGKILL)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.proc.wait(5)
        # Anything left in the group (an orphaned worker) gets SIGKILL.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, 0)
            os.killpg(pgid, signal.SIGKILL)
        self.log.close()


def http_request(
    base_url: str, method: str, path: str, body: Any = None, timeout: float = 10.0
) -> tuple[int, bytes]:
    parts = urlsplit(base_url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=timeout)
    try:
        headers = {"Authorization": "Bearer x"}
        payload = None
        if body is not None:
            payload = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        conn.request(method, path, body=payload, headers=headers)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def start_llmts(
    deadline: float,
    name: str = "llmts",
    *,
    quiet: bool | None = None,
    tree: Path | None = None,
    workers: int = 1,
) -> Server:
    """``llmts`` runs quiet (``--no-access-log``); ``default`` exactly as ``llmts serve`` starts; ``quiet``
    says so for another name. ``tree``: import the package from that checkout (run from it, so ``-m``
    finds it first) instead of this one. ``workers`` > 1: ``--workers N``, one URL per server process in
    ``urls`` (``url`` the first)."""
    ready = Path(tempfile.mkdtemp(prefix=f"bench-{name}-")) / "ready"
    argv = [sys.executable, "-m", "llmts", "serve", "--host", "127.0.0.1", "--port", "0"]
    if quiet is None:
        quiet = name == "llmts"
    if quiet:
        argv.append("--no-access-log")
    if workers > 1:
        argv += ["--workers", str(workers)]
    argv += ["--ready-file", str(ready), "--parent-pid", str(os.getpid())]
    env = dict(os.environ, PYTHONPATH=str(tree)) if tree is not None else None
    server = Server(name, argv, env, tree or REPO)
    try:
        server.urls = server.wait_ready_file(ready, deadline).split()
        for url in server.urls:
            server.url = url
            server.wait_http("/health", deadline)
        server.url = server.urls[0]
        server.wait_workers(deadline)
    except BaseException:
        server.stop()
        raise
    finally:
        with contextlib.suppress(OSError):
            ready.unlink()
            ready.parent.rmdir()
    return server


def _bench_config(chunks: list[str]) -> dict[str, Any]:
    return {
        "models": [MODEL],
        "scenarios": [
            {
                "id": "bench",
                "terminal_policy": "repeat_last_response",
                "responses": [{"text": "".join(chunks), "chunks": chunks}],
            }
        ],
    }


def configure_llmts(server: Server, chunks: list[str]) -> None:
    status, body = http_request(server.url, "POST", "/admin-api/configure", _bench_config(chunks))
    if status != 200:
        raise server.fail(f"configure failed: {status} {body[:300]!r}")


def create_sessions(server: Server, chunks: list[str], count: int) -> list[str]:
    """``count`` sessions, each configured like the default one; their path prefixes."""
    prefixes: list[str] = []
    for _ in range(count):
        status, body = http_request(server.url, "POST", "/admin-api/sessions")
        if status != 201:
            raise server.fail(f"session creation failed: {status} {body[:300]!r}")
        prefix = f"/sessions/{json.loads(body)['id']}"
        config = _bench_config(chunks)
        status, body = http_request(server.url, "POST", prefix + "/admin-api/configure", config)
        if status != 200:
            raise server.fail(f"configure failed: {status} {body[:300]!r}")
        prefixes.append(prefix)
    return prefixes


def start_floor(deadline: float, chunks: int) -> Server:
    port = _free_port()
    argv = [sys.executable, "-m", "gunicorn", "--no-control-socket", "-k", "gevent", "-w", "1"]
    argv += ["-b", f"127.0.0.1:{port}", "--graceful-timeout", "2", "--chdir", str(HERE), "floor_app:app"]
    env = dict(os.environ, LLMTS_BENCH_CHUNKS=str(chunks))
    server = Server("floor", argv, env)
    server.url = f"http://127.0.0.1:{port}"
    try:
        # The floor answers any path; a non-stream completion doubles as its health check.
        deadline_ok = deadline
        while True:
            if not server.alive():
                raise server.fail(f"exited with code {server.proc.returncode}")
            with contextlib.suppress(OSError, http.client.HTTPException):
                status, _ = http_request(server.url, "POST", PATH, _body(False), timeout=2.0)
                if status == 200:
                    break
            if time.monotonic() > deadline_ok:
                raise server.fail("did not answer within the start-up timeout")
            time.sleep(0.05)
        server.wait_workers(deadline)
    except BaseException:
        server.stop()
        raise
    return server


# --------------------------------------------------------------------------------------------------
# Requests and their one-off validation
# --------------------------------------------------------------------------------------------------


def _body(stream: bool) -> dict[str, Any]:
    body: dict[str, Any] = {"model": MODEL, "messages": [{"role": "user", "content": "Hello"}]}
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return body


def build_request(host: str, port: int, stream: bool, prefix: str = "") -> bytes:
    payload = json.dumps(_body(stream), separators=(",", ":")).encode()
    accept = "text/event-stream" if stream else "application/json"
    head = (
        f"POST {prefix}{PATH} HTTP/1.1\r\n"
        f"Host: {host}:{port}\r\n"
        "Authorization: Bearer x\r\n"
        "Content-Type: application/json\r\n"
        f"Accept: {accept}\r\n"
        f"Content-Length: {len(payload)}\r\n"
        "\r\n"
    )
    return head.encode() + payload


def _sse_events(raw: bytes) -> Iterator[str]:
    for block in raw.decode().split("\n\n"):
        for line in block.split("\n"):
            if line.startswith("data: "):
                yield line[6:]


def check_answers(server: Server, stream: bool, chunks: list[str]) -> None:
    """One request with a real HTTP client: the content must be exactly the configured text."""
    status, raw = http_request(server.url, "POST", PATH, _body(stream))
    if status != 200:
        raise server.fail(f"sanity request answered {status}: {raw[:300]!r}")
    text = "".join(chunks)
    if not stream:
        content = json.loads(raw)["choices"][0]["message"]["content"]
        if content != text:
            raise server.fail(f"non-stream content {content!r} != {text!r}")
        return
    if not raw.endswith(DONE):
        raise server.fail(f"stream does not end with [DONE]: {raw[-80:]!r}")
    pieces: list[str] = []
    usage = False
    for data in _sse_events(raw):
        if data == "[DONE]":
            continue
        event = json.loads(data)
        usage = usage or bool(event.get("usage"))
        for choice in event.get("choices", []):
            piece = choice.get("delta", {}).get("content")
            if piece:
                pieces.append(piece)
    if "".join(pieces) != text or len(pieces) != len(chunks) or not usage:
        raise server.fail(f"stream content {pieces!r} (usage chunk: {usage}) != {chunks!r}")


def cpus() -> tuple[int | None, int | None]:
    if not hasattr(os, "sched_getaffinity"):
        return None, None
    available = sorted(os.sched_getaffinity(0))
    if len(available) < 2:
        return None, None
    return available[0], available[1]
