"""Compare this checkout's server CPU per request with another commit's, in interleaved rounds.

``run.py``'s ratios move by ±10 % from minute to minute on a shared VM, which hides a change worth 3 %.
This script starts two ``llmts serve`` processes side by side, *base* (a temporary ``git worktree`` of
``--base``) and *this* (the checkout it runs from), both pinned to the first CPU, and loads them in turn
with the load generator of ``loadgen.py`` (pinned to the second): many short windows, alternating which goes
first, so both see the same machine. Each round's figure is this/base of server CPU microseconds per
request; the verdict is the median over the rounds. An A/A run (``--base HEAD`` on a clean tree) shows
the noise floor: its median stays within about 1 %. It also prints each side's p50, p99 and p99/p50
(medians over the windows), since a change to the event loop's order or batching can move latency
without moving CPU.

    python benchmarks/compare.py --base HEAD~1
    python benchmarks/compare.py --base main --case nonstream --rounds 60 --window 1
    python benchmarks/compare.py --base 04ef692d --default       # access log on, as users start it
    python benchmarks/compare.py --compiled --default             # HEAD pure (base) and compiled (this)

With ``--compiled``, *this* is ``--base`` itself with the request path's modules compiled by mypyc
(benchmarks/compiled.py), so the figure is compiled/pure for the same code.

See benchmarks/README.md, "Comparing two commits" and "A compiled request path".
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from compiled import compiled_checkout, worktree  # noqa: E402
from floor_app import make_chunks  # noqa: E402
from loadgen import LoadSpec, Target, run_load  # noqa: E402
from servers import (  # noqa: E402
    START_TIMEOUT,
    Server,
    build_request,
    configure_llmts,
    cpus,
    pin,
    process_tree,
    start_llmts,
)


def start(name: str, tree: Path, quiet: bool, chunks: int) -> Server:
    """``llmts serve`` importing the package from ``tree``, configured as ``run.py`` configures it."""
    server = start_llmts(time.monotonic() + START_TIMEOUT, name, quiet=quiet, tree=tree)
    try:
        configure_llmts(server, make_chunks(chunks))
    except BaseException:
        server.stop()
        raise
    return server


def _spec(
    server: Server, args: argparse.Namespace, warmup: float, window: float, cpu: int | None
) -> LoadSpec:
    parts = urlsplit(server.url)
    host, port = parts.hostname or "127.0.0.1", int(parts.port or 80)
    stream = args.case == "stream"
    return LoadSpec(
        [Target(host, port, [build_request(host, port, stream)])],
        stream,
        args.connections,
        warmup,
        window,
        cpu,
        process_tree(server.proc.pid),
    )


def compare(args: argparse.Namespace) -> int:
    server_cpu, load_cpu = cpus()
    with contextlib.ExitStack() as trees:
        tree = trees.enter_context(worktree(args.base))
        this = trees.enter_context(compiled_checkout(args.base)) if args.compiled else REPO
        servers = {
            "base": start("base", tree, not args.default, args.chunks),
            "this": start("this", this, not args.default, args.chunks),
        }
        try:
            for server in servers.values():
                pin(server.pids, server_cpu)
            for server in servers.values():  # both at their steady state before the first round
                run_load(_spec(server, args, 0.0, args.warmup, load_cpu))
            ratios: list[float] = []
            figures: dict[str, list[float]] = {"base": [], "this": []}
            # Each window's p50 and p99 (ms): latency follows CPU per request, and its spread follows the
            # order and batching of the event loop, which a change may move without moving the CPU.
            latencies: dict[str, list[tuple[float, float]]] = {"base": [], "this": []}
            for index in range(args.rounds):
                order = ("base", "this") if index % 2 == 0 else ("this", "base")
                got: dict[str, float] = {}
                for name in order:
                    result = run_load(_spec(servers[name], args, 0.3, args.window, load_cpu))
                    if result.fatal or result.errors or result.server_cpu_us_per_req is None:
                        print(f"{name}: {result.fatal or result.error_samples or 'no CPU figure'}")
                        return 1
                    got[name] = result.server_cpu_us_per_req
                    figures[name].append(got[name])
                    latencies[name].append((result.p50_ms, result.p99_ms))
                ratios.append(got["this"] / got["base"])
                print(
                    f"round {index + 1:>3}: base {got['base']:6.1f}  this {got['this']:6.1f} us/req  "
                    f"this/base {ratios[-1]:.3f}  p99 base {latencies['base'][-1][1]:5.1f}  "
                    f"this {latencies['this'][-1][1]:5.1f} ms",
                    flush=True,
                )
        finally:
            for server in servers.values():
                server.stop()
    mode = "access log on" if args.default else "--no-access-log"
    if args.compiled:
        mode += f", this = {args.base} compiled"
    low, _, high = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
    print(
        f"\n{args.case}, {mode}, {args.rounds} rounds of {args.window:g} s: server CPU per request "
        f"this/base median {statistics.median(ratios):.3f} (quartiles {low:.3f}-{high:.3f}); "
        f"base {statistics.median(figures['base']):.1f} us, this {statistics.median(figures['this']):.1f} us"
    )
    for name in ("base", "this"):
        p50 = statistics.median(p50 for p50, _ in latencies[name])
        p99 = statistics.median(p99 for _, p99 in latencies[name])
        spread = statistics.median([p99 / p50 for p50, p99 in latencies[name] if p50 > 0] or [0.0])
        print(f"{name}: p50 {p50:.2f} ms, p99 {p99:.2f} ms, p99/p50 {spread:.2f} (medians over the windows)")
    return 0


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="HEAD", help="the commit to compare with (default HEAD)")
    parser.add_argument("--case", choices=("stream", "nonstream"), default="stream")
    parser.add_argument("--rounds", type=int, default=40, help="interleaved rounds (default 40)")
    parser.add_argument("--window", type=float, default=1.0, help="measured seconds per server and round (1)")
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds of load per server first (3)")
    parser.add_argument("--connections", type=int, default=32, help="keep-alive connections (32)")
    parser.add_argument("--chunks", type=int, default=20, help="content chunks per streamed answer (20)")
    parser.add_argument("--default", action="store_true", help="the access log on, as `llmts serve` starts")
    parser.add_argument(
        "--compiled", action="store_true", help="this = --base with the hot modules compiled by mypyc"
    )
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.window <= 0:
        parser.error("--rounds must be at least 1 and --window positive")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    return compare(parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
