"""Control routes over the request journal: ``GET /admin-api/requests`` and ``/requests/export``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar
from urllib.parse import parse_qs

import orjson
from pydantic import BaseModel, ValidationError

from llmts.errors import InvalidRequest
from llmts.runtime import Session
from llmts.runtime.journal_query import QueryResult, query_journal
from llmts.runtime.resilience import journal_resilience
from llmts.schema.journal import JournalQuery
from llmts.schema.validation import format_location

__all__ = [
    "EXPORT_SCHEMA_VERSION",
    "export_payload",
    "parse_query",
    "query_headers",
    "query_session",
    "requests_listing",
    "resilience_listing",
]

EXPORT_SCHEMA_VERSION = 1
_Query = TypeVar("_Query", bound=BaseModel)
_BOOLEAN = {"true": True, "false": False}
_BOOLEAN_FIELDS = frozenset({"streaming", "completed", "success", "forwarded", "has_tool_results"})


def _invalid(message: str, details: list[dict[str, Any]]) -> InvalidRequest:
    return InvalidRequest(message, code="invalid_query", details=details)


def parse_query(
    query_string: str, extra: frozenset[str] = frozenset()
) -> tuple[JournalQuery, dict[str, str]]:
    """The journal's filters (``GET /admin-api/requests`` and its export), strictly (``strict_query``)."""
    return strict_query(query_string, JournalQuery, extra, booleans=_BOOLEAN_FIELDS, what="request")


def strict_query(
    query_string: str,
    model: type[_Query],
    extra: frozenset[str] = frozenset(),
    *,
    booleans: frozenset[str] = frozenset(),
    what: str,
) -> tuple[_Query, dict[str, str]]:
    """Strictly parse a control route's query string into ``model`` (its field aliases as names):
    duplicate, blank, unknown or malformed parameters are 400 ``invalid_query``. ``extra`` names
    parameters the route reads itself (returned apart), ``booleans`` the ``true``/``false`` fields."""
    raw = parse_qs(query_string, keep_blank_values=True)
    known = {field.alias or name for name, field in model.model_fields.items()} | extra
    details = []
    values: dict[str, Any] = {}
    extras: dict[str, str] = {}
    for name, supplied in raw.items():
        if name not in known:
            details.append({"path": name, "message": "unknown query parameter"})
        elif len(supplied) != 1:
            details.append({"path": name, "message": "supplied more than once"})
        elif not supplied[0].strip():
            details.append({"path": name, "message": "blank value"})
        elif name in extra:
            extras[name] = supplied[0]
        elif name in booleans:
            if supplied[0] not in _BOOLEAN:
                details.append({"path": name, "message": "expected true or false"})
            else:
                values[name] = _BOOLEAN[supplied[0]]
        else:
            values[name] = supplied[0]
    if details:
        raise _invalid(f"invalid {what} query", details)
    try:
        return model.model_validate(values), extras
    except ValidationError as exc:
        raise _invalid(
            f"invalid {what} query",
            [
                {"path": format_location(tuple(e["loc"])) or "query", "message": e["msg"]}
                for e in exc.errors()
            ],
        ) from None


def query_session(session: Session, query: JournalQuery) -> QueryResult:
    return query_journal(session.journal, query)


def query_headers(result: QueryResult) -> list[tuple[str, str]]:
    snapshot = result.snapshot
    return [
        ("X-Total-Count", str(result.total_matched)),
        ("X-Total-Observed", str(snapshot.total_observed)),
        ("X-Evicted-Count", str(snapshot.evicted)),
        ("X-Retained-Byte-Count", str(snapshot.retained_bytes)),
        ("X-Retention-Truncated", "true" if snapshot.truncated else "false"),
    ]


def _evidence(result: QueryResult) -> dict[str, Any]:
    snapshot = result.snapshot
    return {
        "total_matched": result.total_matched,
        "total_observed": snapshot.total_observed,
        "evicted_count": snapshot.evicted,
        "retained_byte_count": snapshot.retained_bytes,
        "retention_truncated": snapshot.truncated,
        "first_retained_sequence": snapshot.first_sequence,
        "last_retained_sequence": snapshot.last_sequence,
        "returned": len(result.entries),
    }


def export_payload(result: QueryResult, query: JournalQuery, fmt: str) -> tuple[str, bytes]:
    """(content type, body) of an export in ``json`` or ``ndjson``."""
    requests = [entry.public() for entry in result.entries]
    if fmt == "json":
        body = {
            "schema_version": EXPORT_SCHEMA_VERSION,
            "query": query.echo(),
            "evidence": _evidence(result),
            "requests": requests,
        }
        return "application/json", orjson.dumps(body)
    lines = [
        orjson.dumps(
            {
                "type": "metadata",
                "schema_version": EXPORT_SCHEMA_VERSION,
                "query": query.echo(),
                "evidence": _evidence(result),
            }
        )
    ]
    lines.extend(orjson.dumps({"type": "request", **request}) for request in requests)
    return "application/x-ndjson", b"\n".join(lines) + b"\n"


def requests_listing(
    session: Session, environ: Mapping[str, Any]
) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    query, _ = parse_query(str(environ.get("QUERY_STRING", "")))
    result = query_session(session, query)
    return [entry.public() for entry in result.entries], query_headers(result)


# Paging would hide attempts of a group: the verdict always sees every retained entry the filters match.
_PAGING = frozenset({"offset", "limit", "order", "after"})


def resilience_listing(session: Session, environ: Mapping[str, Any]) -> dict[str, Any]:
    """``GET /admin-api/resilience``: the verdict of each retry group among the entries the journal
    filters match (docs/journal.md, "Resilience")."""
    query, _ = parse_query(str(environ.get("QUERY_STRING", "")))
    paged = sorted(_PAGING & query.model_fields_set)
    if paged:
        raise _invalid(
            "the resilience verdict takes journal filters but no paging",
            [{"path": name, "message": "not accepted here"} for name in paged],
        )
    report = journal_resilience(session.journal, query)
    return {"session_id": session.id, **report.model_dump(mode="json")}
