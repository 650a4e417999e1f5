"""Throughput and latency of llmts beside the "floor" (a bare werkzeug app on gunicorn+gevent).

Usage: ``python benchmarks/run.py [--duration 5] [--connections 32] [--chunks 20] [--cases ...]
[--json PATH]``. See ``benchmarks/README.md`` and its "Targets" section.

Both servers run with one gevent worker pinned to one CPU; the load generator runs in a separate process
pinned to another CPU. It is a hand-written HTTP/1.1 client over non-blocking sockets driven by one epoll
loop: N keep-alive connections, one request in flight on each (closed loop), pre-built request bytes.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import multiprocessing
import os
import select
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from floor_app import make_chunks  # noqa: E402

MODEL = "gpt-4.1-mini"
PATH = "/openai/v1/chat/completions"
CASES = (
    "default-nonstream",
    "default-stream",
    "llmts-nonstream",
    "llmts-stream",
    "sessions-nonstream",
    "floor-nonstream",
    "floor-stream",
)
# Case prefix -> the server it runs against: ``default`` is ``llmts serve`` as users start it (access
# log on, written to a file), ``llmts`` the quiet one (``--no-access-log``), ``sessions`` the quiet one
# with requests spread over SESSIONS sessions.
SERVER_OF = {"default": "default", "llmts": "llmts", "sessions": "llmts", "floor": "floor"}
SESSIONS = 1000
DONE = b"data: [DONE]\n\n"
# The fastest peer's per-core speed relative to the floor: ~1.5x non-streamed, ~3.1x streamed; the targets
# are 1.0x of it non-streamed and 1.2x streamed, at a p99 of 10 ms (benchmarks/README.md, "Targets").
PEER = {"nonstream": 1.5, "stream": 3.1}
TARGETS = {"nonstream_ratio": PEER["nonstream"], "stream_ratio": 1.2 * PEER["stream"], "p99_ms": 10.0}
START_TIMEOUT = 30.0
STOP_TIMEOUT = 10.0


# --------------------------------------------------------------------------------------------------
# Load generator (runs in its own process)
# --------------------------------------------------------------------------------------------------

_HEAD, _LENGTH, _CHUNKED = 0, 1, 2


class _ProtocolError(Exception):
    pass


class _Conn:
    __slots__ = ("buf", "close_after", "fd", "need", "pos", "sock", "state", "status", "t0", "tail", "target")

    def __init__(self, sock: socket.socket, target: int) -> None:
        self.sock = sock
        self.target = target  # the index of its ``Target`` in the spec
        self.fd = sock.fileno()
        self.buf = bytearray()
        self.state = _HEAD
        self.pos = 0
        self.need = 0
        self.status = 0
        self.t0 = 0.0
        self.tail = b""
        self.close_after = False


def _feed(c: _Conn) -> bool:
    """Advance the response parser over ``c.buf``; True once a whole response has been read.

    On completion ``c.status`` and ``c.tail`` (last bytes of the de-chunked body) are set and the
    response is removed from the buffer.
    """
    buf = c.buf
    if c.state == _HEAD:
        end = buf.find(b"\r\n\r\n")
        if end < 0:
            if len(buf) > 65536:
                raise _ProtocolError("response head too large")
            return False
        head = bytes(buf[:end]).lower()
        if not head.startswith(b"http/1.1 "):
            raise _ProtocolError(f"bad status line {head[:40]!r}")
        try:
            c.status = int(head[9:12])
        except ValueError:
            raise _ProtocolError(f"bad status line {head[:40]!r}") from None
        c.close_after = b"\r\nconnection: close" in head
        c.pos = end + 4
        c.tail = b""
        i = head.find(b"\r\ncontent-length:")
        if i >= 0:
            j = head.find(b"\r\n", i + 2)
            c.need = int(head[i + 17 : j if j >= 0 else len(head)])
            c.state = _LENGTH
        elif b"\r\ntransfer-encoding:" in head and b"chunked" in head:
            c.state = _CHUNKED
        else:
            raise _ProtocolError("response without Content-Length or chunked encoding")
    if c.state == _LENGTH:
        end = c.pos + c.need
        if len(buf) < end:
            return False
        c.tail = bytes(buf[max(c.pos, end - 16) : end])
        del buf[:end]
        c.state = _HEAD
        return True
    pos = c.pos
    while True:
        eol = buf.find(b"\r\n", pos)
        if eol < 0:
            c.pos = pos
            return False
        try:
            size = int(bytes(buf[pos:eol]).split(b";", 1)[0], 16)
        except ValueError:
            raise _ProtocolError(f"bad chunk size line {bytes(buf[pos:eol])[:40]!r}") from None
        if size == 0:
            if len(buf) < eol + 4:
                c.pos = pos
                return False
            if buf[eol + 2 : eol + 4] == b"\r\n":
                end = eol + 4
            else:  # trailers
                t = buf.find(b"\r\n\r\n", eol)
                if t < 0:
                    c.pos = pos
                    return False
                end = t + 4
            del buf[:end]
            c.state = _HEAD
            return True
        end = eol + 2 + size
        if len(buf) < end + 2:
            c.pos = pos
            return False
        c.tail = (c.tail + bytes(buf[max(eol + 2, end - 16) : end]))[-16:]
        pos = end + 2


def _cpu_seconds(pids: Sequence[int]) -> float | None:
    """utime+stime of the given processes (all their threads), from /proc; None where unavailable."""
    total = 0
    try:
        for pid in pids:
            with open(f"/proc/{pid}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return None
    return total / os.sysconf("SC_CLK_TCK")


@dataclass
class Target:
    """One server and the prebuilt requests its connections send, round robin."""

    host: str
    port: int
    requests: list[bytes]


@dataclass
class LoadSpec:
    """One load process: ``connections`` keep-alive connections, connection ``i`` to
    ``targets[(first_connection + i) % len(targets)]`` (so several processes spread over the same targets)."""

    targets: list[Target]
    stream: bool
    connections: int
    warmup: float
    duration: float
    cpu: int | None
    server_pids: list[int]
    first_connection: int = 0
    keep_latencies: bool = False  # return every latency (to merge several processes' percentiles)


@dataclass
class LoadResult:
    requests: int = 0
    errors: int = 0
    warmup_requests: int = 0
    warmup_errors: int = 0
    reconnects: int = 0
    elapsed: float = 0.0
    rps: float = 0.0
    p50_ms: float = 0.0
    p90_ms: float = 0.0
    p99_ms: float = 0.0
    max_ms: float = 0.0
    load_cpu_seconds: float = 0.0
    load_cpu_pct: float | None = None
    server_cpu_pct: float | None = None
    server_cpu_us_per_req: float | None = None
    latencies: list[float] = field(default_factory=list)
    error_samples: list[str] = field(default_factory=list)
    fatal: str | None = None


def _percentile(sorted_values: Sequence[float], q: float) -> float:
    if not sorted_values:
        return 0.0
    index = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[index]


def _run_load(spec: LoadSpec) -> LoadResult:
    if spec.cpu is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {spec.cpu})
    result = LoadResult()
    turns = [0] * len(spec.targets)  # each target's next request
    suffix = DONE if spec.stream else b"}"
    poller: Any
    if hasattr(select, "epoll"):
        poller = select.epoll()
        poll_scale = 1.0
    else:  # pragma: no cover - non-Linux fallback
        poller = select.poll()
        poll_scale = 1000.0
    readable = select.POLLIN
    conns: dict[int, _Conn] = {}
    max_reconnects = 10 * spec.connections

    def connect(index: int) -> _Conn:
        which = index % len(spec.targets)
        target = spec.targets[which]
        sock = socket.create_connection((target.host, target.port), timeout=5.0)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setblocking(False)
        c = _Conn(sock, which)
        conns[c.fd] = c
        poller.register(c.fd, readable)
        return c

    def send(c: _Conn) -> None:
        requests = spec.targets[c.target].requests
        turn = turns[c.target]
        request = requests[turn]
        turns[c.target] = (turn + 1) % len(requests)
        c.t0 = time.perf_counter()
        sent = c.sock.send(request)
        if sent < len(request):  # never happens with an idle socket and a small request
            c.sock.setblocking(True)
            try:
                c.sock.sendall(request[sent:])
            finally:
                c.sock.setblocking(False)

    def drop(c: _Conn) -> None:
        conns.pop(c.fd, None)
        with contextlib.suppress(OSError, ValueError, KeyError):
            poller.unregister(c.fd)
        c.sock.close()

    def replace(c: _Conn) -> None:
        drop(c)
        result.reconnects += 1
        if result.reconnects > max_reconnects:
            raise _ProtocolError(f"more than {max_reconnects} reconnects; giving up")
        send(connect(c.target))

    latencies = array("d")
    try:
        for offset in range(spec.connections):
            connect(spec.first_connection + offset)
        begin = time.perf_counter()
        t_start = begin + spec.warmup
        t_end = t_start + spec.duration
        measuring = False
        cpu0 = os.times()
        srv0: float | None = None
        for c in list(conns.values()):
            send(c)
        now = begin
        while now < t_end:
            events = poller.poll(0.05 * poll_scale)
            now = time.perf_counter()
            if not measuring and now >= t_start:
                measuring = True
                t_start = now
                t_end = t_start + spec.duration
                cpu0 = os.times()
                srv0 = _cpu_seconds(spec.server_pids)
            for fd, _ev in events:
                ready = conns.get(fd)
                if ready is None:
                    continue
                c = ready
                try:
                    data = c.sock.recv(262144)
                except BlockingIOError:
                    continue
                except OSError as exc:
                    data = b""
                    reason = f"recv failed: {exc}"
                else:
                    reason = "connection closed by server"
                if not data:
                    if measuring:
                        result.errors += 1
                    else:
                        result.warmup_errors += 1
                    if len(result.error_samples) < 5:
                        result.error_samples.append(reason)
                    replace(c)
                    continue
                c.buf += data
                try:
                    complete = _feed(c)
                except _ProtocolError as exc:
                    complete = False
                    if measuring:
                        result.errors += 1
                    else:
                        result.warmup_errors += 1
                    if len(result.error_samples) < 5:
                        result.error_samples.append(str(exc))
                    replace(c)
                    continue
                if not complete:
                    continue
                done = time.perf_counter()
                ok = c.status == 200 and c.tail.endswith(suffix)
                if measuring:
                    if done <= t_end:
                        latencies.append(done - c.t0)
                        result.requests += 1
                        if not ok:
                            result.errors += 1
                elif not ok:
                    result.warmup_errors += 1
                else:
                    result.warmup_requests += 1
                if not ok and len(result.error_samples) < 5:
                    result.error_samples.append(f"status {c.status}, body ends with {c.tail!r}")
                if c.buf:
                    result.errors += 1
                    if len(result.error_samples) < 5:
                        result.error_samples.append(f"unexpected bytes after response: {bytes(c.buf[:40])!r}")
                    replace(c)
                elif c.close_after:
                    replace(c)
                else:
                    send(c)
        elapsed = max(time.perf_counter() - t_start, 1e-9) if measuring else 0.0
        cpu1 = os.times()
        srv1 = _cpu_seconds(spec.server_pids)
    except (OSError, _ProtocolError) as exc:
        result.fatal = f"{type(exc).__name__}: {exc}"
        return result
    finally:
        for c in list(conns.values()):
            drop(c)
        poller.close()
    if not measuring:
        result.fatal = "measurement window never started"
        return result
    result.elapsed = elapsed
    result.rps = result.requests / elapsed
    values = sorted(latencies)
    result.p50_ms = _percentile(values, 0.50) * 1000
    result.p90_ms = _percentile(values, 0.90) * 1000
    result.p99_ms = _percentile(values, 0.99) * 1000
    result.max_ms = (values[-1] if values else 0.0) * 1000
    if spec.keep_latencies:
        result.latencies = values
    result.load_cpu_seconds = (cpu1.user - cpu0.user) + (cpu1.system - cpu0.system)
    result.load_cpu_pct = 100 * result.load_cpu_seconds / elapsed
    if srv0 is not None and srv1 is not None:
        result.server_cpu_pct = 100 * (srv1 - srv0) / elapsed
        if result.requests:
            result.server_cpu_us_per_req = 1e6 * (srv1 - srv0) / result.requests
    return result


def _load_entry(spec: LoadSpec, pipe: Connection) -> None:
    try:
        pipe.send(asdict(_run_load(spec)))
    except BaseException as exc:  # report anything to the parent instead of dying silently
        pipe.send(asdict(LoadResult(fatal=f"{type(exc).__name__}: {exc}")))
    finally:
        pipe.close()


def run_load(spec: LoadSpec) -> LoadResult:
    """Run the load generator in a separate (spawned) process and return its measurements."""
    return run_loads([spec])[0]


def run_loads(specs: Sequence[LoadSpec]) -> list[LoadResult]:
    """Run one load process per spec, all at once, and return their measurements in order."""
    ctx = multiprocessing.get_context("spawn")
    running = []
    for spec in specs:
        parent_end, child_end = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_load_entry, args=(spec, child_end), daemon=True)
        proc.start()
        child_end.close()
        running.append((proc, parent_end, spec))
    return [_collect(proc, parent_end, spec) for proc, parent_end, spec in running]


def _collect(proc: Any, parent_end: Connection, spec: LoadSpec) -> LoadResult:
    finished = False
    try:
        if parent_end.poll(spec.warmup + spec.duration + 60):
            result = LoadResult(**parent_end.recv())
            finished = True
        else:
            result = LoadResult(fatal="load generator timed out")
    except EOFError:
        result = LoadResult(fatal=f"load generator died (exit code {proc.exitcode})")
    finally:
        parent_end.close()
        if finished:
            proc.join(5)
        if proc.is_alive():
            proc.terminate()
            proc.join(5)
        if proc.is_alive():
            proc.kill()
            proc.join(5)
    return result


# --------------------------------------------------------------------------------------------------
# Server processes
# --------------------------------------------------------------------------------------------------


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


def _process_tree(pid: int) -> list[int]:
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


def _pin(pids: Sequence[int], cpu: int | None) -> None:
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
            tree = _process_tree(self.proc.pid)
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
    deadline: float, name: str = "llmts", *, quiet: bool | None = None, tree: Path | None = None
) -> Server:
    """``llmts`` runs quiet (``--no-access-log``); ``default`` exactly as ``llmts serve`` starts; ``quiet``
    says so for another name. ``tree``: import the package from that checkout (run from it, so ``-m``
    finds it first) instead of this one."""
    ready = Path(tempfile.mkdtemp(prefix=f"bench-{name}-")) / "ready"
    argv = [sys.executable, "-m", "llmts", "serve", "--host", "127.0.0.1", "--port", "0"]
    if quiet is None:
        quiet = name == "llmts"
    if quiet:
        argv.append("--no-access-log")
    argv += ["--ready-file", str(ready), "--parent-pid", str(os.getpid())]
    env = dict(os.environ, PYTHONPATH=str(tree)) if tree is not None else None
    server = Server(name, argv, env, tree or REPO)
    try:
        server.url = server.wait_ready_file(ready, deadline).strip()
        server.wait_http("/health", deadline)
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


# --------------------------------------------------------------------------------------------------
# Orchestration and report
# --------------------------------------------------------------------------------------------------


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _print_row(name: str, r: LoadResult) -> None:
    print(
        f"{name:<18} {r.rps:>9.0f} {r.p50_ms:>8.2f} {r.p99_ms:>8.2f} {r.max_ms:>8.1f} {r.errors:>6} "
        f"{_fmt(r.server_cpu_us_per_req, '>10.0f')} {_fmt(r.server_cpu_pct, '>8.0f')} "
        f"{_fmt(r.load_cpu_pct, '>8.0f')}",
        flush=True,
    )


HEADER = (
    f"{'case':<18} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} {'errors':>6} "
    f"{'srv us/req':>10} {'srv CPU%':>8} {'load CPU%':>8}"
)


def _ratio(results: dict[str, LoadResult], case: str) -> float | None:
    ours, floor = results.get(case), results.get("floor-" + case.split("-", 1)[1])
    if ours is None or floor is None or not floor.rps:
        return None
    return ours.rps / floor.rps


def summarize(results: dict[str, LoadResult]) -> dict[str, Any]:
    """Each llmts case's req/s over the floor's (same kind, same run), its target, its p99."""
    summary: dict[str, Any] = {"p99_target_ms": TARGETS["p99_ms"]}
    for case in results:
        if case.startswith("floor-"):
            continue
        kind = case.split("-", 1)[1]
        target = TARGETS[f"{kind}_ratio"]
        ratio = _ratio(results, case)
        summary[f"{case}_ratio"] = ratio
        summary[f"{case}_ratio_target"] = target
        summary[f"{case}_ratio_ok"] = None if ratio is None else ratio >= target
    for name, r in results.items():
        summary[f"{name}_p99_ms"] = r.p99_ms
    return summary


def print_summary(
    results: dict[str, LoadResult], summary: dict[str, Any], connections: int, rounds: int = 1
) -> None:
    print()
    last = f", the last of {rounds} rounds; ratios: the rounds' median" if rounds > 1 else ""
    print(f"=== summary ({connections} keep-alive connections{last}) ===")
    print(HEADER)
    for name in CASES:
        if name in results:
            _print_row(name, results[name])
    print()
    for name in CASES:
        ratio = summary.get(f"{name}_ratio")
        if ratio is None:
            continue
        verdict = "ok" if summary[f"{name}_ratio_ok"] else "BELOW TARGET"
        target = summary[f"{name}_ratio_target"]
        peer = ratio / PEER[name.split("-")[1]]
        against = f"{peer:.2f}x the fastest peer; target {target:.2f}x: {verdict}"
        print(f"{name + '/floor':<26} {ratio:5.2f}x   ({against})")
    for name in CASES:
        if name in results:
            p99 = results[name].p99_ms
            note = ""
            if not name.startswith("floor"):
                note = f"   (target <= {TARGETS['p99_ms']:g} ms: " + (
                    "ok)" if p99 <= TARGETS["p99_ms"] else "ABOVE TARGET)"
                )
            print(f"p99 {name:<20} {p99:8.2f} ms{note}")
    busy = [n for n, r in results.items() if (r.load_cpu_pct or 0) > 90]
    if busy:
        print(f"warning: the load generator was CPU-bound in {', '.join(busy)}; those numbers are a floor")
    idle = [n for n, r in results.items() if r.server_cpu_pct is not None and r.server_cpu_pct < 90]
    if idle:
        print(f"note: the server core was not saturated in {', '.join(idle)}")


def _server_log_findings(server: Server) -> list[str]:
    markers = ("Traceback", "ERROR", "CRITICAL", "WORKER TIMEOUT", "Exception", "Booting worker")
    lines = [line for line in server.log_text().splitlines() if any(m in line for m in markers)]
    boots = [line for line in lines if "Booting worker" in line]
    findings = [line for line in lines if "Booting worker" not in line]
    if len(boots) > 1:
        findings.append(f"worker booted {len(boots)} times (restarted during the run)")
    return findings[:20]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--duration", type=float, default=5.0, help="measured seconds per case (default 5)")
    parser.add_argument("--warmup", type=float, default=1.0, help="warm-up seconds per case (default 1)")
    parser.add_argument("--connections", type=int, default=32, help="keep-alive connections (default 32)")
    parser.add_argument("--chunks", type=int, default=20, help="content chunks per stream (default 20)")
    parser.add_argument(
        "--cases",
        nargs="+",
        default=list(CASES),
        help=f"cases to run, space- or comma-separated, from: {', '.join(CASES)}",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="run the cases this many times in turn on the same servers; ratios are per round and their "
        "median is the verdict (default 1)",
    )
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    args = parser.parse_args(argv)
    cases = [c for item in args.cases for c in item.split(",") if c]
    unknown = sorted(set(cases) - set(CASES))
    if unknown:
        parser.error(f"unknown case(s) {', '.join(unknown)}; choose from {', '.join(CASES)}")
    args.cases = [c for c in CASES if c in cases]
    if args.duration <= 0 or args.warmup < 0 or args.connections <= 0 or args.chunks <= 0 or args.rounds <= 0:
        parser.error("--duration, --connections, --chunks, --rounds must be positive, --warmup not negative")
    return args


def _cpus() -> tuple[int | None, int | None]:
    if not hasattr(os, "sched_getaffinity"):
        return None, None
    available = sorted(os.sched_getaffinity(0))
    if len(available) < 2:
        return None, None
    return available[0], available[1]


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    chunks = make_chunks(args.chunks)
    server_cpu, load_cpu = _cpus()
    if server_cpu is None:
        print("warning: fewer than 2 CPUs available (or no sched_setaffinity): not pinning", file=sys.stderr)
    else:
        print(f"server processes on CPU {server_cpu}, load generator on CPU {load_cpu}")
    servers: dict[str, Server] = {}
    failed = False
    try:
        deadline = time.monotonic() + START_TIMEOUT
        wanted = {SERVER_OF[c.split("-")[0]] for c in args.cases}
        for name in ("default", "llmts"):
            if name in wanted:
                servers[name] = start_llmts(deadline, name)
                configure_llmts(servers[name], chunks)
        prefixes = [""]
        if "sessions-nonstream" in args.cases:
            prefixes = create_sessions(servers["llmts"], chunks, SESSIONS)
        if "floor" in wanted:
            servers["floor"] = start_floor(deadline, args.chunks)
        for server in servers.values():
            _pin(server.pids, server_cpu)
            print(f"{server.name}: {server.url} (pids {', '.join(map(str, server.pids))})")
        for case in args.cases:
            name, kind = case.split("-")
            check_answers(servers[SERVER_OF[name]], kind == "stream", chunks)
        # Idle memory: configured, a few requests answered, no load yet (the whole process tree).
        idle_memory = {name: tree_memory_mib(server.pids) for name, server in servers.items()}
        for name, sizes in idle_memory.items():
            rss, pss = sizes["rss"], sizes["pss"]
            parts = " + ".join(f"{size:.1f}" for size in rss)
            print(f"{name}: idle RSS {sum(rss):.1f} MiB ({parts}), PSS {sum(pss):.1f} MiB")
        print(f"{args.connections} connections, {args.warmup:g} s warm-up + {args.duration:g} s per case")
        print(HEADER, flush=True)
        rounds: list[dict[str, LoadResult]] = []
        for round_index in range(args.rounds):
            if args.rounds > 1:
                print(f"--- round {round_index + 1} of {args.rounds}", flush=True)
            results: dict[str, LoadResult] = {}
            rounds.append(results)
            # Every other round runs the cases backwards: the machine's drift within a round then falls
            # on the llmts cases and the floor alike, not always on the same side.
            cases = args.cases if round_index % 2 == 0 else args.cases[::-1]
            failed = _run_cases(args, cases, servers, prefixes, results, load_cpu) or failed
        summary = median_summary(rounds)
        print_summary(rounds[-1], summary, args.connections, len(rounds))
        if len(rounds) > 1:
            _print_rounds(rounds)
        findings = {name: _server_log_findings(s) for name, s in servers.items()}
        for name, lines in findings.items():
            for line in lines:
                print(f"{name} log: {line}")
        if args.json:
            document = {
                "settings": {
                    "duration": args.duration,
                    "warmup": args.warmup,
                    "connections": args.connections,
                    "chunks": args.chunks,
                    "rounds": args.rounds,
                    "server_cpu": server_cpu,
                    "load_cpu": load_cpu,
                    "python": sys.version.split()[0],
                },
                "results": {name: asdict(r) for name, r in rounds[-1].items()},
                "rounds": [{name: asdict(r) for name, r in one.items()} for one in rounds],
                "summary": summary,
                "idle_memory_mib": idle_memory,
                "server_log_findings": findings,
            }
            Path(args.json).write_text(json.dumps(document, indent=2) + "\n")
            print(f"wrote {args.json}")
        errors = sum(r.errors for one in rounds for r in one.values())
        return 1 if failed or errors else 0
    finally:
        for server in servers.values():
            server.stop()
            with contextlib.suppress(OSError):
                os.unlink(server.log.name)


def _run_cases(
    args: argparse.Namespace,
    cases: Sequence[str],
    servers: dict[str, Server],
    prefixes: list[str],
    results: dict[str, LoadResult],
    load_cpu: int | None,
) -> bool:
    """One round: the cases in the given order, each row printed as it ends; True when a case failed."""
    failed = False
    for case in cases:
        name, kind = case.split("-")
        server = servers[SERVER_OF[name]]
        parts = urlsplit(server.url)
        host, port = parts.hostname or "127.0.0.1", int(parts.port or 80)
        requests = [
            build_request(host, port, kind == "stream", prefix)
            for prefix in (prefixes if name == "sessions" else [""])
        ]
        spec = LoadSpec(
            targets=[Target(host, port, requests)],
            stream=kind == "stream",
            connections=args.connections,
            warmup=args.warmup,
            duration=args.duration,
            cpu=load_cpu,
            server_pids=_process_tree(server.proc.pid),
        )
        result = run_load(spec)
        results[case] = result
        if result.fatal:
            failed = True
            print(f"{case:<16} FAILED: {result.fatal}", flush=True)
        else:
            _print_row(case, result)
        for sample in result.error_samples:
            print(f"    error sample: {sample}")
        if not server.alive():
            raise server.fail(f"exited during the run (code {server.proc.returncode})")
    return failed


def median_summary(rounds: list[dict[str, LoadResult]]) -> dict[str, Any]:
    """``summarize`` over several rounds: each ratio is the median of the rounds' own ratios (each round's
    llmts case over the same round's floor), and ``*_ratio_ok`` judges that median."""
    per_round = [summarize(one) for one in rounds]
    summary = dict(per_round[-1])
    for key in per_round[-1]:
        if key.endswith("_ratio"):
            values = [one[key] for one in per_round if one.get(key) is not None]
            summary[key] = statistics.median(values) if values else None
            target = summary[key + "_target"]
            summary[key + "_ok"] = None if summary[key] is None else summary[key] >= target
            summary[key + "_rounds"] = values
    return summary


def _print_rounds(rounds: list[dict[str, LoadResult]]) -> None:
    print()
    print("per round (llmts/floor of the same round):")
    for name in CASES:
        if name.startswith("floor-"):
            continue
        ratios = [_ratio(one, name) for one in rounds if name in one]
        shown = [f"{r:.2f}x" for r in ratios if r is not None]
        if shown:
            print(f"  {name + '/floor':<26} " + "  ".join(shown))


if __name__ == "__main__":
    raise SystemExit(main())
