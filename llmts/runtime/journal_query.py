"""Filter, order and page one journal snapshot (``GET /admin-api/requests`` and export)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from llmts.runtime.journal import Journal, JournalRecord, JournalSnapshot
from llmts.schema.journal import JournalEntry, JournalQuery

__all__ = [
    "QueryResult",
    "UnmetFilter",
    "matches",
    "query_journal",
    "record_matches",
    "run_query",
    "unmet_filters",
]

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
    "forwarded",
    "mcp_server",
    "realtime_connection",
    "a2a_agent",
    "tool_name",
)


@dataclass(frozen=True, slots=True)
class QueryResult:
    entries: list[JournalEntry]
    total_matched: int
    snapshot: JournalSnapshot


def _started(entry: JournalEntry) -> datetime:
    return datetime.fromisoformat(entry.started_at.replace("Z", "+00:00"))


def _tool_count_ok(query: JournalQuery, count: int) -> bool:
    """``has_tool_results``: whether the attempt sent tool results (``count``), as the query asks."""
    return query.has_tool_results is None or (count > 0) == query.has_tool_results


def _tool_content_ok(query: JournalQuery, contents: Iterable[str]) -> bool:
    """``tool_result_contains``: one of the attempt's tool results' ``contents`` holds the text."""
    needle = query.tool_result_contains
    return needle is None or any(needle in content for content in contents)


def _field_ok(name: str, wanted: Any, value: Any, family: str | None) -> bool:
    """An exact filter; ``operation`` also takes the operation a request asks an answer of (``chat``
    matches ``chat.completions``, ``messages``, ``generate_content``...; docs/journal.md)."""
    return value == wanted or (name == "operation" and family == wanted)


def matches(entry: JournalEntry, query: JournalQuery) -> bool:
    for name in _EXACT_FIELDS:
        wanted = getattr(query, name)
        if wanted is not None and not _field_ok(name, wanted, getattr(entry, name), entry.operation_family):
            return False
    results = entry.tool_results
    if not _tool_count_ok(query, len(results)) or not _tool_content_ok(query, (r.content for r in results)):
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


def record_matches(record: JournalRecord, query: JournalQuery) -> bool:
    """``matches`` on the live record, before it becomes a ``JournalEntry`` (same answer: the filtered
    fields are the record's own, ``success`` is unset while in progress, times are the same instant)."""
    for name in _EXACT_FIELDS:
        wanted = getattr(query, name)
        if wanted is None:
            continue
        value = getattr(record, name) if name != "success" or record.completed else None
        if not _field_ok(name, wanted, value, record.operation_family):
            return False
    results = record.tool_results  # a live record's tool result is (call id, name, content, cut)
    if not _tool_count_ok(query, len(results)) or not _tool_content_ok(query, (r[2] for r in results)):
        return False
    if query.after is not None and record.sequence <= query.after:
        return False
    if query.from_ is None and query.to is None:
        return True
    started = datetime.fromtimestamp(record.started_epoch, timezone.utc)
    if query.from_ is not None and started < query.from_:
        return False
    return not (query.to is not None and started > query.to)


@dataclass(frozen=True, slots=True)
class UnmetFilter:
    """One filter of a query an entry fails: its name (``from`` for ``from_``), the wanted value and the
    entry's own (``has_tool_results``: how many it sent; ``tool_result_contains``: its tool results)."""

    name: str
    wanted: Any
    actual: Any


def unmet_filters(entry: JournalEntry, query: JournalQuery) -> list[UnmetFilter]:
    """Every filter of ``query`` that ``entry`` fails, in the query's field order (empty: it matches, paging
    aside). Slower than ``matches``, which stops at the first: for reports on what came closest."""
    family = entry.operation_family
    unmet = [
        UnmetFilter(name, getattr(query, name), getattr(entry, name))
        for name in _EXACT_FIELDS
        if getattr(query, name) is not None
        and not _field_ok(name, getattr(query, name), getattr(entry, name), family)
    ]
    results = entry.tool_results
    if not _tool_count_ok(query, len(results)):
        unmet.append(UnmetFilter("has_tool_results", query.has_tool_results, len(results)))
    if not _tool_content_ok(query, (result.content for result in results)):
        unmet.append(UnmetFilter("tool_result_contains", query.tool_result_contains, list(results)))
    if query.after is not None and entry.sequence <= query.after:
        unmet.append(UnmetFilter("after", query.after, entry.sequence))
    if query.from_ is not None and _started(entry) < query.from_:
        unmet.append(UnmetFilter("from", query.from_.isoformat(), entry.started_at))
    if query.to is not None and _started(entry) > query.to:
        unmet.append(UnmetFilter("to", query.to.isoformat(), entry.started_at))
    return unmet


def query_journal(journal: Journal, query: JournalQuery) -> QueryResult:
    """Filter, order and page the journal's records, and turn only the page into entries: a page of a
    journal at its retention limit costs its own size, not the journal's (``GET /admin-api/requests``)."""
    matched = 0

    def pick(records: Sequence[JournalRecord]) -> list[JournalRecord]:
        nonlocal matched
        selected = [record for record in records if record_matches(record, query)]
        matched = len(selected)
        if query.order == "desc":
            selected.reverse()
        return selected[query.offset : query.offset + query.limit]

    snapshot = journal.snapshot(query.after or 0, pick)
    return QueryResult(entries=list(snapshot.entries), total_matched=matched, snapshot=snapshot)
