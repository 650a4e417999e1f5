"""An ``items`` fixture -> ``ScriptedOutput(kind="items")``, once, at configure time.

The output's ``text`` is its messages' text (what a ``previous_response_id`` history restores and what
conversation replay retains); output tokens count that text plus code, queries and web actions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llmts.runtime.native.numbers import exact_number, exact_scalar
from llmts.runtime.tokens import estimate_text_tokens
from llmts.schema.items import CodeInterpreterItem, FileSearchItem, MessageItem, WebSearchItem
from llmts.schema.native import ExactResult, NativeFamily, NativeOutput
from llmts.schema.neutral import ScriptedOutput

__all__ = ["compile_items", "item_family"]

_FAMILY: dict[type[Any], NativeFamily] = {
    WebSearchItem: "web_search",
    FileSearchItem: "file_search",
    CodeInterpreterItem: "code_interpreter",
}


def item_family(item: Any) -> NativeFamily:
    """The native tool family of a (non-message) output item."""
    return _FAMILY[type(item)]


def _exact_results(item: FileSearchItem) -> tuple[ExactResult, ...]:
    return tuple(
        ExactResult(
            score=exact_number(result.score) if result.score is not None else None,
            attributes={key: exact_scalar(value) for key, value in result.attributes.items()}
            if result.attributes is not None
            else None,
        )
        for result in item.results
    )


def _item_tokens(item: Any) -> int:
    if isinstance(item, MessageItem):
        return estimate_text_tokens(item.content)
    if isinstance(item, FileSearchItem):
        return sum(estimate_text_tokens(query) for query in item.queries)
    if isinstance(item, CodeInterpreterItem):
        return estimate_text_tokens(item.code or "")
    assert isinstance(item, WebSearchItem)
    return estimate_text_tokens(item.query or item.url or "") + estimate_text_tokens(item.pattern or "")


def compile_items(items: Sequence[Any]) -> ScriptedOutput:
    native = NativeOutput(
        items=tuple(items),
        exact_results=tuple(
            _exact_results(item) if isinstance(item, FileSearchItem) else None for item in items
        ),
        calls=tuple(item_family(item) for item in items if not isinstance(item, MessageItem)),
    )
    text = "".join(item.content for item in items if isinstance(item, MessageItem))
    return ScriptedOutput(
        kind="items", text=text, output_tokens=sum(_item_tokens(item) for item in items), native=native
    )
