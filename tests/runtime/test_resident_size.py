"""The accounted sizes of parsed state (llmts/runtime/resident_size.py): at or above what Python holds,
and not far above it."""

from __future__ import annotations

import tracemalloc

import orjson
import pytest

from llmts.runtime.resident_size import json_size


def _parsed_bytes(raw: bytes) -> tuple[int, object]:
    tracemalloc.start()
    try:
        value = orjson.loads(raw)
        return tracemalloc.get_traced_memory()[0], value
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(
    "items",
    [
        [{"role": "user", "content": [{"type": "input_text", "text": f"hi {n}"}]} for n in range(5000)],
        [{"role": "user", "content": "x" * 1000 + str(n)} for n in range(500)],
        [[n, n / 3, None, True, {"k": [n]}] for n in range(3000)],
        "one long string " * 20000,
    ],
    ids=["small-items", "long-texts", "scalars", "one-string"],
)
def test_json_size_is_at_least_what_the_parsed_value_holds_and_under_twice_that(items: object) -> None:
    raw = orjson.dumps(items)
    held, value = _parsed_bytes(raw)
    assert value == items
    assert held <= json_size(raw) <= 2 * held, (held, json_size(raw), len(raw))
