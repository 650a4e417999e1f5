"""The app's CPU instructions per request, counted by valgrind: a figure the machine's load cannot move.

``run.py`` and ``compare.py`` time a live server, and on a shared VM their figures move by ±10 % between
minutes and by 2x between days. This script runs ``inprocess.py``'s app (an OpenAI chat request answered
by a 20-chunk ``repeat_last_response`` scenario) under ``valgrind --tool=callgrind`` twice per mode: once
answering the warm-up only, once answering ``--requests`` more; the difference over ``--requests`` is the
instructions one request costs, sockets, gevent and gunicorn left out. With ``PYTHONHASHSEED`` fixed a run
repeats to within about 0.01 %, however busy the machine; what still moves the figure is the heap's
layout (which method-cache entries collide), about ±0.7 % between layouts. So each tree is counted in
``--layouts`` layouts (objects allocated before llmts is imported) and the median is the figure, with
the range beside it. ``--base`` counts another commit the same way (a temporary ``git worktree``) and
prints this/base of the medians; a ratio within ~1 % of 1.000 is layout, not code.

    python benchmarks/instructions.py
    python benchmarks/instructions.py --base HEAD~1 --mode stream

Each valgrind run takes about a minute of CPU on the 2-core VM, and the runs of one call go side by side,
one per CPU: both modes in 3 layouts take about 6 minutes, twice that with ``--base``. See
benchmarks/README.md, "Instructions per request".
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from compiled import worktree  # noqa: E402

_WARM_UP = 500
_VALGRIND = ("valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null")
_COLLECTED = re.compile(rb"Collected : (\d+)")
# Objects the child allocates before importing llmts, one count per layout: each count moves the
# interpreter's heap, and with it which attribute and method-cache entries collide, by ~1 % of a request.
_LAYOUT_PADDING = (0, 37, 500, 3001, 11, 1200, 7919)

# What runs under valgrind: the app of ``tree`` (first on sys.path), warmed up, then ``requests`` more.
# Only ``inprocess._CONFIG`` and ``_run`` are used, not a newer helper: a ``--base`` commit has just those.
_CHILD = f"""
import sys
tree, stream, requests, padding = sys.argv[1], sys.argv[2] == "stream", int(sys.argv[3]), int(sys.argv[4])
_layout = [object() for _ in range(padding)] + [str(i) * 3 for i in range(padding)]
sys.path[:0] = [tree, tree + "/benchmarks"]
import inprocess
import llmts
assert llmts.__file__.startswith(tree), (llmts.__file__, tree)
from llmts.schema.config import SessionConfig
from llmts.server.app import LlmtsApp
app = LlmtsApp()
app.registry.default.configure(SessionConfig.model_validate(inprocess._CONFIG))
inprocess._run(app, stream, {_WARM_UP})
inprocess._run(app, stream, requests)
"""


def _count(tree: Path, mode: str, requests: int, padding: int) -> int:
    """Instructions of one valgrind run of the child."""
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"}
    completed = subprocess.run(
        [*_VALGRIND, sys.executable, "-c", _CHILD, str(tree), mode, str(requests), str(padding)],
        capture_output=True,
        env=env,
        check=False,
    )
    found = _COLLECTED.search(completed.stderr)
    if completed.returncode != 0 or found is None:
        sys.exit(f"valgrind run failed ({tree}, {mode}, {requests}):\n{completed.stderr.decode()[-2000:]}")
    return int(found.group(1))


def per_request(tree: Path, mode: str, requests: int, layouts: int, pool: ThreadPoolExecutor) -> list[float]:
    """Instructions per ``mode`` request of the app in ``tree``, one figure per heap layout."""
    runs = [(padding, n) for padding in _LAYOUT_PADDING[:layouts] for n in (0, requests)]
    counts = list(pool.map(lambda run: _count(tree, mode, run[1], run[0]), runs))
    return [(counts[i + 1] - counts[i]) / requests for i in range(0, len(counts), 2)]


def _shown(figures: list[float]) -> str:
    median = statistics.median(figures)
    spread = f" ({min(figures) / 1000:.1f}-{max(figures) / 1000:.1f}k)" if len(figures) > 1 else ""
    return f"{median / 1000:8.1f}k{spread}"


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1000, help="requests counted per run (default 1000)")
    parser.add_argument("--mode", choices=("stream", "nonstream", "both"), default="both")
    parser.add_argument(
        "--layouts",
        type=int,
        default=3,
        choices=range(1, len(_LAYOUT_PADDING) + 1),
        help="heap layouts counted per mode and tree; the median is the figure (default 3)",
    )
    parser.add_argument("--base", help="also count this commit (a temporary git worktree); prints this/base")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed (apt-get install valgrind)")
    modes = ("nonstream", "stream") if args.mode == "both" else (args.mode,)
    with ThreadPoolExecutor(max_workers=max(1, len(os.sched_getaffinity(0)))) as pool:
        this = {mode: per_request(REPO, mode, args.requests, args.layouts, pool) for mode in modes}
        base: dict[str, list[float]] = {}
        if args.base:
            with worktree(args.base) as tree:
                base = {mode: per_request(tree, mode, args.requests, args.layouts, pool) for mode in modes}
    for mode in modes:
        line = f"{mode:>10} {_shown(this[mode])} instructions/request"
        if mode in base:
            ratio = statistics.median(this[mode]) / statistics.median(base[mode])
            line += f"   base {_shown(base[mode])}   this/base {ratio:.3f}"
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
