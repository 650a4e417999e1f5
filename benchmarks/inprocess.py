"""The WSGI app's own cost per request, without sockets, gevent or gunicorn.

Calls ``LlmtsApp`` directly with a prepared environ (an OpenAI chat request, plain and streamed, answered
by a ``repeat_last_response`` scenario of 20 chunks, as in ``run.py``) and prints microseconds per
request. Use it beside ``run.py``: when ``run.py``'s server CPU per request moves but this number does not,
the cost is in the worker (gevent's handler, deadlines), not in the app. ``--profile`` prints cProfile's
top functions for one mode. See benchmarks/README.md.

    python benchmarks/inprocess.py
    python benchmarks/inprocess.py --requests 50000 --profile stream
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import time
from collections.abc import Callable
from typing import Any

import orjson

from llmts.schema.config import SessionConfig
from llmts.server.app import LlmtsApp

_CHUNKS = [f"word{i} " for i in range(20)]
_CONFIG = {
    "models": ["gpt-4.1-mini"],
    "scenarios": [
        {
            "id": "bench",
            "terminal_policy": "repeat_last_response",
            "responses": [{"text": "".join(_CHUNKS), "chunks": _CHUNKS}],
        }
    ],
}


def chat_environ(body: bytes) -> dict[str, Any]:
    """The WSGI environ of one Chat Completions POST of ``body`` (a fresh input stream each call)."""
    return {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": "/openai/v1/chat/completions",
        "QUERY_STRING": "",
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(len(body)),
        "HTTP_AUTHORIZATION": "Bearer bench",
        "wsgi.input": io.BytesIO(body),
        "wsgi.url_scheme": "http",
        "SERVER_NAME": "bench",
        "SERVER_PORT": "0",
    }


def _environ(stream: bool) -> dict[str, Any]:
    messages = [{"role": "user", "content": "Hello there"}]
    return chat_environ(orjson.dumps({"model": "gpt-4.1-mini", "messages": messages, "stream": stream}))


def _start_response(
    status: str, headers: list[tuple[str, str]], exc_info: Any = None
) -> Callable[[bytes], None]:
    return lambda data: None


def serve(app: LlmtsApp, environ: Callable[[], dict[str, Any]], requests: int) -> None:
    """Answer ``requests`` requests of ``environ()`` through ``app``, draining and closing each body."""
    for _ in range(requests):
        body = app(environ(), _start_response)
        for _chunk in body:
            pass
        close = getattr(body, "close", None)
        if close is not None:
            close()


def _run(app: LlmtsApp, stream: bool, requests: int) -> None:
    serve(app, lambda: _environ(stream), requests)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=20_000, help="requests per mode (default 20,000)")
    parser.add_argument("--profile", choices=("nonstream", "stream"), help="cProfile one mode")
    args = parser.parse_args()
    app = LlmtsApp()
    app.registry.default.configure(SessionConfig.model_validate(_CONFIG))
    for stream in (False, True):
        _run(app, stream, 2_000)  # warm-up
        started = time.perf_counter()
        _run(app, stream, args.requests)
        elapsed = time.perf_counter() - started
        print(f"{'stream' if stream else 'nonstream':>10} {elapsed / args.requests * 1e6:8.1f} us/request")
    if args.profile:
        profile = cProfile.Profile()
        profile.enable()
        _run(app, args.profile == "stream", args.requests)
        profile.disable()
        pstats.Stats(profile).sort_stats("cumulative").print_stats(30)


if __name__ == "__main__":
    main()
