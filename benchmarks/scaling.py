"""Scaling over cores: aggregate throughput of ``llmts serve --workers N`` over many sessions, and the wall
time of a pytest-xdist run of a real SDK suite with ``--llmts-servers 1`` vs ``2``.

Usage::

    python benchmarks/scaling.py throughput [--servers 1 2] [--sessions 1000] [--connections 64]
                                            [--load wrk|python] [--load-procs 2] [--duration 10]
                                            [--stream] [--json PATH]
    python benchmarks/scaling.py xdist [--workers 2] [--servers 1 2] [--tests 300] [--calls 8]
                                       [--rounds 3] [--suite PATH] [--json PATH]

See benchmarks/README.md, "Scaling". Not a test: run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from loadgen import LoadResult, LoadSpec, Target, cpu_seconds, percentile, run_loads  # noqa: E402
from servers import MODEL, Server, http_request, start_llmts  # noqa: E402

START_TIMEOUT = 60.0


# --------------------------------------------------------------------------------------------------
# throughput: N server processes, many sessions, closed-loop keep-alive load
# --------------------------------------------------------------------------------------------------


def _new_session_id() -> str:
    return "ses_" + secrets.token_hex(16)


def _chat_request(host: str, port: int, session_id: str, stream: bool) -> bytes:
    body = json.dumps(
        {"model": MODEL, "stream": stream, "messages": [{"role": "user", "content": "Hi"}]},
        separators=(",", ":"),
    ).encode()
    head = (
        f"POST /sessions/{session_id}/openai/v1/chat/completions HTTP/1.1\r\nHost: {host}:{port}\r\n"
        f"Content-Type: application/json\r\nAuthorization: Bearer x\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def start_servers(count: int, deadline: float) -> tuple[Server, list[str]]:
    """``llmts serve --workers count --no-access-log`` (one process, so ``--workers 1`` is the baseline)."""
    server = start_llmts(deadline, f"llmts-x{count}", quiet=True, workers=count)
    return server, server.urls


def create_sessions(urls: list[str], sessions: int, chunks: int) -> dict[str, list[str]]:
    """``sessions`` sessions by ``PUT`` on their owners (``int(id[4:], 16) mod N``), each configured."""
    words = [f"w{i} " for i in range(chunks)]
    config = {
        "scenarios": [
            {
                "terminal_policy": "repeat_last_response",
                "responses": [{"text": "".join(words), "chunks": words}],
            }
        ]
    }
    owned: dict[str, list[str]] = {url: [] for url in urls}
    for _ in range(sessions):
        session_id = _new_session_id()
        url = urls[int(session_id[4:], 16) % len(urls)]
        status, body = http_request(url, "PUT", f"/admin-api/sessions/{session_id}", config)
        if status != 201:
            raise RuntimeError(f"PUT session on {url}: {status} {body[:200]!r}")
        owned[url].append(session_id)
    return owned


# wrk's script: each connection sends the chat request of the next session its server owns (round robin
# over the paths in ``paths``), and ``done`` prints the totals as one JSON line for this script to read.
_WRK_SCRIPT = """
local paths = {%(paths)s}
local body = '%(body)s'
local headers = {["Content-Type"] = "application/json", ["Authorization"] = "Bearer x"}
local prebuilt = {}
local next_index = 0
function init(args)
  for i, path in ipairs(paths) do prebuilt[i] = wrk.format("POST", path, headers, body) end
  next_index = 0
end
function request()
  next_index = next_index %% #prebuilt + 1
  return prebuilt[next_index]
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests": %%d, "duration_us": %%d, "errors": %%d, "status_errors": %%d, ' ..
    '"p50_us": %%d, "p99_us": %%d}\\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.timeout, e.status,
    latency:percentile(50), latency:percentile(99)))
end
"""


def _run_wrk(urls: list[str], owned: dict[str, list[str]], args: argparse.Namespace) -> list[LoadResult]:
    """One ``wrk`` per server (one thread, its share of the connections): a warm-up run, then the measured
    one. The load's CPU comes from each wrk's own resource usage."""
    body = json.dumps(
        {"model": MODEL, "stream": args.stream, "messages": [{"role": "user", "content": "Hi"}]},
        separators=(",", ":"),
    )
    per_server = [args.connections // len(urls)] * len(urls)
    per_server[0] += args.connections - sum(per_server)
    scripts = []
    workdir = Path(tempfile.mkdtemp(prefix="bench-wrk-"))
    for index, url in enumerate(urls):
        paths = ", ".join(f'"/sessions/{sid}/openai/v1/chat/completions"' for sid in owned[url])
        script = workdir / f"load{index}.lua"
        script.write_text(_WRK_SCRIPT % {"paths": paths, "body": body})
        scripts.append(script)

    def run(seconds: float) -> list[LoadResult]:
        procs = [
            subprocess.Popen(
                [
                    "wrk",
                    "-t1",
                    f"-c{max(1, per_server[i])}",
                    f"-d{max(1, round(seconds))}s",
                    "--latency",
                    "-s",
                    str(scripts[i]),
                    url,
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            for i, url in enumerate(urls)
        ]
        results = []
        for proc in procs:
            _, _, usage = os.wait4(proc.pid, 0)
            output = proc.stdout.read() if proc.stdout is not None else ""
            proc.returncode = 0
            line = next((text for text in output.splitlines() if text.startswith('{"requests"')), None)
            if line is None:
                results.append(LoadResult(fatal=f"wrk printed no totals: {output[-300:]!r}"))
                continue
            totals = json.loads(line)
            result = LoadResult(
                requests=totals["requests"],
                errors=totals["errors"] + totals["status_errors"],
                elapsed=totals["duration_us"] / 1e6,
                load_cpu_seconds=usage.ru_utime + usage.ru_stime,
            )
            # wrk reports percentiles, not samples: keep the two this script prints.
            result.latencies = [totals["p50_us"] / 1e6, totals["p99_us"] / 1e6]
            results.append(result)
        return results

    try:
        if args.warmup > 0:
            run(args.warmup)
        return run(args.duration)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _run_python_load(
    urls: list[str], owned: dict[str, list[str]], args: argparse.Namespace
) -> list[LoadResult]:
    targets = []
    for url in urls:
        parts = urlsplit(url)
        host, port = parts.hostname or "127.0.0.1", parts.port or 80
        targets.append(
            Target(host, port, [_chat_request(host, port, sid, args.stream) for sid in owned[url]])
        )
    per_proc = [args.connections // args.load_procs] * args.load_procs
    per_proc[0] += args.connections - sum(per_proc)
    specs, first = [], 0
    for connections in per_proc:
        specs.append(
            LoadSpec(
                targets,
                args.stream,
                connections,
                args.warmup,
                args.duration,
                cpu=None,
                server_pids=[],
                first_connection=first,
                keep_latencies=True,
            )
        )
        first += connections
    return run_loads(specs)


def measure_throughput(args: argparse.Namespace, count: int) -> dict[str, Any]:
    server, urls = start_servers(count, time.monotonic() + START_TIMEOUT)
    try:
        owned = create_sessions(urls, args.sessions, args.chunks)
        server_cpu0 = cpu_seconds(server.pids)
        run_load = _run_wrk if args.load == "wrk" else _run_python_load
        results = run_load(urls, owned, args)
        server_cpu1 = cpu_seconds(server.pids)
    finally:
        server.stop()
    fatal = [r.fatal for r in results if r.fatal]
    elapsed = max((r.elapsed for r in results), default=0.0) or 1e-9
    requests = sum(r.requests for r in results)
    latencies = sorted(x for r in results for x in r.latencies)
    if args.load == "wrk":  # each wrk reports its own p50 and p99: the worst server's are quoted
        latencies = [max((r.latencies[0] for r in results if r.latencies), default=0.0)] * 2 + [
            max((r.latencies[1] for r in results if r.latencies), default=0.0)
        ]
    measured = {
        "servers": count,
        "sessions": args.sessions,
        "requests": requests,
        "errors": sum(r.errors for r in results),
        "rps": requests / elapsed,
        "p50_ms": percentile(latencies, 0.5) * 1000,
        "p99_ms": percentile(latencies, 0.99) * 1000,
        "load_cpu_pct": 100 * sum(r.load_cpu_seconds for r in results) / elapsed,
        "server_cpu_pct": (
            100 * (server_cpu1 - server_cpu0) / (args.warmup + args.duration)
            if server_cpu0 is not None and server_cpu1 is not None
            else None
        ),
        "error_samples": [s for r in results for s in r.error_samples][:5],
        "fatal": fatal,
    }
    return measured


def throughput(args: argparse.Namespace) -> int:
    rows = [measure_throughput(args, count) for count in args.servers]
    kind = "stream" if args.stream else "non-stream"
    load = "wrk, one per server" if args.load == "wrk" else f"{args.load_procs} python load procs"
    print(f"{kind}, {args.sessions} sessions, {args.connections} connections, {load}")
    header = ("servers", "req/s", "p50 ms", "p99 ms", "errors", "srv cpu%", "load cpu%")
    print(" ".join(f"{name:>{width}}" for name, width in zip(header, (8, 10, 8, 8, 7, 9, 10), strict=True)))
    for row in rows:
        cpu = row["server_cpu_pct"]
        print(
            f"{row['servers']:>8} {row['rps']:>10.0f} {row['p50_ms']:>8.2f} {row['p99_ms']:>8.2f} "
            f"{row['errors']:>7} {'-' if cpu is None else f'{cpu:.0f}':>9} {row['load_cpu_pct']:>10.0f}"
        )
        for problem in row["fatal"] + row["error_samples"]:
            print(f"    {problem}")
    base = rows[0]["rps"] or 1e-9
    for row in rows[1:]:
        print(f"{row['servers']} servers / {rows[0]['servers']}: {row['rps'] / base:.2f}x")
    _write_json(args.json, {"mode": "throughput", "settings": vars(args), "results": rows})
    return 1 if any(row["fatal"] or row["errors"] for row in rows) else 0


# --------------------------------------------------------------------------------------------------
# xdist: wall time of a real SDK suite under pytest -n W with --llmts-servers 1 vs 2
# --------------------------------------------------------------------------------------------------

_SUITE = '''
"""Generated by benchmarks/scaling.py: a real SDK suite (openai, strict validation) on llmts_session."""

import pytest
from llmts import ConfigBuilder

CALLS = {calls}


@pytest.mark.parametrize("n", range({tests}))
def test_agent_turns(llmts_session, n):
    builder = ConfigBuilder().scenario()
    for turn in range(CALLS):
        builder = builder.text(f"turn {{turn}} of test {{n}}")
    llmts_session.configure(builder)
    client = llmts_session.openai_client(max_retries=0, _strict_response_validation=True)
    for turn in range(CALLS):
        stream = turn % 2 == 1
        if stream:
            parts = client.chat.completions.create(
                model="gpt-4.1-mini", messages=[{{"role": "user", "content": "go"}}], stream=True
            )
            text = "".join(p.choices[0].delta.content or "" for p in parts if p.choices)
        else:
            reply = client.chat.completions.create(
                model="gpt-4.1-mini", messages=[{{"role": "user", "content": "go"}}]
            )
            text = reply.choices[0].message.content
        assert text == f"turn {{turn}} of test {{n}}"
    assert len(llmts_session.requests()) == CALLS
'''


def _time_suite(suite: Path, workers: int, servers: int) -> float:
    env = {key: value for key, value in os.environ.items() if not key.startswith("LLMTS_")}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", str(workers)]
    command += ["--llmts-servers", str(servers), str(suite)]
    began = time.perf_counter()
    done = subprocess.run(command, cwd=str(suite.parent), env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - began
    if done.returncode != 0:
        raise RuntimeError(
            f"pytest failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-2000:]}"
        )
    return elapsed


def xdist(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="bench-xdist-") as directory:
        if args.suite:
            suite = Path(args.suite).resolve()
        else:
            suite = Path(directory) / "test_sdk_suite.py"
            suite.write_text(textwrap.dedent(_SUITE.format(tests=args.tests, calls=args.calls)))
        times: dict[int, list[float]] = {count: [] for count in args.servers}
        for round_index in range(args.rounds):  # alternate, so drift in machine load hits both alike
            for count in args.servers:
                elapsed = _time_suite(suite, args.workers, count)
                times[count].append(elapsed)
                print(f"round {round_index + 1}: -n {args.workers} --llmts-servers {count}: {elapsed:.2f} s")
    medians = {count: statistics.median(values) for count, values in times.items()}
    base = args.servers[0]
    for count in args.servers:
        print(
            f"--llmts-servers {count}: median {medians[count]:.2f} s "
            f"(speed-up {medians[base] / medians[count]:.2f}x vs {base})"
        )
    _write_json(
        args.json, {"mode": "xdist", "settings": vars(args), "seconds": times, "median_seconds": medians}
    )
    return 0


# --------------------------------------------------------------------------------------------------


def _write_json(path: str | None, payload: dict[str, Any]) -> None:
    if path:
        Path(path).write_text(json.dumps(payload, indent=2, default=str))


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    modes = parser.add_subparsers(dest="mode", required=True)
    load = modes.add_parser("throughput", help="aggregate req/s over many sessions, N servers vs 1")
    load.add_argument("--servers", type=int, nargs="+", default=[1, 2], help="server counts (default 1 2)")
    load.add_argument("--sessions", type=int, default=1000, help="sessions, spread by id (default 1000)")
    load.add_argument("--connections", type=int, default=64, help="keep-alive connections (default 64)")
    load.add_argument(
        "--load",
        choices=("wrk", "python"),
        default="wrk" if shutil.which("wrk") else "python",
        help="load generator: wrk (one per server; the default when installed) or this script's epoll client",
    )
    load.add_argument("--load-procs", type=int, default=2, help="python load processes (default 2)")
    load.add_argument("--chunks", type=int, default=20, help="content chunks per answer (default 20)")
    load.add_argument("--stream", action="store_true", help="streamed answers (default: JSON)")
    load.add_argument("--duration", type=float, default=10.0, help="measured seconds (default 10)")
    load.add_argument("--warmup", type=float, default=2.0, help="warm-up seconds (default 2)")
    load.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    suite = modes.add_parser("xdist", help="wall time of pytest -n W with --llmts-servers 1 vs 2")
    suite.add_argument("--workers", type=int, default=2, help="xdist workers (default 2)")
    suite.add_argument("--servers", type=int, nargs="+", default=[1, 2], help="server counts (default 1 2)")
    suite.add_argument("--tests", type=int, default=300, help="tests in the generated suite (default 300)")
    suite.add_argument("--calls", type=int, default=8, help="SDK calls per test (default 8)")
    suite.add_argument("--rounds", type=int, default=3, help="alternating rounds (default 3)")
    suite.add_argument("--suite", help="time this test file or directory instead of the generated suite")
    suite.add_argument("--json", metavar="PATH", help="also write the timings as JSON to PATH")
    args = parser.parse_args(argv)
    if args.mode == "throughput" and (args.connections < args.load_procs or args.load_procs < 1):
        parser.error("--connections must be at least --load-procs (>= 1)")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    return throughput(args) if args.mode == "throughput" else xdist(args)


if __name__ == "__main__":
    raise SystemExit(main())
