"""Journal memory: real RSS growth per journal entry beside the bytes the journal accounts for it.

Starts ``llmts serve`` (one gevent worker, no access log), creates N sessions, sends each M small chat
requests (a ~70-byte request, a ~740-byte answer) and compares the worker's RSS growth per entry with
the journal's accounted bytes per entry. See benchmarks/README.md ("Journal memory").

    python benchmarks/journal_memory.py                   # 200 sessions x 100 requests
    python benchmarks/journal_memory.py --sessions 50 --requests 200 --json /tmp/journal_memory.json
"""

from __future__ import annotations

import argparse
import http.client
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

_ROOT = Path(__file__).resolve().parent.parent
# 69 bytes: the "70-byte request".
_REQUEST = b'{"model":"gpt-4.1-mini","messages":[{"role":"user","content":"hi"}]}'
# Sized so the Chat Completions answer is ~740 bytes.
_ANSWER = "The quick brown fox jumps over the lazy dog. " * 3 + "Done."


def _start(extra: list[str]) -> tuple[subprocess.Popen[bytes], str]:
    ready = Path(tempfile.mkdtemp(prefix="llmts-mem-")) / "ready"
    env = {**os.environ, "PYTHONPATH": str(_ROOT)}
    command = [sys.executable, "-m", "llmts", "serve", "--port", "0", "--no-access-log"]
    command += ["--ready-file", str(ready), *extra]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 30
    while not ready.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("llmts did not start")
        time.sleep(0.05)
    return proc, ready.read_text().removeprefix("http://")


def _call(
    conn: http.client.HTTPConnection, method: str, path: str, body: bytes | None = None
) -> tuple[int, dict[str, str], Any]:
    headers = {"Content-Type": "application/json"} if body is not None else {}
    conn.request(method, path, body=body, headers=headers)
    response = conn.getresponse()
    data = response.read()
    parsed = orjson.loads(data) if data else None
    return response.status, {k.lower(): v for k, v in response.getheaders()}, parsed


def _process(conn: http.client.HTTPConnection) -> dict[str, Any]:
    status, _, payload = _call(conn, "GET", "/admin-api/process")
    assert status == 200, payload
    return dict(payload)


def _accounted(conn: http.client.HTTPConnection, sessions: list[str]) -> int:
    total = 0
    for session in sessions:
        _, headers, _ = _call(conn, "GET", f"/sessions/{session}/admin-api/requests?limit=1")
        total += int(headers["x-retained-byte-count"])
    return total


def run(sessions: int, requests: int, extra: list[str]) -> dict[str, Any]:
    proc, host = _start(extra)
    try:
        conn = http.client.HTTPConnection(host, timeout=30)
        config = orjson.dumps(
            {
                "models": ["gpt-4.1-mini"],
                "journal": {"max_entries": max(requests, 1)},
                "scenarios": [
                    {
                        "id": "answer",
                        "terminal_policy": "repeat_last_response",
                        "responses": [{"text": _ANSWER}],
                    }
                ],
            }
        )
        ids = []
        for _ in range(sessions):
            _, _, created = _call(conn, "POST", "/admin-api/sessions")
            ids.append(created["id"])
            status, _, payload = _call(conn, "POST", f"/sessions/{created['id']}/admin-api/configure", config)
            assert status == 200, payload
        answer_bytes = 0
        # Warm-up: one request per session, then reset, so lazily built per-session state is not counted.
        for session in ids:
            status, _, payload = _call(
                conn, "POST", f"/sessions/{session}/openai/v1/chat/completions", _REQUEST
            )
            assert status == 200, payload
            answer_bytes = len(orjson.dumps(payload))
            _call(conn, "POST", f"/sessions/{session}/admin-api/reset", b"")
        before = _process(conn)
        started = time.perf_counter()
        for session in ids:
            path = f"/sessions/{session}/openai/v1/chat/completions"
            for _ in range(requests):
                status, _, payload = _call(conn, "POST", path, _REQUEST)
                assert status == 200, payload
        elapsed = time.perf_counter() - started
        after = _process(conn)
        entries = sessions * requests
        accounted = _accounted(conn, ids)
        growth = after["rss_bytes"] - before["rss_bytes"]
        return {
            "sessions": sessions,
            "requests_per_session": requests,
            "entries": entries,
            "request_bytes": len(_REQUEST),
            "answer_bytes": answer_bytes,
            "rss_before": before["rss_bytes"],
            "rss_after": after["rss_bytes"],
            "rss_growth_per_entry": round(growth / entries),
            "accounted_per_entry": round(accounted / entries),
            "real_over_accounted": round(growth / accounted, 2) if accounted else None,
            "requests_per_second": round(entries / elapsed),
            "process_after": after,
        }
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--requests", type=int, default=100, help="chat requests per session")
    parser.add_argument("--server-arg", action="append", default=[], help="extra `llmts serve` argument")
    parser.add_argument("--json", default=None, help="also write the result as JSON to this path")
    args = parser.parse_args()
    result = run(args.sessions, args.requests, args.server_arg)
    shown = {k: v for k, v in result.items() if k != "process_after"}
    for key, value in shown.items():
        print(f"{key:>24}: {value}")
    if args.json:
        Path(args.json).write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2))
    ratio = result["real_over_accounted"]
    return 0 if ratio is not None and ratio <= 1.5 else 1


if __name__ == "__main__":
    raise SystemExit(main())
