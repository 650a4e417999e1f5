"""Throughput and latency of llmts beside the "floor" (a bare werkzeug app on gunicorn+gevent).

Usage: ``python benchmarks/run.py [--duration 5] [--connections 32] [--chunks 20] [--cases ...]
[--json PATH]``. See ``benchmarks/README.md`` and its "Targets" section.

Both servers run with one gevent worker pinned to one CPU (``servers.py``); the load generator
(``loadgen.py``) runs in a separate process pinned to another CPU. This module runs the cases, in rounds,
and reports them against the targets.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))

from compiled import compiled_copy
from floor_app import make_chunks
from loadgen import LoadResult, LoadSpec, Target, run_load
from servers import (
    START_TIMEOUT,
    Server,
    build_request,
    check_answers,
    configure_llmts,
    cpus,
    create_sessions,
    pin,
    process_tree,
    start_floor,
    start_llmts,
    tree_memory_mib,
)

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
# The fastest peer's per-core speed relative to the floor: ~1.5x non-streamed, ~3.1x streamed; the targets
# are 1.0x of it non-streamed and 1.2x streamed, at a p99 of 10 ms (benchmarks/README.md, "Targets").
PEER = {"nonstream": 1.5, "stream": 3.1}
TARGETS = {"nonstream_ratio": PEER["nonstream"], "stream_ratio": 1.2 * PEER["stream"], "p99_ms": 10.0}


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
    parser.add_argument(
        "--compiled",
        action="store_true",
        help="serve llmts from a copy of this tree with the request path compiled by mypyc (compiled.py)",
    )
    args = parser.parse_args(argv)
    cases = [c for item in args.cases for c in item.split(",") if c]
    unknown = sorted(set(cases) - set(CASES))
    if unknown:
        parser.error(f"unknown case(s) {', '.join(unknown)}; choose from {', '.join(CASES)}")
    args.cases = [c for c in CASES if c in cases]
    if args.duration <= 0 or args.warmup < 0 or args.connections <= 0 or args.chunks <= 0 or args.rounds <= 0:
        parser.error("--duration, --connections, --chunks, --rounds must be positive, --warmup not negative")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    chunks = make_chunks(args.chunks)
    server_cpu, load_cpu = cpus()
    if server_cpu is None:
        print("warning: fewer than 2 CPUs available (or no sched_setaffinity): not pinning", file=sys.stderr)
    else:
        print(f"server processes on CPU {server_cpu}, load generator on CPU {load_cpu}")
    with contextlib.ExitStack() as trees:
        # The compiled copy (--compiled) outlives the servers that import it, however the run ends.
        tree = trees.enter_context(compiled_copy()) if args.compiled else None
        print(f"llmts: {'compiled by mypyc, from ' + str(tree) if tree is not None else 'pure Python'}")
        return _measure(args, chunks, server_cpu, load_cpu, tree)


def _measure(
    args: argparse.Namespace,
    chunks: list[str],
    server_cpu: int | None,
    load_cpu: int | None,
    tree: Path | None,
) -> int:
    servers: dict[str, Server] = {}
    failed = False
    try:
        deadline = time.monotonic() + START_TIMEOUT
        wanted = {SERVER_OF[c.split("-")[0]] for c in args.cases}
        for name in ("default", "llmts"):
            if name in wanted:
                servers[name] = start_llmts(deadline, name, tree=tree)
                configure_llmts(servers[name], chunks)
        prefixes = [""]
        if "sessions-nonstream" in args.cases:
            prefixes = create_sessions(servers["llmts"], chunks, SESSIONS)
        if "floor" in wanted:
            servers["floor"] = start_floor(deadline, args.chunks)
        for server in servers.values():
            pin(server.pids, server_cpu)
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
                    "compiled": args.compiled,
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
            server_pids=process_tree(server.proc.pid),
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
