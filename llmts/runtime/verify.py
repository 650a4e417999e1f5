"""Evaluate a ``VerificationRequest`` against one journal snapshot (and the conversation status).

Pure: reads the snapshot it is given, changes nothing. Conservative: evidence that may be missing
(evicted or truncated entries, requests still in progress, a page that leaves matches out, unusable
timing) is itself a failure, so a verification never passes on a partial picture.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import orjson

from llmts.runtime.conversations.predicates import json_equal, resolve_path
from llmts.runtime.journal import JournalSnapshot
from llmts.runtime.journal_query import matches
from llmts.runtime.pricing import shown_usd
from llmts.runtime.resilience import check_expectation, resilience_report
from llmts.runtime.retry_timing import retry_gap, waited_as_told
from llmts.runtime.verify_nearest import ToolItem, describe_nearest, nearest_requests, sent_items
from llmts.schema.conversations import ConversationStatus
from llmts.schema.journal import JournalEntry, JournalQuery
from llmts.schema.json_path import parse_json_path
from llmts.schema.resilience import ResilienceExpectation
from llmts.schema.verify import (
    ConversationExpectation,
    JsonFieldExpectation,
    RequestExpectation,
    RetryExpectation,
    ToolExpectation,
    VerificationFailure,
    VerificationRequest,
    VerificationResult,
)

__all__ = ["MAX_FAILURES", "verify"]

# A verdict lists at most this many failures (the last one says how many more there were).
MAX_FAILURES = 512
# Statuses whose Retry-After the retry checks examine.
_RETRY_STATUSES = frozenset({429, 503})
# ``resolve_path``'s marker for "no such field".
_ABSENT = resolve_path(None, parse_json_path("$.absent"))
_NOT_JSON: Any = object()


def _json(text: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return _NOT_JSON


def _select(entries: Sequence[JournalEntry], query: JournalQuery) -> tuple[list[JournalEntry], int]:
    """The query's page of ``entries`` (in sequence order) and how many matched before paging.

    Verification pages only when the query sets ``offset`` or ``limit`` itself: by default it sees every
    retained entry (a journal may retain more than one page of 500).
    """
    selected = [entry for entry in entries if matches(entry, query)]
    if not {"offset", "limit"} & query.model_fields_set:
        return selected, len(selected)
    ordered = selected if query.order == "asc" else selected[::-1]
    page = ordered[query.offset : query.offset + query.limit]
    page.sort(key=lambda entry: entry.sequence)
    return page, len(selected)


def _ids(entries: Iterable[JournalEntry]) -> list[str]:
    return [entry.request_id for entry in entries]


def _outside(count: int, minimum: int, maximum: int | None) -> bool:
    """Whether ``count`` breaks an expectation's inclusive bounds (``maximum`` None: unbounded)."""
    return count < minimum or (maximum is not None and count > maximum)


def _count_text(minimum: int, maximum: int | None) -> str:
    if maximum is None:
        return f"at least {minimum}"
    return f"exactly {minimum}" if minimum == maximum else f"{minimum}..{maximum}"


class _Verdict:
    def __init__(self) -> None:
        self.failures: list[VerificationFailure] = []
        self.dropped = 0
        self.incomplete = False

    def fail(self, kind: str, message: str, **details: Any) -> None:
        if kind.startswith("evidence_"):
            self.incomplete = True
        if len(self.failures) >= MAX_FAILURES:
            self.dropped += 1
            return
        self.failures.append(VerificationFailure(kind=kind, message=message, **details))


def _label(section: str, index: int, name: str | None) -> str:
    return f"{section}[{index}]" + (f" ({name})" if name else "")


# --- evidence --------------------------------------------------------------------------------------


def _evidence(snapshot: JournalSnapshot, scope: list[JournalEntry], verdict: _Verdict) -> None:
    if snapshot.evicted:
        verdict.fail(
            "evidence_evicted",
            f"{snapshot.evicted} journal entr{'y was' if snapshot.evicted == 1 else 'ies were'} evicted "
            f"({snapshot.eviction_causes()}): what they recorded is unknown",
            actual=snapshot.evicted,
        )
    if snapshot.truncated:
        verdict.fail(
            "evidence_truncated",
            "the journal cut payload previews or tool data to its limits (journal preview_bytes)",
        )
    pending = [entry for entry in scope if not entry.completed]
    if pending:
        verdict.fail(
            "evidence_pending",
            f"{len(pending)} request(s) in scope are still in progress",
            request_ids=_ids(pending),
        )


def _paged(verdict: _Verdict, where: str | None, returned: int, total: int) -> None:
    if returned < total:
        verdict.fail(
            "evidence_paginated",
            f"the query's offset/limit leave out {total - returned} of {total} matching request(s)",
            expectation=where,
            expected=total,
            actual=returned,
        )


# --- request expectations --------------------------------------------------------------------------


def _tool_items(entry: JournalEntry, kind: str) -> list[ToolItem]:
    """(call id, name, JSON text) of the entry's tool items of ``kind``."""
    if kind == "response_call":
        return [(call.id, call.name, call.arguments) for call in entry.response_tool_calls]
    if kind == "request_call":
        return [(call.id, call.name, call.arguments) for call in entry.request_tool_calls]
    return [(result.call_id, result.name, result.content) for result in entry.tool_results]


def _field_holds(document: Any, field: JsonFieldExpectation) -> bool:
    value = resolve_path(document, parse_json_path(field.path)) if document is not _NOT_JSON else _ABSENT
    return value is not _ABSENT and json_equal(value, field.expected_json)


def _mismatches(item: ToolItem, tool: ToolExpectation) -> list[str]:
    """The predicates of ``tool`` the item fails (``name``, ``call_id``, ``arguments``/``result``, or a
    field's path); empty when it passes."""
    call_id, name, text = item
    failed: list[str] = []
    if tool.name is not None and name != tool.name:
        failed.append("name")
    if tool.call_id is not None and call_id != tool.call_id:
        failed.append("call_id")
    if not (tool.compares_arguments or tool.compares_result or tool.fields):
        return failed
    document = _json(text)
    if tool.compares_arguments or tool.compares_result:
        expected = tool.arguments if tool.compares_arguments else tool.result
        # Text that is not JSON compares as a JSON string.
        if not json_equal(text if document is _NOT_JSON else document, expected):
            failed.append("arguments" if tool.compares_arguments else "result")
    failed.extend(field.path for field in tool.fields if not _field_holds(document, field))
    return failed


def _describe_tool(tool: ToolExpectation) -> str:
    parts: list[str] = [tool.kind]
    if tool.name is not None:
        parts.append(f"name={tool.name!r}")
    if tool.call_id is not None:
        parts.append(f"call_id={tool.call_id!r}")
    if tool.compares_arguments:
        parts.append(f"arguments={orjson.dumps(tool.arguments).decode()}")
    if tool.compares_result:
        parts.append(f"result={orjson.dumps(tool.result).decode()}")
    parts.extend(f"{field.path}=={orjson.dumps(field.expected_json).decode()}" for field in tool.fields)
    return " ".join(parts)


def _ordinal(number: int) -> str:
    suffix = "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return f"{number}{suffix}"


def _found(count: int, scope: list[JournalEntry], query: JournalQuery) -> tuple[dict[str, Any], str]:
    """A count failure's ``actual`` and the message's tail: when nothing matched, the nearest requests."""
    if count:
        return {"found": count}, ""
    nearest = nearest_requests(scope, query)
    return {"found": 0, "nearest": nearest}, f"; {describe_nearest(nearest)}"


def _check_counts_of(
    where: str,
    expectation: RequestExpectation,
    matched: list[JournalEntry],
    scope: list[JournalEntry],
    verdict: _Verdict,
) -> list[JournalEntry]:
    """The requests the expectation's checks apply to: the matches, or with ``nth`` that one match."""
    count, nth = len(matched), expectation.nth
    if nth is not None:
        if count >= nth:
            return [matched[nth - 1]]
        actual, nearest = _found(count, scope, expectation.query)
        verdict.fail(
            "nth_missing",
            f"expected a {_ordinal(nth)} matching request, found {count}{nearest}",
            expectation=where,
            request_ids=_ids(matched),
            expected={"nth": nth},
            actual=actual,
        )
        return []
    if _outside(count, expectation.minimum_count, expectation.maximum_count):
        actual, nearest = _found(count, scope, expectation.query)
        verdict.fail(
            "count",
            f"expected {_count_text(expectation.minimum_count, expectation.maximum_count)} matching "
            f"request(s), found {count}{nearest}",
            expectation=where,
            request_ids=_ids(matched),
            expected={"minimum": expectation.minimum_count, "maximum": expectation.maximum_count},
            actual=actual,
        )
    return matched


def _check_tools(
    where: str, expectation: RequestExpectation, matched: list[JournalEntry], verdict: _Verdict
) -> None:
    for t_index, tool in enumerate(expectation.tools):
        for entry in matched:
            judged = [(item, _mismatches(item, tool)) for item in _tool_items(entry, tool.kind)]
            found = sum(1 for _, failed in judged if not failed)
            if not _outside(found, tool.minimum_count, tool.maximum_count):
                continue
            seen = ", ".join(f"{name}({call_id})" for (call_id, name, _), _ in judged) or "none"
            verdict.fail(
                "tool_count",
                f"request {entry.request_id}: expected "
                f"{_count_text(tool.minimum_count, tool.maximum_count)} {_describe_tool(tool)}, "
                f"found {found} (its {tool.kind} items: {seen})",
                expectation=f"{where}.tools[{t_index}]",
                request_ids=[entry.request_id],
                expected={"minimum": tool.minimum_count, "maximum": tool.maximum_count},
                actual={"found": found, **sent_items(tool.kind, judged)},
            )


def _check_request(
    index: int,
    expectation: RequestExpectation,
    scope: list[JournalEntry],
    verdict: _Verdict,
    unmarked: frozenset[tuple[str, str]] = frozenset(),
) -> list[JournalEntry]:
    where = _label("requests", index, expectation.name)
    matched, total = _select(scope, expectation.query)
    _paged(verdict, where, len(matched), total)
    matched = _check_counts_of(where, expectation, matched, scope, verdict)
    if expectation.require_streaming_terminal_marker:
        _check_terminal_markers(where, matched, verdict, unmarked)
    _check_tools(where, expectation, matched, verdict)
    return matched


def _check_terminal_markers(
    where: str, matched: list[JournalEntry], verdict: _Verdict, unmarked: frozenset[tuple[str, str]]
) -> None:
    refused = [e for e in matched if e.streaming and (e.provider, e.operation) in unmarked]
    if refused:
        verdict.fail(
            "terminal_marker_unavailable",
            f"terminal-marker verification is refused for {len(refused)} matched request(s): their "
            "stream has no terminal marker, it ends at EOF ("
            + ", ".join(sorted({f"{e.provider} {e.operation}" for e in refused}))
            + ")",
            expectation=where,
            request_ids=_ids(refused),
        )
    missing = [
        e
        for e in matched
        if not (e.streaming and e.terminal_marker_observed) and (e.provider, e.operation) not in unmarked
    ]
    if missing:
        verdict.fail(
            "terminal_marker",
            f"{len(missing)} matched request(s) did not stream or their terminal marker was not "
            "written (transport_outcome: "
            + ", ".join(sorted({str(e.transport_outcome) for e in missing}))
            + ")",
            expectation=where,
            request_ids=_ids(missing),
        )


def _check_order(
    expectations: Sequence[RequestExpectation], matched: Sequence[list[JournalEntry]], verdict: _Verdict
) -> None:
    previous: tuple[int, str, int] | None = None  # (index, label, last sequence)
    for index, (expectation, entries) in enumerate(zip(expectations, matched, strict=True)):
        if not entries:
            continue
        where = _label("requests", index, expectation.name)
        first, last = entries[0].sequence, entries[-1].sequence
        if previous is not None and first <= previous[2]:
            verdict.fail(
                "order",
                f"its first match (sequence {first}) does not come after the last match of "
                f"{previous[1]} (sequence {previous[2]})",
                expectation=where,
                request_ids=_ids(entries),
            )
        previous = (index, where, max(last, previous[2]) if previous else last)


# --- retries ---------------------------------------------------------------------------------------


def _check_retry(
    index: int, expectation: RetryExpectation, scope: list[JournalEntry], verdict: _Verdict
) -> list[JournalEntry]:
    where = _label("retries", index, expectation.name or expectation.group)
    grouped = [entry for entry in scope if entry.retry_group == expectation.group]
    attempts, total = _select(grouped, expectation.query)
    _paged(verdict, where, len(attempts), total)
    count = len(attempts)
    if _outside(count, expectation.minimum_attempts, expectation.maximum_attempts):
        verdict.fail(
            "retry_attempts",
            f"expected {_count_text(expectation.minimum_attempts, expectation.maximum_attempts)} "
            f"attempt(s) in retry group {expectation.group!r}, found {count}",
            expectation=where,
            request_ids=_ids(attempts),
            expected={"minimum": expectation.minimum_attempts, "maximum": expectation.maximum_attempts},
            actual=count,
        )
    statuses = [entry.status for entry in attempts]
    if expectation.status_sequence is not None and statuses != expectation.status_sequence:
        verdict.fail(
            "retry_status_sequence",
            f"attempt statuses were {statuses}, expected {expectation.status_sequence}",
            expectation=where,
            request_ids=_ids(attempts),
            expected=expectation.status_sequence,
            actual=statuses,
        )
    minimum = expectation.minimum_retry_after_seconds
    for position, attempt in enumerate(attempts):
        if attempt.status not in _RETRY_STATUSES:
            continue
        advertised = attempt.retry_after_seconds
        if minimum is not None or (expectation.respect_retry_after and position + 1 < count):
            if advertised is None:
                verdict.fail(
                    "retry_after_missing",
                    f"attempt {attempt.request_id} ({attempt.status}) advertised no Retry-After",
                    expectation=where,
                    request_ids=[attempt.request_id],
                )
                continue
            if minimum is not None and advertised < minimum:
                verdict.fail(
                    "retry_after_too_short",
                    f"attempt {attempt.request_id} advertised Retry-After {advertised:g} s, "
                    f"expected at least {minimum:g} s",
                    expectation=where,
                    request_ids=[attempt.request_id],
                    expected=minimum,
                    actual=advertised,
                )
        if expectation.respect_retry_after and position + 1 < count and advertised is not None:
            _check_spacing(where, attempt, attempts[position + 1], advertised, verdict)
    return attempts


def _check_spacing(
    where: str, attempt: JournalEntry, following: JournalEntry, advertised: float, verdict: _Verdict
) -> None:
    """The retry waited: next start - this completion >= Retry-After (less a small slack for the
    server's own stamping delay), both on the monotonic clock."""
    spacing = retry_gap(attempt, following)
    if spacing is None:
        verdict.fail(
            "evidence_timing",
            f"attempt {attempt.request_id} has no usable monotonic completion time",
            expectation=where,
            request_ids=[attempt.request_id, following.request_id],
        )
        return
    if not waited_as_told(spacing, advertised):
        verdict.fail(
            "retry_spacing",
            f"attempt {following.request_id} started {spacing:.3f} s after {attempt.request_id} "
            f"completed, but Retry-After asked for {advertised:g} s",
            expectation=where,
            request_ids=[attempt.request_id, following.request_id],
            expected=advertised,
            actual=round(spacing, 6),
        )


# --- resilience ------------------------------------------------------------------------------------


def _check_resilience(
    expectations: Sequence[ResilienceExpectation],
    snapshot: JournalSnapshot,
    scope: list[JournalEntry],
    verdict: _Verdict,
) -> set[int]:
    """Each expectation against the verdicts of the retry groups in scope; the sequences they cover."""
    if not expectations:
        return set()
    verdicts = resilience_report(snapshot, scope).groups
    sequences = {entry.request_id: entry.sequence for entry in scope}
    covered: set[int] = set()
    for index, expectation in enumerate(expectations):
        where = _label("resilience", index, expectation.name or expectation.group)
        misses, groups = check_expectation(expectation, verdicts)
        for miss in misses:
            verdict.fail(
                miss.kind,
                miss.message,
                expectation=where,
                request_ids=miss.request_ids,
                expected=miss.expected,
                actual=miss.actual,
            )
        covered.update(sequences[request] for group in groups for request in group.request_ids)
    return covered


# --- conversations ---------------------------------------------------------------------------------


def _check_conversation(
    index: int,
    expectation: ConversationExpectation,
    statuses: Sequence[ConversationStatus],
    selected_conversation: str | None,
    verdict: _Verdict,
) -> None:
    where = _label("conversations", index, expectation.name or expectation.scenario)
    conversation = expectation.conversation or selected_conversation
    candidates = [
        status
        for status in statuses
        if status.scenario == expectation.scenario
        and (expectation.provider is None or status.provider == expectation.provider)
        and (conversation is None or status.conversation_id == conversation)
    ]
    if not candidates:
        verdict.fail(
            "conversation_missing",
            f"no conversation state for scenario {expectation.scenario!r}"
            + (f", provider {expectation.provider!r}" if expectation.provider else "")
            + (f", conversation {conversation!r}" if conversation else ""),
            expectation=where,
        )
        return
    wanted = expectation.visited_steps
    if wanted and not any(set(wanted) <= set(status.executed_steps) for status in candidates):
        best = max(candidates, key=lambda status: len(set(wanted) & set(status.executed_steps)))
        verdict.fail(
            "conversation_steps",
            f"steps never visited: {[step for step in wanted if step not in best.executed_steps]} "
            f"(visited: {best.executed_steps})",
            expectation=where,
            expected=wanted,
            actual=best.executed_steps,
        )
    if expectation.terminal is not None and not any(
        status.terminal == expectation.terminal for status in candidates
    ):
        verdict.fail(
            "conversation_terminal",
            f"expected the conversation {'to be' if expectation.terminal else 'not to be'} terminal "
            f"(state: {', '.join(status.state for status in candidates)})",
            expectation=where,
            expected=expectation.terminal,
            actual=[status.terminal for status in candidates],
        )


# --- entry point -----------------------------------------------------------------------------------


def _check_cost(maximum: float, scope: list[JournalEntry], verdict: _Verdict) -> None:
    """The requests in scope cost at most ``maximum`` USD; an unpriced one leaves the total unknown."""
    unpriced = [entry for entry in scope if entry.usage is not None and entry.cost_usd is None]
    if unpriced:
        models = sorted({f"{entry.provider}/{entry.model}" for entry in unpriced})
        verdict.fail(
            "cost_unpriced",
            f"{len(unpriced)} request(s) in scope have no price ({', '.join(models[:10])}); "
            "give their models a price in the configuration's pricing",
            expectation="max_cost_usd",
            request_ids=_ids(unpriced),
            expected=maximum,
        )
        return
    spent = shown_usd(sum(entry.cost_usd or 0.0 for entry in scope))
    if spent > maximum:
        costly = sorted((e for e in scope if e.cost_usd), key=lambda e: e.cost_usd or 0.0, reverse=True)
        verdict.fail(
            "cost",
            f"the requests in scope cost {spent:.6f} USD, over max_cost_usd {maximum}",
            expectation="max_cost_usd",
            request_ids=_ids(costly[:20]),
            expected=maximum,
            actual={"cost_usd": spent, "requests": len(scope)},
        )


def verify(
    snapshot: JournalSnapshot,
    request: VerificationRequest,
    *,
    conversation: str | None = None,
    statuses: Sequence[ConversationStatus] = (),
    unmarked: frozenset[tuple[str, str]] = frozenset(),
) -> VerificationResult:
    """``conversation``: the conversation header's value (scopes the journal before ``scope``);
    ``statuses``: the session's conversation states (``GET /admin-api/conversations``); ``unmarked``: the
    (provider, operation) pairs whose streams have no terminal marker (the server takes them from the
    routes), for which ``require_streaming_terminal_marker`` is refused."""
    verdict = _Verdict()
    entries: Sequence[JournalEntry] = snapshot.entries
    if conversation is not None:
        entries = [entry for entry in entries if entry.conversation == conversation]
    scope, total = _select(entries, request.scope)
    _evidence(snapshot, scope, verdict)
    _paged(verdict, "scope", len(scope), total)

    matched_by_request = [
        _check_request(index, expectation, scope, verdict, unmarked)
        for index, expectation in enumerate(request.requests)
    ]
    if request.in_order:
        _check_order(request.requests, matched_by_request, verdict)
    matched_by_retry = [
        _check_retry(index, expectation, scope, verdict) for index, expectation in enumerate(request.retries)
    ]
    for index, expectation in enumerate(request.conversations):
        _check_conversation(index, expectation, statuses, conversation, verdict)
    matched_by_resilience = _check_resilience(request.resilience, snapshot, scope, verdict)

    accounted = {entry.sequence for group in (*matched_by_request, *matched_by_retry) for entry in group}
    accounted |= matched_by_resilience
    if request.no_unexpected_calls:
        unexpected = [entry for entry in scope if entry.sequence not in accounted]
        if unexpected:
            verdict.fail(
                "unexpected_call",
                f"{len(unexpected)} request(s) in scope match no expectation: "
                + ", ".join(
                    f"#{e.sequence} {e.provider} {e.operation or e.path} -> {e.status}"
                    for e in unexpected[:20]
                ),
                request_ids=_ids(unexpected),
            )
    if request.max_cost_usd is not None:
        _check_cost(request.max_cost_usd, scope, verdict)
    if verdict.dropped:
        verdict.failures.append(
            VerificationFailure(
                kind="too_many_failures", message=f"{verdict.dropped} more failure(s) not listed"
            )
        )
    return VerificationResult(
        passed=not verdict.failures,
        evidence_complete=not verdict.incomplete,
        failures=verdict.failures,
        matched_request_ids=[entry.request_id for entry in scope if entry.sequence in accounted],
        evidence={
            "total_observed": snapshot.total_observed,
            "evicted_count": snapshot.evicted,
            "retained_byte_count": snapshot.retained_bytes,
            "retention_truncated": snapshot.truncated,
            "first_retained_sequence": snapshot.first_sequence,
            "last_retained_sequence": snapshot.last_sequence,
            "in_scope": len(scope),
        },
    )
