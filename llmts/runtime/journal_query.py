"""Filter, order and page one journal snapshot (``GET /admin-api/requests`` and export)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from llmts.runtime.journal import JournalSnapshot
from llmts.schema.journal import JournalEntry, JournalQuery

__all__ = ["QueryResult", "run_query"]

_EXACT_FIELDS = (
    "provider",
    "model",
    "request_id",
    "status",
    "operation",
    "scenario",
    "conversation",
    "step",
    "streaming",
    "completed",
    "success",
    "error_code",
    "retry_group",
)


@dataclass(frozen=True, slots=True)
class QueryResult:
    entries: list[JournalEntry]
    total_matched: int
    snapshot: JournalSnapshot


def _started(entry: JournalEntry) -> datetime:
    return datetime.fromisoformat(entry.started_at.replace("Z", "+00:00"))


def matches(entry: JournalEntry, query: JournalQuery) -> bool:
    for name in _EXACT_FIELDS:
        wanted = getattr(query, name)
        if wanted is not None and getattr(entry, name) != wanted:
            return False
    if query.after is not None and entry.sequence <= query.after:
        return False
    if query.from_ is not None and _started(entry) < query.from_:
        return False
    return not (query.to is not None and _started(entry) > query.to)


def run_query(snapshot: JournalSnapshot, query: JournalQuery) -> QueryResult:
    selected = [entry for entry in snapshot.entries if matches(entry, query)]
    if query.order == "desc":
        selected.reverse()
    page = selected[query.offset : query.offset + query.limit]
    return QueryResult(entries=page, total_matched=len(selected), snapshot=snapshot)
