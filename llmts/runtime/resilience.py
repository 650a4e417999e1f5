"""The resilience verdict (docs/journal.md, "Resilience"): the journal's attempts grouped into logical
calls, and for each what the client did between attempts.

Pure and computed only when asked, from one journal snapshot: the request path records nothing beyond
the SDK headers it reads (``client_attempt``, ``client_call_id``). Grouping, strongest evidence first:

1. ``X-Llm-Test-Server-Retry-Group``: the caller names the group; such attempts join nothing else.
2. ``client_call_id`` (AWS ``amz-sdk-invocation-id``): every attempt with the id is one call.
3. ``client_attempt`` above 1 (Stainless ``x-stainless-retry-count``): joins the latest group that sent
   the same request.
4. The same request (provider, method, path, body) sent again within ``SAME_CALL_WINDOW_SECONDS`` (plus
   the wait the failed attempt advertised) after an attempt that failed: an application's own retry, or
   an SDK that says nothing of its attempts (google-genai, cohere).

A call that succeeded at its first attempt is no retry group and is not listed.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from llmts.errors import BudgetExhausted
from llmts.runtime.journal import Journal, JournalRecord, JournalSnapshot
from llmts.runtime.journal_query import record_matches
from llmts.runtime.retry_timing import retry_gap, waited_as_told
from llmts.schema.journal import JournalEntry, JournalQuery
from llmts.schema.resilience import (
    Backoff,
    CallIdentity,
    CutStream,
    ResilienceExpectation,
    ResilienceReport,
    ResilienceVerdict,
)

__all__ = [
    "EXPONENTIAL_GROWTH",
    "IMMEDIATE_SECONDS",
    "JITTER_SECONDS",
    "JITTER_SHARE",
    "NON_RETRYABLE_CODES",
    "NON_RETRYABLE_STATUSES",
    "SAME_CALL_WINDOW_SECONDS",
    "Attempt",
    "CallGroup",
    "ResilienceMiss",
    "check_expectation",
    "journal_resilience",
    "judge",
    "resilience_report",
    "retry_groups",
]

# Answers a client must not retry unchanged (the contract, "Provider economics").
NON_RETRYABLE_STATUSES = frozenset({400, 401, 403, 404, 409})
NON_RETRYABLE_CODES = frozenset({BudgetExhausted.code})
# How soon after a failed attempt the same request counts as its retry when nothing else links them.
SAME_CALL_WINDOW_SECONDS = 30.0
# A wait shorter than this is no wait at all (the server's stamping and the client's own work).
IMMEDIATE_SECONDS = 0.05
# Waits growing by at least this factor on average are exponential; less, constant.
EXPONENTIAL_GROWTH = 1.4
# A wait further than this share of the exact shape's value, plus this many seconds of timing noise, from
# that value is jitter.
JITTER_SHARE = 0.02
JITTER_SECONDS = 0.01
# Stream outcomes of a 2xx answer that did not deliver everything.
_CUT_OUTCOMES = frozenset({"early_end", "aborted"})
# Entries that are no provider attempt a client retries (peers' JSON-RPC calls).
_NOT_PROVIDERS = frozenset({"mcp", "a2a"})

_Fingerprint = tuple[str, str, str, int, "bytes | str | None"]


class Attempt(Protocol):
    """What grouping reads of an attempt: a live ``JournalRecord`` (so a query converts only the groups'
    records into entries) or a ``JournalEntry`` (verification's snapshot) alike."""

    @property
    def request_id(self) -> str: ...
    @property
    def provider(self) -> str: ...
    @property
    def operation(self) -> str | None: ...
    @property
    def method(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def request_bytes(self) -> int: ...
    @property
    def request_preview(self) -> bytes | str | None: ...
    @property
    def retry_group(self) -> str | None: ...
    @property
    def client_attempt(self) -> int | None: ...
    @property
    def client_call_id(self) -> str | None: ...
    @property
    def completed(self) -> bool: ...
    @property
    def success(self) -> bool | None: ...
    @property
    def started_monotonic_seconds(self) -> float: ...
    @property
    def completed_monotonic_seconds(self) -> float | None: ...
    @property
    def retry_after_seconds(self) -> float | None: ...


_A = TypeVar("_A", bound=Attempt)


@dataclass(slots=True)
class CallGroup(Generic[_A]):
    """One logical call: its key (the retry-group header's value, else its first request id), how its
    attempts were tied together (the weakest link; for one attempt, what it carried), and the attempts in
    order."""

    key: str
    identified_by: CallIdentity
    attempts: list[_A] = field(default_factory=list)


def _fingerprint(attempt: Attempt) -> _Fingerprint:
    """The request as sent: its route and body (the preview, which is the whole body up to the journal's
    ``preview_bytes``, and the full size)."""
    return (attempt.provider, attempt.method, attempt.path, attempt.request_bytes, attempt.request_preview)


def _failed(attempt: Attempt) -> bool:
    """Not (yet) a success: an error status, a fault, a stream cut short, or still in progress (a live
    record may say success before its delivery is over)."""
    return not attempt.completed or attempt.success is not True


def _within_window(previous: Attempt, attempt: Attempt) -> bool:
    done = previous.completed_monotonic_seconds
    if done is None:
        return True
    window = SAME_CALL_WINDOW_SECONDS + (previous.retry_after_seconds or 0.0)
    return attempt.started_monotonic_seconds - done <= window


def retry_groups(entries: Iterable[_A]) -> list[CallGroup[_A]]:
    """Every logical call of ``entries`` (sequence order) with its attempts, in order of first attempt."""
    groups: list[CallGroup[_A]] = []
    named: dict[str, CallGroup[_A]] = {}
    by_call_id: dict[str, CallGroup[_A]] = {}
    latest: dict[_Fingerprint, CallGroup[_A]] = {}
    for entry in entries:
        if entry.provider in _NOT_PROVIDERS or entry.operation == "realtime":
            continue
        if entry.retry_group is not None:
            group = named.get(entry.retry_group)
            if group is None:
                group = named[entry.retry_group] = CallGroup(entry.retry_group, "retry_group_header")
                groups.append(group)
            group.attempts.append(entry)
            continue
        fingerprint = _fingerprint(entry)
        group = by_call_id.get(entry.client_call_id) if entry.client_call_id is not None else None
        if group is None:
            candidate = latest.get(fingerprint)
            if candidate is not None and _failed(candidate.attempts[-1]):
                said_retry = entry.client_attempt is not None and entry.client_attempt > 1
                if said_retry:
                    group = candidate
                elif _within_window(candidate.attempts[-1], entry):
                    group = candidate
                    group.identified_by = "same_request"  # the weakest link names the group
        if group is None:
            identity: CallIdentity = (
                "client_call_id"
                if entry.client_call_id is not None
                else "client_attempt"
                if entry.client_attempt is not None
                else "same_request"
            )
            group = CallGroup(entry.request_id, identity)
            groups.append(group)
        group.attempts.append(entry)
        latest[fingerprint] = group
        if entry.client_call_id is not None:
            by_call_id[entry.client_call_id] = group
    return groups


def _cut_short(entry: JournalEntry) -> bool:
    return (
        entry.streaming
        and entry.status is not None
        and entry.status < 300
        and entry.transport_outcome in _CUT_OUTCOMES
    )


def _non_retryable(entry: JournalEntry) -> bool:
    return entry.status in NON_RETRYABLE_STATUSES or entry.error_code in NON_RETRYABLE_CODES


def _shape(waits: Sequence[float]) -> tuple[Backoff | None, bool | None]:
    """The backoff shape of the client's own waits and whether they carry jitter (None: cannot tell)."""
    if not waits:
        return None, None
    if all(wait < IMMEDIATE_SECONDS for wait in waits):
        return "none", False
    if len(waits) < 2:
        return None, None
    floor = [max(wait, 0.001) for wait in waits]
    ratios = [later / earlier for earlier, later in itertools.pairwise(floor)]
    growth = math.exp(statistics.fmean(math.log(ratio) for ratio in ratios))
    if growth >= EXPONENTIAL_GROWTH:
        # The exact shape: the nearest whole growth factor (2 for doubling), scaled to fit the waits.
        factor = max(2, round(growth))
        anchor = math.exp(
            statistics.fmean(math.log(wait / factor**index) for index, wait in enumerate(floor))
        )
        exact = [anchor * factor**index for index in range(len(floor))]
        backoff: Backoff = "exponential"
    else:
        exact = [statistics.median(floor)] * len(floor)
        backoff = "constant"
    jitter = any(
        abs(wait - value) > JITTER_SHARE * value + JITTER_SECONDS
        for wait, value in zip(floor, exact, strict=True)
    )
    return backoff, jitter


def judge(group: CallGroup[JournalEntry]) -> ResilienceVerdict:
    attempts = group.attempts
    last = attempts[-1]
    waits: list[float | None] = []
    own_waits: list[float] = []
    honoured: list[bool] = []
    for attempt, following in itertools.pairwise(attempts):
        wait = retry_gap(attempt, following)
        waits.append(None if wait is None else round(wait, 6))
        if wait is None:
            continue
        advertised = attempt.retry_after_seconds
        if advertised is not None:
            told = waited_as_told(wait, advertised)
            honoured.append(told)
            if told:
                continue  # the server's wait, not the client's own policy
        own_waits.append(wait)
    backoff, jitter = _shape(own_waits)
    cut: CutStream | None = None
    for position, attempt in enumerate(attempts):
        if _cut_short(attempt):
            cut = "retried" if position + 1 < len(attempts) else "trusted"
    return ResilienceVerdict(
        group=group.key,
        identified_by=group.identified_by,
        provider=attempts[0].provider,
        request_ids=[attempt.request_id for attempt in attempts],
        statuses=[attempt.status for attempt in attempts],
        attempts=len(attempts),
        gave_up=None if not last.completed else last.success is not True,
        honoured_retry_after=all(honoured) if honoured else None,
        backoff=backoff,
        jitter=jitter,
        retried_non_retryable=any(_non_retryable(attempt) for attempt in attempts[:-1]),
        cut_stream=cut,
        waits_seconds=waits,
        advertised_seconds=[attempt.retry_after_seconds for attempt in attempts],
    )


def _is_retry_group(group: CallGroup[Any]) -> bool:
    return (
        group.identified_by == "retry_group_header" or len(group.attempts) > 1 or _failed(group.attempts[0])
    )


def resilience_report(
    snapshot: JournalSnapshot, entries: Sequence[JournalEntry] | None = None
) -> ResilienceReport:
    """The verdict of every retry group in ``entries`` (default: the whole snapshot)."""
    chosen = snapshot.entries if entries is None else entries
    verdicts = [judge(group) for group in retry_groups(chosen) if _is_retry_group(group)]
    in_progress = sum(1 for entry in chosen if not entry.completed)
    return ResilienceReport(
        groups=verdicts,
        complete=snapshot.evicted == 0 and in_progress == 0,
        evicted=snapshot.evicted,
        in_progress=in_progress,
    )


def journal_resilience(journal: Journal, query: JournalQuery) -> ResilienceReport:
    """``GET /admin-api/resilience``: the groups are found among the live records the query's filters
    match, and only their records become entries (a full journal of first-time successes costs a pass
    over its records, not their conversion)."""
    keys: list[tuple[str, CallIdentity, list[str]]] = []
    in_progress = 0

    def pick(records: Sequence[JournalRecord]) -> list[JournalRecord]:
        nonlocal in_progress
        selected = [record for record in records if record_matches(record, query)]
        in_progress = sum(1 for record in selected if not record.completed)
        kept: list[JournalRecord] = []
        for group in retry_groups(selected):
            if _is_retry_group(group):
                keys.append((group.key, group.identified_by, [r.request_id for r in group.attempts]))
                kept.extend(group.attempts)
        kept.sort(key=lambda record: record.sequence)
        return kept

    snapshot = journal.snapshot(pick=pick)
    by_id = {entry.request_id: entry for entry in snapshot.entries}
    verdicts = [
        judge(CallGroup(key, identity, [by_id[request] for request in requests]))
        for key, identity, requests in keys
    ]
    return ResilienceReport(
        groups=verdicts,
        complete=snapshot.evicted == 0 and in_progress == 0,
        evicted=snapshot.evicted,
        in_progress=in_progress,
    )


@dataclass(frozen=True, slots=True)
class ResilienceMiss:
    """One way the verdicts broke a ``ResilienceExpectation`` (a verification failure's parts)."""

    kind: str
    message: str
    request_ids: list[str]
    expected: object = None
    actual: object = None


def check_expectation(
    expectation: ResilienceExpectation, verdicts: Sequence[ResilienceVerdict]
) -> tuple[list[ResilienceMiss], list[ResilienceVerdict]]:
    """The misses of ``expectation`` against the verdicts, and the groups it looked at."""
    chosen = [
        verdict
        for verdict in verdicts
        if (expectation.group is None or verdict.group == expectation.group)
        and (expectation.provider is None or verdict.provider == expectation.provider)
    ]
    if not chosen:
        what = f"retry group {expectation.group!r}" if expectation.group else "any retry group"
        return [ResilienceMiss("resilience_missing", f"the journal has no {what} in scope", [])], chosen
    misses: list[ResilienceMiss] = []
    for name in expectation.checked():
        wanted = getattr(expectation, name)
        seen = False
        for verdict in chosen:
            if name in ("minimum_attempts", "maximum_attempts"):
                low = name == "minimum_attempts"
                if verdict.attempts < wanted if low else verdict.attempts > wanted:
                    misses.append(
                        ResilienceMiss(
                            "resilience_attempts",
                            f"retry group {verdict.group!r} made {verdict.attempts} attempt(s), expected "
                            f"{'at least' if low else 'at most'} {wanted}",
                            verdict.request_ids,
                            wanted,
                            verdict.attempts,
                        )
                    )
                continue
            actual = getattr(verdict, name)
            if actual is None:
                continue
            seen = True
            if actual != wanted:
                misses.append(
                    ResilienceMiss(
                        "resilience_verdict",
                        f"retry group {verdict.group!r}: {name} is {_shown(actual)}, "
                        f"expected {_shown(wanted)} (waits {verdict.waits_seconds}, "
                        f"statuses {verdict.statuses})",
                        verdict.request_ids,
                        wanted,
                        actual,
                    )
                )
        if not seen and name not in ("minimum_attempts", "maximum_attempts"):
            misses.append(
                ResilienceMiss(
                    "resilience_unobserved",
                    f"no retry group in scope gave evidence for {name} ({_UNOBSERVED[name]})",
                    [request for verdict in chosen for request in verdict.request_ids],
                    wanted,
                )
            )
    return misses, chosen


def _shown(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else repr(value)


# Why a verdict field can be null.
_UNOBSERVED = {
    "honoured_retry_after": "no attempt that advertised a wait was followed by another",
    "backoff": "the client chose fewer than two waits of its own",
    "jitter": "the client chose fewer than two waits of its own",
    "gave_up": "the last attempt is still in progress",
    "cut_stream": "no 2xx stream was cut short",
    "retried_non_retryable": "",
}
