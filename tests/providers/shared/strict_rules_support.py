"""Shared pieces of the strict rule table unit tests: the signature book the bodies' passed-back reasoning
is checked against, the rule a body breaks (if any), and the blocks and fields several tests build on."""

from __future__ import annotations

from typing import Any

import orjson

from llmts.errors import StrictRequestRejected
from llmts.providers.strict import StrictRule, check_strict
from llmts.runtime.signatures import SignatureBook, signing_key

__all__ = [
    "BOOK",
    "HI",
    "KEYED_SIGNATURE",
    "THINKING_ON",
    "broken_rule",
    "tool_result_block",
    "tool_use_block",
]

HI = {"role": "user", "content": "Hi"}
# The signatures the bodies below pass back, as a configuration scripting them would have issued them.
BOOK = SignatureBook(signing_key(None), {"s": frozenset({"t"}), "x": frozenset({""})})
# A signature BOOK issued for the reasoning text "Think.".
KEYED_SIGNATURE = BOOK.sign("Think.")
# Anthropic's extended thinking switched on.
THINKING_ON = {"type": "enabled", "budget_tokens": 1024}


def broken_rule(table: tuple[StrictRule, ...], body: dict[str, Any]) -> str | None:
    """The name of the rule of ``table`` that ``body`` breaks, or None."""
    try:
        check_strict(table, orjson.dumps(body), body, BOOK)
    except StrictRequestRejected as error:
        return error.rule
    return None


def tool_use_block(tool_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": "f", "input": {}}


def tool_result_block(tool_id: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": "r"}
