"""The benchmark "floor": a bare werkzeug app that answers chat completions with fixed content.

Run on gunicorn with one gevent worker (``benchmarks/run.py`` starts it)::

    python -m gunicorn --no-control-socket -k gevent -w 1 -b 127.0.0.1:8001 \
        --chdir benchmarks floor_app:app

It does what a minimal real app would do per request: build werkzeug ``Request``/``Response`` objects,
parse the JSON body with orjson, serialize the answer with orjson and, for ``"stream": true``, yield
each SSE frame separately (role chunk, one chunk per content piece, finish chunk, usage chunk,
``data: [DONE]``) -- the same frame sequence llmts sends. ``LLMTS_BENCH_CHUNKS`` sets the number of
content pieces (default 20); :func:`make_chunks` is shared with ``run.py`` so both servers answer with
the same text.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import orjson
from werkzeug.wrappers import Request, Response

__all__ = ["app", "make_chunks"]


def make_chunks(count: int) -> list[str]:
    """The content pieces both servers stream; they concatenate to the full answer text."""
    return [f"word{i} " if i < count - 1 else f"word{i}." for i in range(count)]


CHUNKS = make_chunks(int(os.environ.get("LLMTS_BENCH_CHUNKS", "20")))
TEXT = "".join(CHUNKS)
COMPLETION_ID = "chatcmpl-0123456789abcdef01234567"
CREATED = 1_700_000_000
USAGE = {
    "prompt_tokens": 9,
    "completion_tokens": len(CHUNKS),
    "total_tokens": 9 + len(CHUNKS),
    "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
    "completion_tokens_details": {
        "reasoning_tokens": 0,
        "audio_tokens": 0,
        "accepted_prediction_tokens": 0,
        "rejected_prediction_tokens": 0,
    },
}


def _completion(model: str) -> dict[str, Any]:
    return {
        "id": COMPLETION_ID,
        "object": "chat.completion",
        "created": CREATED,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": TEXT, "refusal": None, "annotations": []},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": USAGE,
        "service_tier": "default",
        "system_fingerprint": None,
    }


def _frame(payload: dict[str, Any]) -> bytes:
    return b"data: " + orjson.dumps(payload) + b"\n\n"


def _chunk(model: str, choices: list[dict[str, Any]], usage: dict[str, Any] | None = None) -> bytes:
    return _frame(
        {
            "id": COMPLETION_ID,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": model,
            "service_tier": "default",
            "system_fingerprint": None,
            "choices": choices,
            "usage": usage,
        }
    )


def _stream(model: str, include_usage: bool) -> Iterator[bytes]:
    yield _chunk(
        model,
        [
            {
                "index": 0,
                "delta": {"role": "assistant", "content": "", "refusal": None},
                "logprobs": None,
                "finish_reason": None,
            }
        ],
    )
    for piece in CHUNKS:
        yield _chunk(
            model, [{"index": 0, "delta": {"content": piece}, "logprobs": None, "finish_reason": None}]
        )
    yield _chunk(model, [{"index": 0, "delta": {}, "logprobs": None, "finish_reason": "stop"}])
    if include_usage:
        yield _chunk(model, [], USAGE)
    yield b"data: [DONE]\n\n"


def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    request = Request(environ)
    try:
        body = orjson.loads(request.get_data())
    except orjson.JSONDecodeError:
        body = None
    if not isinstance(body, dict):
        response = Response(b'{"error":{"message":"invalid JSON body"}}', 400, mimetype="application/json")
        return response(environ, start_response)
    model = str(body.get("model", "gpt-4.1-mini"))
    if body.get("stream") is True:
        options = body.get("stream_options")
        include_usage = isinstance(options, dict) and options.get("include_usage") is True
        response = Response(_stream(model, include_usage), 200, mimetype="text/event-stream")
        response.headers["Cache-Control"] = "no-cache"
    else:
        response = Response(orjson.dumps(_completion(model)), 200, mimetype="application/json")
    return response(environ, start_response)
