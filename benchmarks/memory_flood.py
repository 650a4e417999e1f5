"""Memory flood: the worker's RSS while one session gets many large chat requests, after, and after the
session is deleted; optionally with clients that never read a streamed answer.

Starts ``llmts serve --no-access-log`` (plus ``--server-arg``s, e.g. ``--max-memory 64M``), creates one
session with ``PUT /admin-api/sessions/{id}`` (unconfigured, so it echoes each ~1 MB message back; or,
with ``--scripted``, answering a short scripted text), sends ``--requests`` chat completions of
``--size`` bytes over ``--connections`` keep-alive connections, sampling the worker's VmRSS every 20 ms,
then deletes the session. See benchmarks/README.md ("Memory flood") and docs/design/memory.md ("Memory
beyond the accounted bytes").

    python benchmarks/memory_flood.py                                   # 1,000 x 1 MB, 8 connections
    python benchmarks/memory_flood.py --server-arg=--max-memory=64M --connections 1
    python benchmarks/memory_flood.py --stalled 4 --stalled-size 7000000  # non-reading stream clients
    python benchmarks/memory_flood.py --root /path/to/other/checkout      # the same flood, other code
"""

from __future__ import annotations

import argparse
import http.client
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import orjson

_ROOT = Path(__file__).resolve().parent.parent
SESSION = "ses_00000000000000000000000000f100d0"
_PATH = f"/sessions/{SESSION}/openai/v1/chat/completions"
_SCRIPTED = orjson.dumps(
    {
        "models": ["gpt-4.1-mini"],
        "scenarios": [{"id": "a", "terminal_policy": "repeat_last_response", "responses": [{"text": "ok"}]}],
    }
)
MiB = 1024 * 1024


def start(root: Path, extra: list[str]) -> tuple[subprocess.Popen[bytes], str, int]:
    """``llmts serve`` from ``root``; its process, host:port and the worker's pid."""
    ready = Path(tempfile.mkdtemp(prefix="llmts-flood-")) / "ready"
    env = {**os.environ, "PYTHONPATH": str(root)}
    command = [sys.executable, "-m", "llmts", "serve", "--port", "0", "--no-access-log"]
    command += ["--ready-file", str(ready), *extra]
    quiet = subprocess.DEVNULL
    proc = subprocess.Popen(command, env=env, cwd=root, stdout=quiet, stderr=quiet, start_new_session=True)
    deadline = time.monotonic() + 30
    while not ready.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            stop(proc)
            raise SystemExit("llmts did not start")
        time.sleep(0.05)
    host = ready.read_text().removeprefix("http://")
    return proc, host, int(process(host)["pid"])


def stop(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(10)
    except ProcessLookupError:
        pass
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)


def call(host: str, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
    """One request on its own connection (control calls; a kept-alive one may have timed out)."""
    name, port = host.rsplit(":", 1)
    conn = http.client.HTTPConnection(name, int(port), timeout=120)
    try:
        conn.request(method, path, body=body, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def process(host: str) -> dict[str, Any]:
    status, body = call(host, "GET", "/admin-api/process")
    assert status == 200, body
    return dict(orjson.loads(body))


def rss(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return -1


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def chat_body(size: int, stream: bool = False) -> bytes:
    """A chat request whose one user message makes the body about ``size`` bytes (words: a realistic
    text, which a stream's echo splits into frames)."""
    words = "lorem ipsum dolor sit amet " * (size // 27 + 1)
    return orjson.dumps(
        {"model": "gpt-4.1-mini", "stream": stream, "messages": [{"role": "user", "content": words[:size]}]}
    )


class Sampler:
    """The worker's peak RSS, sampled every 20 ms while running."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak = rss(pid)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, rss(self.pid))


def flood(host: str, requests: int, connections: int, body: bytes) -> list[str]:
    """``requests`` POSTs over ``connections`` keep-alive connections; the failures seen."""
    errors: list[str] = []
    name, port = host.rsplit(":", 1)
    shares = [requests // connections + (1 if i < requests % connections else 0) for i in range(connections)]

    def client(count: int) -> None:
        conn = http.client.HTTPConnection(name, int(port), timeout=120)
        try:
            for _ in range(count):
                conn.request("POST", _PATH, body=body, headers={"Content-Type": "application/json"})
                response = conn.getresponse()
                data = response.read()
                if response.status != 200:
                    errors.append(f"{response.status} {data[:200]!r}")
        except OSError as exc:
            errors.append(repr(exc))
        finally:
            conn.close()

    threads = [threading.Thread(target=client, args=(share,)) for share in shares if share]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


def stalled_clients(host: str, count: int, size: int) -> list[socket.socket]:
    """``count`` connections that ask for a streamed ~``size``-byte echo and never read it."""
    name, port = host.rsplit(":", 1)
    body = chat_body(size, stream=True)
    head = f"POST {_PATH} HTTP/1.1\r\nHost: {name}\r\nContent-Type: application/json\r\n"
    request = (head + f"Content-Length: {len(body)}\r\n\r\n").encode() + body
    opened = []
    for _ in range(count):
        sock = socket.socket(socket.AF_INET6 if ":" in name.strip("[]") else socket.AF_INET)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a small window: the server must wait
        sock.connect((name.strip("[]"), int(port)))
        sock.sendall(request)
        opened.append(sock)
    return opened


def run(args: argparse.Namespace) -> dict[str, Any]:
    proc, host, pid = start(Path(args.root), args.server_arg)
    try:
        config = _SCRIPTED if args.scripted else b""  # unconfigured: the session echoes
        status, payload = call(host, "PUT", f"/admin-api/sessions/{SESSION}", config)
        assert status in (200, 201), payload
        body = chat_body(args.size)
        before = process(host)
        cpu = cpu_seconds(pid)
        started = time.perf_counter()
        with Sampler(pid) as sampler:
            errors = flood(host, args.requests, args.connections, body)
        elapsed = time.perf_counter() - started
        cpu = cpu_seconds(pid) - cpu
        after = process(host)
        result: dict[str, Any] = {
            "requests": args.requests,
            "connections": args.connections,
            "body_bytes": len(body),
            "answer": "scripted" if args.scripted else "echo",
            "server_args": args.server_arg,
            "max_bytes": after["memory"]["max_bytes"],
            "rss_before": before["rss_bytes"],
            "rss_peak": sampler.peak,
            "rss_after": after["rss_bytes"],
            "accounted_after": after["memory"]["used_bytes"],
            "journal_entries_after": after["memory"]["journal_entries"],
            "errors": len(errors),
            "first_error": errors[0] if errors else None,
            "seconds": round(elapsed, 2),
            "worker_cpu_ms_per_request": round(cpu * 1000 / args.requests, 2),
        }
        if args.stalled:
            socks = stalled_clients(host, args.stalled, args.stalled_size)
            time.sleep(args.stalled_wait)
            held = process(host)
            result["stalled_clients"] = args.stalled
            result["rss_stalled"] = held["rss_bytes"]
            result["held_write_bytes"] = held["memory"].get("held_write_bytes")
            result["refused_after_stalled"] = held["memory"]["refused"]
            for sock in socks:
                sock.close()
            time.sleep(0.5)
        status, payload = call(host, "DELETE", f"/admin-api/sessions/{SESSION}")
        assert status == 204, payload
        deleted = process(host)
        result["rss_after_delete"] = deleted["rss_bytes"]
        result["accounted_after_delete"] = deleted["memory"]["used_bytes"]
        return result
    finally:
        stop(proc)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--size", type=int, default=1_000_000, help="request body bytes (default 1 MB)")
    parser.add_argument("--scripted", action="store_true", help="answer a short scripted text, not the echo")
    parser.add_argument("--stalled", type=int, default=0, help="non-reading stream clients after the flood")
    parser.add_argument("--stalled-size", type=int, default=7_000_000, help="their answer's size in bytes")
    parser.add_argument("--stalled-wait", type=float, default=2.0, help="seconds before measuring them")
    parser.add_argument("--server-arg", action="append", default=[], help="extra `llmts serve` argument")
    parser.add_argument("--root", default=str(_ROOT), help="the checkout to run (default: this one)")
    parser.add_argument("--json", default=None, help="also write the result as JSON to this path")
    args = parser.parse_args()
    result = run(args)
    for key, value in result.items():
        sized = key.startswith(("rss_", "accounted_", "held_")) and value
        shown = f"{value / MiB:.1f} MiB" if sized else value
        print(f"{key:>28}: {shown}")
    if args.json:
        Path(args.json).write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2))
    return 1 if result["errors"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
