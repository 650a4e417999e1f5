"""Unit tests of the resilience verdict (docs/journal.md, "Resilience") on hand-made journals: how attempts
become logical calls, and each verdict field from exact timings (the HTTP and SDK tests drive real
clients: tests/server/api/test_resilience.py)."""

from __future__ import annotations

from typing import Any

import pytest

from llmts.runtime.journal import Journal, JournalRecord
from llmts.runtime.resilience import journal_resilience, resilience_report
from llmts.runtime.verify import verify
from llmts.schema.journal import JournalQuery
from llmts.schema.resilience import ResilienceExpectation, ResilienceVerdict
from llmts.schema.verify import VerificationRequest

BODY = b'{"model":"m","messages":[{"role":"user","content":"hi"}]}'


def _attempt(
    journal: Journal,
    status: int | None,
    start: float,
    *,
    took: float = 0.01,
    body: bytes = BODY,
    **fields: Any,
) -> JournalRecord:
    """One completed attempt that started at ``start`` (monotonic seconds) and took ``took``."""
    observed = journal.snapshot(pick=lambda _: ()).total_observed
    record = journal.begin(f"req_{observed + 1}", "openai", "POST", "/v1/chat/completions", 0.0, start)
    record.capture_request(body, journal.preview_bytes)
    record.status = status
    record.success = status is not None and status < 400
    record.completed = True
    record.completed_epoch = 0.0
    record.completed_monotonic_seconds = start + took
    for name, value in fields.items():
        setattr(record, name, value)
    return record


def _retries(journal: Journal, statuses: list[int | None], waits: list[float], **fields: Any) -> None:
    """Attempts with ``statuses``, each following the previous one's completion after ``waits[i]``."""
    start = 1.0
    for index, status in enumerate(statuses):
        _attempt(journal, status, start, **fields)
        if index < len(waits):
            start += 0.01 + waits[index]


def _groups(journal: Journal) -> list[ResilienceVerdict]:
    return resilience_report(journal.snapshot()).groups


def _only(journal: Journal) -> ResilienceVerdict:
    (group,) = _groups(journal)
    return group


# --- grouping -----------------------------------------------------------------------------------------


def test_a_first_time_success_is_no_retry_group() -> None:
    journal = Journal()
    _attempt(journal, 200, 1.0)
    _attempt(journal, 200, 2.0)  # the same request again: a new call, since the last one succeeded
    assert _groups(journal) == []


def test_the_same_request_after_a_failure_is_its_retry_within_the_window_only() -> None:
    journal = Journal()
    _attempt(journal, 500, 1.0)
    _attempt(journal, 200, 2.0)
    _attempt(journal, 500, 10.0, body=b"{}")
    _attempt(journal, 200, 100.0, body=b"{}")  # 90 s later: an unrelated call
    first, second = _groups(journal)
    assert (first.attempts, first.identified_by, first.statuses, first.gave_up) == (
        2,
        "same_request",
        [500, 200],
        False,
    )
    assert (second.attempts, second.gave_up) == (1, True)


def test_sdk_headers_tie_attempts_together() -> None:
    journal = Journal()
    # Stainless: the attempt counter links a retry to the latest same request, however late.
    _attempt(journal, 429, 1.0, client_attempt=1)
    _attempt(journal, 200, 100.0, client_attempt=2)
    # AWS: one invocation id is one call, even when its request differs.
    _attempt(journal, 500, 200.0, body=b"a", client_attempt=1, client_call_id="inv-1")
    _attempt(journal, 200, 201.0, body=b"b", client_attempt=2, client_call_id="inv-1")
    stainless, aws = _groups(journal)
    assert (stainless.identified_by, stainless.attempts) == ("client_attempt", 2)
    assert (aws.identified_by, aws.attempts) == ("client_call_id", 2)


def test_the_retry_group_header_names_a_group_and_joins_nothing_else() -> None:
    journal = Journal()
    _attempt(journal, 500, 1.0)
    _attempt(journal, 200, 1.5, retry_group="mine")
    _attempt(journal, 200, 2.0, retry_group="mine")
    inferred, named = _groups(journal)
    assert (inferred.attempts, inferred.gave_up) == (1, True)
    assert (named.group, named.identified_by, named.attempts) == ("mine", "retry_group_header", 2)


# --- the verdict --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("waits", "backoff", "jitter"),
    [
        ([0.0, 0.01, 0.0], "none", False),
        ([0.5, 0.5, 0.5], "constant", False),
        ([0.5, 0.7, 0.4], "constant", True),
        ([0.5, 1.0, 2.0], "exponential", False),
        ([0.45, 1.0, 1.7], "exponential", True),
        ([1.0], None, None),  # one wait shows no shape
    ],
)
def test_backoff_shape_and_jitter(waits: list[float], backoff: str | None, jitter: bool | None) -> None:
    journal = Journal()
    _retries(journal, [500] * (len(waits) + 1), waits)
    verdict = _only(journal)
    assert (verdict.backoff, verdict.jitter, verdict.gave_up) == (backoff, jitter, True)
    assert verdict.waits_seconds == pytest.approx(waits)


def test_retry_after_honoured_or_not_and_left_out_of_the_shape() -> None:
    journal = Journal()
    for start, status, advertised in (
        (1.0, 429, 1.0),
        (2.01, 429, 1.0),
        (2.32, 500, None),
        (2.93, 200, None),
    ):
        _attempt(journal, status, start, retry_after_seconds=advertised)
    verdict = _only(journal)
    # The second wait (0.3 s) broke the advertised 1 s, so it is the client's own, as is the third (0.6 s);
    # the honoured first is the server's and no part of the shape.
    assert verdict.honoured_retry_after is False
    assert verdict.waits_seconds == pytest.approx([1.0, 0.3, 0.6])
    assert (verdict.backoff, verdict.jitter, verdict.gave_up) == ("exponential", False, False)

    journal = Journal()
    _retries(journal, [429, 200], [0.97], retry_after_seconds=1.0)  # within the 50 ms stamping slack
    assert _only(journal).honoured_retry_after is True


def test_non_retryable_answers_and_cut_streams() -> None:
    journal = Journal()
    _retries(journal, [400, 400], [0.2])
    _retries(journal, [429, 200], [0.2], error_code="insufficient_quota", body=b"q")
    quota = _groups(journal)[1]
    assert _groups(journal)[0].retried_non_retryable is True
    assert quota.retried_non_retryable is True  # a 429 whose code says the quota is gone

    journal = Journal()
    cut = {"streaming": True, "transport_outcome": "early_end", "success": False}
    _attempt(journal, 200, 1.0, **cut)
    _attempt(journal, 200, 1.5)
    _attempt(journal, 200, 3.0, body=b"other", **cut)
    retried, trusted = _groups(journal)
    assert (retried.cut_stream, retried.gave_up, retried.retried_non_retryable) == ("retried", False, False)
    assert (trusted.cut_stream, trusted.gave_up) == ("trusted", True)


def test_verification_checks_the_verdict_and_never_passes_on_no_evidence() -> None:
    journal = Journal()
    _retries(journal, [429, 200], [1.0], retry_after_seconds=1.0)

    def check(**fields: Any) -> list[str]:
        request = VerificationRequest(resilience=[ResilienceExpectation(**fields)])
        return [failure.kind for failure in verify(journal.snapshot(), request).failures]

    assert (
        check(honoured_retry_after=True, retried_non_retryable=False, gave_up=False, maximum_attempts=2) == []
    )
    assert check(gave_up=True) == ["resilience_verdict"]
    assert check(minimum_attempts=3) == ["resilience_attempts"]
    assert check(backoff="exponential") == ["resilience_unobserved"]  # one wait, and the server's
    assert check(group="other", gave_up=False) == ["resilience_missing"]
    with pytest.raises(ValueError, match="needs a field to check"):
        ResilienceExpectation(group="g")


def test_the_journal_query_converts_only_the_groups_and_agrees_with_the_snapshot_verdict() -> None:
    journal = Journal()
    _attempt(journal, 200, 0.5, body=b"alone")  # a first-time success: never converted
    _retries(journal, [429, 500, 200], [1.0, 0.5], retry_after_seconds=1.0)
    _attempt(journal, 400, 9.0, body=b"bad")
    # In progress: answered 200 but not delivered yet, so not (yet) a success.
    live = _attempt(journal, 200, 9.5, body=b"live")
    live.completed, live.completed_monotonic_seconds = False, None

    report = journal_resilience(journal, JournalQuery())
    assert report == resilience_report(journal.snapshot())
    assert [group.statuses for group in report.groups] == [[429, 500, 200], [400], [200]]
    assert (report.complete, report.in_progress) == (False, 1)
    assert journal_resilience(journal, JournalQuery(status=400)).groups == [report.groups[1]]
