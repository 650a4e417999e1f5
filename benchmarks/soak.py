"""Soak test: many mixed requests against one llmts server; RSS, greenlets and sockets per 10,000.

Mix: OpenAI Chat, OpenAI Responses, Anthropic Messages and Gemini generateContent, each plain or
streamed; a share of stream faults (``early_clean_end``, ``abort_connection``) and scripted errors;
session churn (sessions created, configured, used and deleted all along). Every ``--sample-every``
requests the worker's ``GET /admin-api/process`` is sampled; the report prints each sample and the
growth since the first sample after warm-up. See benchmarks/README.md.

    python benchmarks/soak.py                      # 100,000 requests (minutes; needs a quiet machine)
    python benchmarks/soak.py --requests 2000 --sample-every 500      # a quick check that it works
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import sys
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from llmts import LlmTestServer, SessionClient

_USER = [{"role": "user", "content": "Hi there"}]
_ANSWER = {"text": "Soak answer with a few words", "chunks": ["Soak answer ", "with a few ", "words"]}
_ERROR = {"error": {"status": 429, "code": "rate_limit_exceeded", "message": "slow down"}}
# Streamed requests ask for model ``soak-stream``, whose scenario carries the stream faults (a fault plan
# on a non-streamed request is a fixture mismatch). Each queue restarts: 1 in 10 answers is a fault/error.
_STREAM_RESPONSES = [
    *[_ANSWER] * 7,
    {**_ANSWER, "stream_delivery": {"mode": "early_clean_end", "after_content_frames": 1}},
    {**_ANSWER, "stream_delivery": {"mode": "abort_connection", "after_content_frames": 1}},
    _ERROR,
]
_CONFIG = {
    "models": ["gpt-4.1-mini", "claude-sonnet-4-5", "gemini-2.5-flash", "soak-stream"],
    "scenarios": [
        {"model": "soak-stream", "responses": _STREAM_RESPONSES, "terminal_policy": "restart"},
        {"responses": [*[_ANSWER] * 9, _ERROR], "terminal_policy": "restart"},
    ],
}


def _call(base_path: str, provider: str, stream: bool) -> tuple[str, str, dict[str, Any]]:
    model = "soak-stream" if stream else None
    if provider == "openai-chat":
        return (
            "POST",
            f"{base_path}/openai/v1/chat/completions",
            {
                "model": "gpt-4.1-mini",
                "messages": _USER,
                "stream": stream,
            },
        )
    if provider == "openai-responses":
        return (
            "POST",
            f"{base_path}/openai/v1/responses",
            {
                "model": "gpt-4.1-mini",
                "input": "Hi there",
                "stream": stream,
            },
        )
    if provider == "anthropic":
        return (
            "POST",
            f"{base_path}/anthropic/v1/messages",
            {
                "model": model or "claude-sonnet-4-5",
                "max_tokens": 64,
                "messages": _USER,
                "stream": stream,
            },
        )
    action = "streamGenerateContent?alt=sse" if stream else "generateContent"
    return (
        "POST",
        f"{base_path}/gemini/v1beta/models/{model or 'gemini-2.5-flash'}:{action}",
        {"contents": [{"role": "user", "parts": [{"text": "Hi there"}]}]},
    )


_PROVIDERS = ["openai-chat", "openai-responses", "anthropic", "gemini"]


class _Counters:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.done = 0
        self.by_status: dict[str, int] = {}
        self.errors: list[str] = []

    def add(self, outcome: str) -> int:
        with self.lock:
            self.done += 1
            self.by_status[outcome] = self.by_status.get(outcome, 0) + 1
            return self.done


def _worker(server: LlmTestServer, total: int, churn_every: int, counters: _Counters, seed: int) -> None:
    rng = random.Random(seed)
    parts = urlsplit(server.url)
    host = parts.hostname or "127.0.0.1"
    conn = http.client.HTTPConnection(host, parts.port, timeout=30)
    session: SessionClient | None = None
    used = churn_every
    while True:
        if used >= churn_every:  # session churn: a fresh configured session every ``churn_every`` requests
            if session is not None:
                session.delete()
            session = server.create_session()
            session.configure(_CONFIG)
            used = 0
        assert session is not None
        with counters.lock:
            if counters.done >= total:
                break
        method, path, body = _call(
            urlsplit(session.provider_base).path, rng.choice(_PROVIDERS), rng.random() < 0.5
        )
        try:
            conn.request(
                method, path, json.dumps(body), {"Content-Type": "application/json", "x-api-key": "k"}
            )
            response = conn.getresponse()
            response.read()
            outcome = str(response.status)
        except (OSError, http.client.HTTPException) as exc:  # abort_connection: expected resets
            outcome = type(exc).__name__
            conn.close()
            conn = http.client.HTTPConnection(host, parts.port, timeout=30)
        used += 1
        counters.add(outcome)
    if session is not None:
        session.delete()
    conn.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=100_000, help="total requests (default 100,000)")
    parser.add_argument("--concurrency", type=int, default=8, help="client threads (default 8)")
    parser.add_argument(
        "--sample-every", type=int, default=10_000, help="sample the process every N requests"
    )
    parser.add_argument(
        "--churn-every", type=int, default=200, help="requests per session before it is replaced"
    )
    parser.add_argument("--url", default=None, help="soak a running server instead of starting one")
    parser.add_argument("--json", default=None, help="also write the samples and counts to this file")
    args = parser.parse_args(argv)

    server = LlmTestServer.attach(args.url) if args.url else LlmTestServer.start(access_log=False)
    counters = _Counters()
    samples: list[dict[str, Any]] = []
    try:
        threads = [
            threading.Thread(
                target=_worker, args=(server, args.requests, args.churn_every, counters, seed), daemon=True
            )
            for seed in range(args.concurrency)
        ]
        started = time.monotonic()
        for thread in threads:
            thread.start()
        next_sample = 0
        while any(thread.is_alive() for thread in threads) or next_sample <= counters.done:
            if counters.done >= next_sample:
                stats = server.process_stats()
                samples.append(
                    {"requests": counters.done, "seconds": round(time.monotonic() - started, 1), **stats}
                )
                print(
                    f"{counters.done:>9,} requests  rss {stats['rss_bytes'] / 2**20:7.1f} MiB  "
                    f"greenlets {stats['greenlets']:>5}  sockets {stats['open_sockets']:>5}",
                    flush=True,
                )
                next_sample += args.sample_every
                if next_sample > args.requests and not any(thread.is_alive() for thread in threads):
                    break
            time.sleep(0.2)
        for thread in threads:
            thread.join()
        final = server.process_stats()
        samples.append({"requests": counters.done, "seconds": round(time.monotonic() - started, 1), **final})
    finally:
        if not args.url:
            server.stop()

    base = samples[1] if len(samples) > 2 else samples[0]  # after warm-up (the first interval)
    spans = max(1, (samples[-1]["requests"] - base["requests"]) / 10_000)
    growth = {
        key: (samples[-1][key] - base[key]) / spans for key in ("rss_bytes", "greenlets", "open_sockets")
    }
    print(
        f"\n{counters.done:,} requests in {samples[-1]['seconds']} s; "
        f"outcomes {dict(sorted(counters.by_status.items()))}"
    )
    print(
        f"growth per 10,000 requests after warm-up: rss {growth['rss_bytes'] / 2**10:+.1f} KiB, "
        f"greenlets {growth['greenlets']:+.2f}, sockets {growth['open_sockets']:+.2f}"
    )
    five_xx = sum(count for status, count in counters.by_status.items() if status.startswith("5"))
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {"samples": samples, "outcomes": counters.by_status, "growth_per_10k": growth}, indent=2
            )
        )
    return 1 if five_xx else 0


if __name__ == "__main__":
    raise SystemExit(main())
