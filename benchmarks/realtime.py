"""Concurrent realtime connections on one llmts worker: memory per idle connection, how many it holds, and
the turn rate, latency and CPU of active sessions (issue 27; benchmarks/README.md, "Realtime connections").

Usage: ``python benchmarks/realtime.py [--idle 100 1000 5000] [--deflate off on] [--active 1 10 50]
[--kinds text audio] [--duration 5] [--json PATH]``.

Each phase starts ``llmts serve --no-access-log`` (one gevent worker, as ``run.py`` does) with a realtime
scenario in its default session, pins the server to the first CPU and this process (the load) to the
second, and drives the OpenAI Realtime route (``/openai/v1/realtime``) with raw ``websockets`` asyncio
clients:

* **idle**: connections are opened (at most ``--handshakes`` at a time, each one done when its
  ``session.created`` arrives) up to each count of ``--idle`` in turn, within ``--budget`` seconds per
  step. At each count: the worker's VmRSS (KiB per connection over the baseline, which is taken after
  one warm-up connection has loaded the WebSocket stack), its CPU while the connections sit idle for
  ``--idle-window`` seconds, ``/admin-api/process`` (greenlets, open sockets) and the latency of
  ``--idle-turns`` text turns on connections spread over them. ``--cycles`` repeats the ramp after closing
  everything (RSS after each close). Once per ``--deflate`` mode (``on``: the client offers
  permessage-deflate, as the ``websockets`` default; ``off``: as the openai SDK connects), a fresh server
  each. The highest count reached without an error is the "held" figure.
* **active**: M connections (each count of ``--active``) each run turns back to back for ``--warmup`` +
  ``--duration`` seconds: a ``text`` turn is ``conversation.item.create`` + ``response.create``
  (``output_modalities: ["text"]``) up to ``response.done``; an ``audio`` turn appends ``--speech-ms`` of
  PCM16 speech and 300 ms of zeros (server VAD commits it and starts the response) and the answer comes
  as generated audio with its transcript. Latency runs from the message that asks for the answer
  (``response.create``, or the append of silence that ends the speech) to ``response.done``. A connection
  reconnects after ``--turns-per-connection`` turns, like a voice session of bounded length (the
  conversation, and so each turn's request, stops growing).

Exit code 1 when any phase saw an error (a refused or dropped connection, an ``error`` event, a response
not ``completed``).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import os
import resource
import signal
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import orjson
from websockets.asyncio.client import ClientConnection, connect

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))

from loadgen import cpu_seconds, percentile  # noqa: E402
from servers import START_TIMEOUT, Server, cpus, http_request, pin, start_llmts  # noqa: E402

from llmts.runtime.media.audio import speech_pcm  # noqa: E402

MODEL = "gpt-realtime"
ANSWER = ["It is", " sunny", " in Paris", " today."]
PCM_BYTES_PER_MS = 48  # 24 kHz PCM16 mono, the session's default input format
SILENCE = bytes(PCM_BYTES_PER_MS * 300)  # past server VAD's default 200 ms of silence
# File descriptors the load needs beside one per connection (the server inherits the same limit).
FD_SPARE = 256


def _config() -> dict[str, Any]:
    return {
        "models": [MODEL],
        "scenarios": [
            {
                "id": "bench",
                "operation": "realtime",
                "terminal_policy": "repeat_last_response",
                "responses": [{"text": "".join(ANSWER), "chunks": ANSWER}],
            }
        ],
    }


# --------------------------------------------------------------------------------------------------
# The worker process
# --------------------------------------------------------------------------------------------------


class Worker:
    """The server's gunicorn worker: its pid, resident memory and CPU time."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.pid = int(self.process()["pid"])

    def process(self) -> dict[str, Any]:
        status, body = http_request(self.server.url, "GET", "/admin-api/process")
        if status != 200:
            raise self.server.fail(f"/admin-api/process answered {status}")
        return dict(json.loads(body))

    def rss_kib(self) -> int:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise RuntimeError("no VmRSS")

    def cpu(self) -> float:
        seconds = cpu_seconds([self.pid])
        if seconds is None:
            raise RuntimeError(f"cannot read /proc/{self.pid}/stat")
        return seconds


def _start(server_cpu: int | None) -> tuple[Server, Worker]:
    server = start_llmts(time.monotonic() + START_TIMEOUT, "llmts")
    try:
        status, body = http_request(server.url, "POST", "/admin-api/configure", _config())
        if status != 200:
            raise server.fail(f"configure failed: {status} {body[:300]!r}")
        pin(server.pids, server_cpu)
        return server, Worker(server)
    except BaseException:
        server.stop()
        raise


def _raise_fd_limit(wanted: int) -> int:
    """Raise this process's soft RLIMIT_NOFILE towards ``wanted`` (the hard limit caps it; servers started
    afterwards inherit it); returns the soft limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


# --------------------------------------------------------------------------------------------------
# The client side (raw websockets, asyncio)
# --------------------------------------------------------------------------------------------------


class TurnFailed(Exception):
    pass


async def _open(url: str, deflate: bool, timeout: float) -> ClientConnection:
    """One realtime connection, once its ``session.created`` has arrived."""
    ws = await connect(
        url,
        additional_headers={"Authorization": "Bearer bench"},
        compression="deflate" if deflate else None,
        max_size=None,
        open_timeout=timeout,
        close_timeout=2,
        ping_interval=None,  # an idle connection sends nothing (the server's idle timeout is 300 s)
    )
    try:
        first = orjson.loads(await asyncio.wait_for(ws.recv(decode=False), timeout))
        if first.get("type") != "session.created":
            raise TurnFailed(f"first event {first.get('type')!r}")
    except BaseException:
        await ws.close()
        raise
    return ws


async def _until_done(ws: ClientConnection, timeout: float) -> None:
    """Read a turn's events up to ``response.done``; raise unless it completed."""
    while True:
        event = orjson.loads(await asyncio.wait_for(ws.recv(decode=False), timeout))
        kind = event.get("type")
        if kind == "error":
            raise TurnFailed(f"error event: {event.get('error')}")
        if kind == "response.done":
            status = event["response"]["status"]
            if status != "completed":
                raise TurnFailed(f"response.done status {status!r}")
            return


_ITEM = orjson.dumps(
    {
        "type": "conversation.item.create",
        "item": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "weather?"}]},
    }
)
_CREATE = orjson.dumps({"type": "response.create", "response": {"output_modalities": ["text"]}})


async def text_turn(ws: ClientConnection, timeout: float) -> float:
    """One text turn; its latency (``response.create`` sent -> ``response.done`` read), seconds."""
    await ws.send(_ITEM, text=True)
    begin = time.perf_counter()
    await ws.send(_CREATE, text=True)
    await _until_done(ws, timeout)
    return time.perf_counter() - begin


def _append(pcm: bytes) -> bytes:
    return orjson.dumps({"type": "input_audio_buffer.append", "audio": base64.b64encode(pcm).decode()})


async def audio_turn(ws: ClientConnection, speech: bytes, timeout: float) -> float:
    """One spoken turn answered with audio; latency from the append of silence that ends the speech."""
    await ws.send(speech, text=True)
    begin = time.perf_counter()
    await ws.send(_SILENCE_APPEND, text=True)
    await _until_done(ws, timeout)
    return time.perf_counter() - begin


_SILENCE_APPEND = _append(SILENCE)


# --------------------------------------------------------------------------------------------------
# Idle connections
# --------------------------------------------------------------------------------------------------


@dataclass
class IdleStep:
    target: int
    cycle: int = 1
    reached: int = 0
    errors: int = 0
    open_seconds: float = 0.0
    rss_kib: int = 0
    kib_per_connection: float = 0.0
    idle_cpu_pct: float = 0.0
    greenlets: int = 0
    open_sockets: int = 0
    turn_p50_ms: float | None = None
    turn_max_ms: float | None = None
    error_samples: list[str] = field(default_factory=list)

    def error(self, what: str, exc: BaseException | None = None) -> None:
        self.errors += 1
        if len(self.error_samples) < 5:
            self.error_samples.append(what if exc is None else f"{what}{type(exc).__name__}: {exc}")


@dataclass
class IdleRun:
    deflate: bool
    baseline_rss_kib: int = 0
    after_close_rss_kib: list[int] = field(default_factory=list)
    held: int = 0
    steps: list[IdleStep] = field(default_factory=list)


async def _open_more(
    args: argparse.Namespace, url: str, deflate: bool, held: list[ClientConnection], step: IdleStep
) -> None:
    """Open connections until ``held`` has ``step.target`` (``--handshakes`` at once, within ``--budget``)."""
    gate = asyncio.Semaphore(args.handshakes)

    async def one() -> ClientConnection | None:
        async with gate:
            try:
                return await _open(url, deflate, args.timeout)
            except Exception as exc:  # counted: the step's errors
                step.error("handshake: ", exc)
                return None

    begin = time.perf_counter()
    tasks = [asyncio.ensure_future(one()) for _ in range(step.target - len(held))]
    if tasks:
        done, pending = await asyncio.wait(tasks, timeout=args.budget)
        for task in pending:
            task.cancel()
            step.error(f"handshakes not done within {args.budget:g} s")
        for task in done:
            ws = task.result()
            if ws is not None:
                held.append(ws)
    step.open_seconds = time.perf_counter() - begin
    step.reached = len(held)


async def _measure_idle(
    args: argparse.Namespace, worker: Worker, held: list[ClientConnection], step: IdleStep, baseline: int
) -> None:
    """Memory, idle CPU, the worker's own counts, and turns timed one at a time on connections spread
    over all those held."""
    await asyncio.sleep(1.0)
    step.rss_kib = worker.rss_kib()
    step.kib_per_connection = (step.rss_kib - baseline) / max(1, step.reached)
    cpu0, t0 = worker.cpu(), time.perf_counter()
    await asyncio.sleep(args.idle_window)
    step.idle_cpu_pct = 100 * (worker.cpu() - cpu0) / (time.perf_counter() - t0)
    try:
        process = await asyncio.to_thread(worker.process)
        step.greenlets, step.open_sockets = process["greenlets"], process["open_sockets"]
    except Exception as exc:  # e.g. the worker's connection cap is full: a new connection waits
        step.error("GET /admin-api/process: ", exc)
    took: list[float] = []
    try:
        for index in range(args.idle_turns if held else 0):
            took.append(1000 * await text_turn(held[index * len(held) // args.idle_turns], args.timeout))
    except Exception as exc:
        step.error("a turn on an idle connection: ", exc)
    if took:
        step.turn_p50_ms, step.turn_max_ms = statistics.median(took), max(took)


async def _idle(args: argparse.Namespace, url: str, worker: Worker, deflate: bool) -> IdleRun:
    run = IdleRun(deflate)
    # Warm-up: the first connection loads the WebSocket stack and the protocol modules.
    ws = await _open(url, deflate, args.timeout)
    await text_turn(ws, args.timeout)
    await ws.close()
    await asyncio.sleep(1.0)
    run.baseline_rss_kib = worker.rss_kib()
    for cycle in range(1, args.cycles + 1):
        held: list[ClientConnection] = []
        try:
            for target in args.idle:
                step = IdleStep(target, cycle)
                run.steps.append(step)
                await _open_more(args, url, deflate, held, step)
                await _measure_idle(args, worker, held, step, run.baseline_rss_kib)
                _print_idle(step)
                if step.errors:
                    break
                run.held = max(run.held, step.reached)
        finally:
            await asyncio.gather(*(ws.close() for ws in held), return_exceptions=True)
        await asyncio.sleep(2.0)
        run.after_close_rss_kib.append(worker.rss_kib())
        print(
            f"  closed all: worker RSS {run.after_close_rss_kib[-1] / 1024:.1f} MiB "
            f"(baseline {run.baseline_rss_kib / 1024:.1f} MiB)",
            flush=True,
        )
        if any(step.errors for step in run.steps):
            break
    return run


IDLE_HEADER = (
    f"  {'connections':>11} {'open s':>7} {'errors':>6} {'RSS MiB':>8} {'KiB/conn':>8} {'idle CPU%':>9} "
    f"{'greenlets':>9} {'sockets':>7} {'turn ms p50 / max':>17}"
)


def _print_idle(step: IdleStep) -> None:
    turn = "-" if step.turn_p50_ms is None else f"{step.turn_p50_ms:.1f} / {step.turn_max_ms:.1f}"
    print(
        f"  {step.reached:>11} {step.open_seconds:>7.1f} {step.errors:>6} {step.rss_kib / 1024:>8.1f} "
        f"{step.kib_per_connection:>8.1f} {step.idle_cpu_pct:>9.1f} {step.greenlets:>9} "
        f"{step.open_sockets:>7} {turn:>17}",
        flush=True,
    )
    for sample in step.error_samples:
        print(f"    error sample: {sample}")


# --------------------------------------------------------------------------------------------------
# Active sessions
# --------------------------------------------------------------------------------------------------


@dataclass
class ActiveRun:
    kind: str
    connections: int
    turns: int = 0
    errors: int = 0
    reconnects: int = 0
    elapsed: float = 0.0
    turns_per_second: float = 0.0
    p50_ms: float = 0.0
    p99_ms: float = 0.0
    max_ms: float = 0.0
    server_cpu_pct: float = 0.0
    server_cpu_us_per_turn: float | None = None
    load_cpu_pct: float = 0.0
    error_samples: list[str] = field(default_factory=list)


async def _active(args: argparse.Namespace, url: str, worker: Worker, kind: str, count: int) -> ActiveRun:
    result = ActiveRun(kind, count)
    size = PCM_BYTES_PER_MS * args.speech_ms
    words = speech_pcm("what is the weather like in Paris")
    speech = _append((words * (size // len(words) + 1))[:size])
    latencies: list[float] = []
    start = time.perf_counter()
    measure_from = start + args.warmup
    stop_at = measure_from + args.duration

    async def session() -> None:
        while time.perf_counter() < stop_at:
            try:
                ws = await _open(url, args.deflate_active, args.timeout)
            except Exception as exc:
                _failed(result, exc, time.perf_counter() >= measure_from)
                await asyncio.sleep(0.1)
                continue
            try:
                for _ in range(args.turns_per_connection):
                    if time.perf_counter() >= stop_at:
                        break
                    if kind == "text":
                        took = await text_turn(ws, args.timeout)
                    else:
                        took = await audio_turn(ws, speech, args.timeout)
                    done = time.perf_counter()
                    if measure_from <= done <= stop_at:
                        latencies.append(took)
            except Exception as exc:
                _failed(result, exc, time.perf_counter() >= measure_from)
            finally:
                await ws.close()
            if time.perf_counter() < stop_at:
                result.reconnects += 1

    async def sample() -> tuple[float, float, os.times_result, os.times_result]:
        await asyncio.sleep(max(0.0, measure_from - time.perf_counter()))
        cpu0, load0, t0 = worker.cpu(), os.times(), time.perf_counter()
        await asyncio.sleep(max(0.0, stop_at - time.perf_counter()))
        return worker.cpu() - cpu0, time.perf_counter() - t0, load0, os.times()

    sessions = [asyncio.ensure_future(session()) for _ in range(count)]
    server_cpu, elapsed, load0, load1 = await sample()
    await asyncio.gather(*sessions)
    values = sorted(latencies)
    result.turns = len(values)
    result.elapsed = elapsed
    result.turns_per_second = result.turns / elapsed
    result.p50_ms = percentile(values, 0.50) * 1000
    result.p99_ms = percentile(values, 0.99) * 1000
    result.max_ms = (values[-1] if values else 0.0) * 1000
    result.server_cpu_pct = 100 * server_cpu / elapsed
    result.server_cpu_us_per_turn = 1e6 * server_cpu / result.turns if result.turns else None
    load_seconds = (load1.user - load0.user) + (load1.system - load0.system)
    result.load_cpu_pct = 100 * load_seconds / elapsed
    _print_active(result)
    return result


def _failed(result: ActiveRun, exc: BaseException, measuring: bool) -> None:
    if measuring:
        result.errors += 1
    if len(result.error_samples) < 5:
        result.error_samples.append(f"{type(exc).__name__}: {exc}")


ACTIVE_HEADER = (
    f"  {'kind':<5} {'conns':>5} {'turns/s':>8} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>7} {'errors':>6} "
    f"{'srv CPU%':>8} {'srv us/turn':>11} {'load CPU%':>9} {'reconnects':>10}"
)


def _print_active(r: ActiveRun) -> None:
    per_turn = "-" if r.server_cpu_us_per_turn is None else f"{r.server_cpu_us_per_turn:.0f}"
    print(
        f"  {r.kind:<5} {r.connections:>5} {r.turns_per_second:>8.0f} {r.p50_ms:>7.2f} {r.p99_ms:>7.2f} "
        f"{r.max_ms:>7.1f} {r.errors:>6} {r.server_cpu_pct:>8.0f} {per_turn:>11} {r.load_cpu_pct:>9.0f} "
        f"{r.reconnects:>10}",
        flush=True,
    )
    for sample in r.error_samples:
        print(f"    error sample: {sample}")


# --------------------------------------------------------------------------------------------------
# Orchestration
# --------------------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--idle", type=int, nargs="*", default=[100, 1000, 5000], help="idle connection counts, ramped"
    )
    parser.add_argument("--deflate", nargs="*", default=["off", "on"], choices=["off", "on"])
    parser.add_argument("--cycles", type=int, default=1, help="ramp up and close down this many times (1)")
    parser.add_argument("--handshakes", type=int, default=100, help="handshakes in flight at once (100)")
    parser.add_argument("--budget", type=float, default=60.0, help="seconds to reach each idle count (60)")
    parser.add_argument("--idle-window", type=float, default=3.0, help="seconds of idle CPU measured (3)")
    parser.add_argument("--idle-turns", type=int, default=20, help="text turns timed at each idle count (20)")
    parser.add_argument("--active", type=int, nargs="*", default=[1, 10, 50], help="active connection counts")
    parser.add_argument("--kinds", nargs="*", default=["text", "audio"], choices=["text", "audio"])
    parser.add_argument("--duration", type=float, default=5.0, help="measured seconds per active case (5)")
    parser.add_argument("--warmup", type=float, default=1.0, help="warm-up seconds per active case (1)")
    parser.add_argument("--turns-per-connection", type=int, default=20, help="then reconnect (20)")
    parser.add_argument("--speech-ms", type=int, default=1000, help="speech per audio turn, ms (1000)")
    parser.add_argument("--deflate-active", action="store_true", help="offer permessage-deflate when active")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds one handshake or turn may take")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    args = parser.parse_args(argv)
    if any(n <= 0 for n in args.idle + args.active) or args.duration <= 0 or args.turns_per_connection <= 0:
        parser.error("counts, --duration and --turns-per-connection must be positive")
    args.idle = sorted(set(args.idle))
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    wanted = max([*args.idle, *args.active, 0]) + FD_SPARE
    limit = _raise_fd_limit(wanted)
    print(
        f"open files (RLIMIT_NOFILE soft): {limit}"
        + ("" if limit >= wanted else f", below the {wanted} wanted")
    )
    server_cpu, load_cpu = cpus()
    if load_cpu is not None:
        os.sched_setaffinity(0, {load_cpu})
        print(f"server on CPU {server_cpu}, load (this process) on CPU {load_cpu}")
    with contextlib.suppress(OSError):
        print(f"load average before: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    document: dict[str, Any] = {"settings": {k: v for k, v in vars(args).items() if k != "json"}}
    idle_runs: list[IdleRun] = []
    active_runs: list[ActiveRun] = []
    for mode in args.deflate if args.idle else []:
        server, worker = _start(server_cpu)
        try:
            url = server.url.replace("http://", "ws://") + f"/openai/v1/realtime?model={MODEL}"
            print(f"\n=== idle connections, permessage-deflate {mode} (worker pid {worker.pid}) ===")
            print(IDLE_HEADER, flush=True)
            idle_runs.append(asyncio.run(_idle(args, url, worker, mode == "on")))
        finally:
            server.stop()
    if args.active:
        server, worker = _start(server_cpu)
        try:
            url = server.url.replace("http://", "ws://") + f"/openai/v1/realtime?model={MODEL}"
            print(f"\n=== active sessions, {args.warmup:g} s warm-up + {args.duration:g} s each ===")
            print(ACTIVE_HEADER, flush=True)
            for kind in args.kinds:
                for count in args.active:
                    active_runs.append(asyncio.run(_active(args, url, worker, kind, count)))
        finally:
            server.stop()
    print()
    for run in idle_runs:
        per = [step.kib_per_connection for step in run.steps if step.reached and step.cycle == 1]
        median = f"{statistics.median(per):.1f}" if per else "-"
        print(
            f"deflate {'on ' if run.deflate else 'off'}: held {run.held} idle connections without an error; "
            f"{median} KiB per connection (median of the steps)"
        )
    with contextlib.suppress(OSError):
        print(f"load average after: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    errors = sum(s.errors for r in idle_runs for s in r.steps) + sum(r.errors for r in active_runs)
    if args.json:
        document["idle"] = [asdict(run) for run in idle_runs]
        document["active"] = [asdict(run) for run in active_runs]
        Path(args.json).write_text(json.dumps(document, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
