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
from llmts.client.session import SessionClient, header_value
from llmts.dashboard import TRACE_FORMAT
from llmts.schema.verify import VerificationRequest, VerificationResult

__all__ = ["TRACE_FORMAT", "collect_trace_export", "usage_or_none"]


def usage_or_none(session: SessionClient) -> dict[str, Any] | None:
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
    description = session.info()
    # The configuration's header says whether it is one: the only call SessionClient has no method for.
    _, config_headers, configuration = session.server.request(
        "GET", "/admin-api/configuration", session_id=session.id
    )
    queues = session.queues()
    conversations = session.conversations()
    requests, counters = session.all_requests()
    usage = usage_or_none(session)
    return {
        "format": TRACE_FORMAT,
        "created_at": datetime.now(timezone.utc).isoformat().replace("+00:00", "Z"),
        "server_url": getattr(session.server, "url", None),
        "test": dict(test) if test is not None else None,
        "session": description,
        "configured": header_value(config_headers, "X-Llm-Test-Server-Configured") == "true",
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
