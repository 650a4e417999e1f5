"""The benchmarks' load generator: a hand-written HTTP/1.1 client over non-blocking sockets in one epoll
loop, run in a spawned process of its own: N keep-alive connections, one request in flight on each
(closed loop), pre-built request bytes, Content-Length and chunked bodies parsed incrementally. A
response counts as an error unless it is status 200 and its body ends with ``}`` (non-stream) or
``data: [DONE]`` (stream). Used by ``run.py``, ``compare.py`` and ``scaling.py`` (benchmarks/README.md).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import select
import socket
import time
from array import array
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from multiprocessing.connection import Connection
from typing import Any

__all__ = ["DONE", "LoadResult", "LoadSpec", "Target", "cpu_seconds", "percentile", "run_load", "run_loads"]

DONE = b"data: [DONE]\n\n"

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


def cpu_seconds(pids: Sequence[int]) -> float | None:
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


def percentile(sorted_values: Sequence[float], q: float) -> float:
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
                srv0 = cpu_seconds(spec.server_pids)
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
        srv1 = cpu_seconds(spec.server_pids)
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
    result.p50_ms = percentile(values, 0.50) * 1000
    result.p90_ms = percentile(values, 0.90) * 1000
    result.p99_ms = percentile(values, 0.99) * 1000
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
