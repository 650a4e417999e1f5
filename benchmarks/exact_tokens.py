"""What exact token counting costs the app per request (docs/tokens.md).

Runs ``inprocess.py``'s app and request in one process, alternating blocks of requests for an OpenAI
model (counted exactly, ``o200k_base``) and for a model llmts has no tokenizer for (the estimate),
measuring process CPU time, and prints the median ratio over the rounds. One process, interleaved: a
busy machine slows both alike. ``--history`` sends a conversation of that many earlier turns (the memo
of repeated texts is what keeps it cheap).

    python benchmarks/exact_tokens.py
    python benchmarks/exact_tokens.py --rounds 40 --history 50
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from inprocess import _CONFIG, chat_environ, serve

from llmts.schema.config import SessionConfig
from llmts.server.app import LlmtsApp

EXACT, ESTIMATED = "gpt-4.1-mini", "local-model"


def _messages(history: int) -> list[dict[str, str]]:
    messages = [{"role": "system", "content": "You are a helpful assistant. " * 20}]
    for turn in range(history):
        messages.append({"role": "user", "content": f"Question {turn}: what about the weather tomorrow?"})
        messages.append({"role": "assistant", "content": f"Answer {turn}: " + "sunny and warm, " * 12})
    messages.append({"role": "user", "content": "Hello there"})
    return messages if history else messages[-1:]


def _environ(model: str, history: int) -> Callable[[], dict[str, Any]]:
    body = orjson.dumps({"model": model, "messages": _messages(history)})
    return lambda: chat_environ(body)


def _cpu_per_request(app: LlmtsApp, environ: Callable[[], dict[str, Any]], requests: int) -> float:
    started = time.process_time()
    serve(app, environ, requests)
    return (time.process_time() - started) / requests * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--requests", type=int, default=2_000, help="requests per model and round")
    parser.add_argument("--history", type=int, default=0, help="earlier turns in each request")
    args = parser.parse_args()
    app = LlmtsApp()
    app.registry.default.configure(SessionConfig.model_validate({**_CONFIG, "models": [EXACT, ESTIMATED]}))
    exact, estimated = _environ(EXACT, args.history), _environ(ESTIMATED, args.history)
    _cpu_per_request(app, exact, args.requests)  # loads the encoding, warms the memo
    _cpu_per_request(app, estimated, args.requests)
    ratios, exact_us, estimated_us = [], [], []
    for round_ in range(args.rounds):
        first_exact = round_ % 2 == 0
        a = _cpu_per_request(app, exact if first_exact else estimated, args.requests)
        b = _cpu_per_request(app, estimated if first_exact else exact, args.requests)
        here, there = (a, b) if first_exact else (b, a)
        ratios.append(here / there)
        exact_us.append(here)
        estimated_us.append(there)
    low, _, high = statistics.quantiles(ratios, n=4)
    print(
        f"history {args.history}: exact/estimate CPU per request median {statistics.median(ratios):.3f} "
        f"(quartiles {low:.3f}-{high:.3f}); exact {statistics.median(exact_us):.1f} us, "
        f"estimate {statistics.median(estimated_us):.1f} us"
    )


if __name__ == "__main__":
    main()
