"""What a test's trace file shows (docs/dashboard.md, "Trace files"): one session read whole through the
public control API, as the dashboard would read it, into one JSON-ready dict of format ``llmts-trace/1``.
``llmts.dashboard.trace.write_trace`` turns it into the file.

Bounded by the journal's own retention (``journal.max_entries``, at most 10,000 entries, and
``journal.max_bytes``; each entry's previews by ``journal.preview_bytes``: docs/journal.md): the export
holds what the journal retains, never more, and says how much was evicted.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from llmts.client.control import ServerError
from llmts.client.session import SessionClient
from llmts.schema.verify import VerificationRequest, VerificationResult

__all__ = ["TRACE_FORMAT", "collect_trace_export"]

TRACE_FORMAT = "llmts-trace/1"
_PAGE = 500  # GET /admin-api/requests's largest page


def _header(headers: Mapping[str, str], name: str) -> str | None:
    """A response header by name, whatever its case."""
    wanted = name.lower()
    return next((value for key, value in headers.items() if key.lower() == wanted), None)


def _number(headers: Mapping[str, str], name: str) -> int | None:
    value = _header(headers, name)
    return int(value) if value is not None and value.isdigit() else None


def _journal(session: SessionClient) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Every retained journal entry, oldest first, paged with the ``after`` cursor, and the journal's
    counters. Entries that arrive while it pages are left out: it stops at what was observed when it
    began, so a test still making requests cannot keep it going."""
    entries: list[dict[str, Any]] = []
    counters: dict[str, Any] = {}
    cursor = 0
    observed: int | None = None
    while True:
        path = f"/admin-api/requests?order=asc&limit={_PAGE}" + (f"&after={cursor}" if cursor else "")
        _, headers, page = session.server.request("GET", path, session_id=session.id)
        if observed is None:
            observed = _number(headers, "X-Total-Observed")
            counters = {
                "total_observed": observed,
                "evicted_count": _number(headers, "X-Evicted-Count"),
                "retained_byte_count": _number(headers, "X-Retained-Byte-Count"),
                "retention_truncated": _header(headers, "X-Retention-Truncated") == "true",
            }
        fresh = [entry for entry in page if observed is None or entry["sequence"] <= observed]
        entries.extend(fresh)
        if len(page) < _PAGE or len(fresh) < len(page):
            return entries, counters
        cursor = page[-1]["sequence"]


def _usage(session: SessionClient) -> dict[str, Any] | None:
    """``GET /admin-api/usage``, or None from a server older than the route (the page then sums the
    entries' usage itself)."""
    try:
        return session.usage()
    except ServerError as error:
        if error.status == 404:
            return None
        raise


def _as_dict(value: VerificationResult | VerificationRequest | Mapping[str, Any] | None) -> Any:
    if value is None:
        return None
    if isinstance(value, VerificationRequest):
        return value.model_dump(mode="json", by_alias=True, exclude_unset=True)
    if isinstance(value, VerificationResult):
        return value.model_dump(mode="json")
    return dict(value)


def collect_trace_export(
    session: SessionClient,
    *,
    test: Mapping[str, Any] | None = None,
    verification: VerificationResult | Mapping[str, Any] | None = None,
    expectation: VerificationRequest | Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One session, read through the control API, as a trace file's data.

    ``session``'s server is read only through its control channel (``session.server.request``). ``test``
    describes the test as the caller knows it (the plugin: ``nodeid``, ``outcome``, ``duration_seconds``,
    ``when`` the pytest phase, ``longrepr`` the failure text); ``verification`` is the verdict of the
    test's own expectations and ``expectation`` the ``POST /admin-api/verify`` body that produced it. The
    result holds only JSON values; raises ``ServerError``/``OSError`` as the control calls do."""
    _, _, description = session.server.request("GET", f"/admin-api/sessions/{session.id}")
    _, config_headers, configuration = session.server.request(
        "GET", "/admin-api/configuration", session_id=session.id
    )
    _, _, queues = session.server.request("GET", "/admin-api/queues", session_id=session.id)
    _, _, conversations = session.server.request("GET", "/admin-api/conversations", session_id=session.id)
    requests, counters = _journal(session)
    usage = _usage(session)
    return {
        "format": TRACE_FORMAT,
        "created_at": datetime.now(timezone.utc).isoformat().replace("+00:00", "Z"),
        "server_url": getattr(session.server, "url", None),
        "test": dict(test) if test is not None else None,
        "session": description,
        "configured": _header(config_headers, "X-Llm-Test-Server-Configured") == "true",
        "configuration": configuration or {},
        "queues": queues or [],
        "conversations": conversations or [],
        "requests": requests,
        **counters,
        # Tokens and cost since the last configure or reset, evicted entries included (GET /admin-api/usage).
        "usage": usage,
        "verification": _as_dict(verification),
        "expectation": _as_dict(expectation),
    }
