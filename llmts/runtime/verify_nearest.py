"""What came closest when a request expectation failed, for the failure's ``actual`` (docs/journal.md,
"What came closest").

Built only for failures, never for a passing verdict. Bounded: at most ``NEAREST_REQUESTS`` requests and
``SENT_ITEMS`` tool items per failure, every text cut to ``SHOWN_CHARS`` characters.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llmts.runtime.journal_capture import snippet
from llmts.runtime.journal_query import UnmetFilter, unmet_filters
from llmts.schema.journal import JournalEntry, JournalQuery, RecordedToolResult

__all__ = [
    "NEAREST_REQUESTS",
    "SENT_ITEMS",
    "SHOWN_CHARS",
    "ToolItem",
    "describe_nearest",
    "nearest_requests",
    "sent_items",
    "shorten",
]

NEAREST_REQUESTS = 3
SENT_ITEMS = 5
SHOWN_CHARS = 200

# (call id, name, JSON text) of a tool call or result.
ToolItem = tuple[str, "str | None", str]


def shorten(text: str, limit: int = SHOWN_CHARS) -> str:
    return snippet(text, limit) or ""


def _shown(value: Any) -> Any:
    return shorten(value) if isinstance(value, str) else value


def _results(results: Sequence[RecordedToolResult]) -> list[dict[str, Any]]:
    return [
        {"call_id": result.call_id, "name": result.name, "content": shorten(result.content)}
        for result in results[:SENT_ITEMS]
    ]


def _unmet(unmet: UnmetFilter) -> dict[str, Any]:
    actual = _results(unmet.actual) if unmet.name == "tool_result_contains" else _shown(unmet.actual)
    return {"filter": unmet.name, "wanted": _shown(unmet.wanted), "actual": actual}


def nearest_requests(scope: Sequence[JournalEntry], query: JournalQuery) -> list[dict[str, Any]]:
    """The requests of ``scope`` that fail the fewest of ``query``'s filters (ties in journal order), each
    with the filters it fails and what it had instead."""
    scored = [(unmet, entry) for entry in scope if (unmet := unmet_filters(entry, query))]
    scored.sort(key=lambda pair: len(pair[0]))  # stable: journal order among equals
    return [
        {
            "sequence": entry.sequence,
            "request_id": entry.request_id,
            "provider": entry.provider,
            "operation": entry.operation,
            "model": entry.model,
            "status": entry.status,
            "unmet": [_unmet(one) for one in unmet],
        }
        for unmet, entry in scored[:NEAREST_REQUESTS]
    ]


def describe_nearest(nearest: Sequence[dict[str, Any]]) -> str:
    """The message's short account of the closest request: ``#2 (openai chat, gpt-4o) fails model``."""
    if not nearest:
        return "no request in scope"
    first = nearest[0]
    failed = ", ".join(unmet["filter"] for unmet in first["unmet"])
    where = f"{first['provider']} {first['operation']}, {first['model']}"
    return f"nearest is #{first['sequence']} ({where}), which fails {failed}"


def sent_items(kind: str, judged: Sequence[tuple[ToolItem, list[str]]]) -> dict[str, Any]:
    """A request's tool items of ``kind`` with the predicates each fails, closest first (ties in order)."""
    ordered = sorted(judged, key=lambda pair: len(pair[1]))
    text_key = "content" if kind == "result" else "arguments"
    return {
        "kind": kind,
        "sent_count": len(judged),
        "sent": [
            {"call_id": call_id, "name": name, text_key: shorten(text), "mismatched": mismatched}
            for (call_id, name, text), mismatched in ordered[:SENT_ITEMS]
        ],
    }
