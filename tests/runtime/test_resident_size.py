"""The accounted sizes of parsed state (llmts/runtime/resident_size.py): at or above what Python holds,
and not far above it."""

from __future__ import annotations

import json
import sys

import orjson
import pytest

from llmts.runtime.resident_size import configuration_size, json_size
from llmts.schema.config import SessionConfig
from tests.helpers import parsed_size


@pytest.mark.parametrize(
    "items",
    [
        [{"role": "user", "content": [{"type": "input_text", "text": f"hi {n}"}]} for n in range(5000)],
        [{"role": "user", "content": "x" * 1000 + str(n)} for n in range(500)],
        [[n, n / 3, None, True, {"k": [n]}] for n in range(3000)],
        "one long string " * 20000,
        # One emoji makes CPython keep the whole string at 4 bytes per character; CJK at 2.
        "\N{GRINNING FACE}" + "a" * 100_000,
        "\N{CJK UNIFIED IDEOGRAPH-4E2D}" * 50_000,
        [{"k": "\u00e9t\u00e9", "n": n} for n in range(3000)],
        list(range(257, 100_257)),
        {f"k{n}": 257 + n for n in range(20_000)},
    ],
    ids=[
        "small-items",
        "long-texts",
        "scalars",
        "one-string",
        "emoji-in-ascii",
        "cjk",
        "latin-1-items",
        "numbers",
        "number-members",
    ],
)
@pytest.mark.parametrize("encoder", ["orjson", "json.dumps (escapes)"])
def test_json_size_is_at_least_what_the_parsed_value_holds_and_under_twice_that(
    items: object, encoder: str
) -> None:
    raw = orjson.dumps(items) if encoder == "orjson" else json.dumps(items).encode()
    held, value = parsed_size(raw)
    assert value == items
    assert held <= json_size(raw) <= 2 * held, (held, json_size(raw), len(raw))


def test_a_configuration_text_counts_at_the_width_cpython_keeps_it() -> None:
    """One emoji makes a 100,000-character text 4 bytes a character resident (400 KB, not 100 KB)."""
    wide = "\N{GRINNING FACE}" + "a" * 100_000
    plain = "b" + "a" * 100_000

    def size(text: str) -> int:
        return configuration_size(
            SessionConfig.model_validate({"scenarios": [{"responses": [{"text": text}]}]})
        )

    assert sys.getsizeof(wide) > 4 * len(plain)
    assert size(wide) - size(plain) >= 3 * sys.getsizeof(plain)
