"""Unit tests of the verification evaluator and the wire identity (on top of the HTTP tests): timing
evidence and failure caps that HTTP cannot easily produce, and the id derivation itself."""

from __future__ import annotations

import math
from typing import Any

import pytest

from llmts.runtime.determinism import WireIdentity
from llmts.runtime.journal import Journal, JournalRecord
from llmts.runtime.verify import MAX_FAILURES, verify
from llmts.schema.conversations import ConversationStatus
from llmts.schema.determinism import Determinism
from llmts.schema.journal import JournalSettings
from llmts.schema.verify import VerificationRequest


class _Clock:
    def now(self) -> float:
        return 1_800_000_000.0

    def monotonic(self) -> float:
        return 5.0


class _Ids:
    def __init__(self) -> None:
        self.count = 0

    def new_hex(self, nbytes: int) -> str:
        self.count += 1
        return f"{self.count:0{nbytes * 2}x}"


def _record(journal: Journal, status: int = 200, **fields: Any) -> JournalRecord:
    started = fields.pop("started", 1.0)
    observed = journal.snapshot(pick=lambda _: ()).total_observed  # the counter, no entries built
    record = journal.begin(f"req_{observed + 1}", "openai", "POST", "/x", 0.0, started)
    record.status = status
    record.success = status < 400
    record.completed = True
    record.completed_epoch = 0.0
    record.completed_monotonic_seconds = fields.pop("completed", started + 0.1)
    for name, value in fields.items():
        setattr(record, name, value)
    return record


def _verify(journal: Journal, **request: Any) -> Any:
    return verify(journal.snapshot(), VerificationRequest.model_validate(request))


@pytest.mark.parametrize("completed", [None, math.nan, math.inf, 0.5])
def test_unusable_retry_timing_is_incomplete_evidence(completed: float | None) -> None:
    journal = Journal()
    _record(journal, 429, retry_group="g", retry_after_seconds=1.0, started=1.0, completed=completed)
    _record(journal, 200, retry_group="g", started=10.0)
    result = _verify(journal, retries=[{"group": "g", "respect_retry_after": True}])
    assert [f.kind for f in result.failures] == ["evidence_timing"]
    assert result.evidence_complete is False


def test_spacing_is_measured_from_completion_to_next_start() -> None:
    journal = Journal()
    _record(journal, 503, retry_group="g", retry_after_seconds=2.0, started=1.0, completed=3.0)
    _record(journal, 200, retry_group="g", started=4.5)
    (failure,) = _verify(journal, retries=[{"group": "g", "respect_retry_after": True}]).failures
    assert (failure.kind, failure.expected, failure.actual) == ("retry_spacing", 2.0, 1.5)

    journal = Journal()
    _record(journal, 503, retry_group="g", retry_after_seconds=2.0, started=1.0, completed=3.0)
    _record(journal, 200, retry_group="g", started=5.0)
    assert _verify(journal, retries=[{"group": "g", "respect_retry_after": True}]).passed


@pytest.mark.parametrize(
    ("advertised", "spacing", "passed"),
    [
        (0.6, 0.551, True),  # 49 ms early: the server's stamping delay on a loaded machine
        (0.6, 0.549, False),  # at most 50 ms of slack
        (0.1, 0.091, True),  # 10 % of a short Retry-After
        (0.1, 0.089, False),
        (0.0, 0.0, True),
    ],
)
def test_a_retry_may_start_a_little_early_for_the_servers_own_stamping_delay(
    advertised: float, spacing: float, passed: bool
) -> None:
    journal = Journal()
    _record(journal, 429, retry_group="g", retry_after_seconds=advertised, started=1.0, completed=2.0)
    _record(journal, 200, retry_group="g", started=2.0 + spacing)
    assert _verify(journal, retries=[{"group": "g", "respect_retry_after": True}]).passed is passed


def test_failures_are_capped() -> None:
    journal = Journal(JournalSettings(max_entries=2000))
    for _ in range(MAX_FAILURES + 10):
        _record(journal, response_tool_calls=(("c", "f", "{}", False),))
    result = _verify(
        journal,
        requests=[
            {
                "name": "all",
                "query": {},
                "maximum_count": None,
                "tools": [{"kind": "response_call", "name": "g"}],
            }
        ],
    )
    assert len(result.failures) == MAX_FAILURES + 1
    assert result.failures[-1].kind == "too_many_failures" and "10 more" in result.failures[-1].message


def test_non_json_tool_text_compares_as_a_string_and_fails_field_predicates() -> None:
    journal = Journal()
    _record(journal, tool_results=(("c1", "f", "plain words", False),))
    assert _verify(
        journal, requests=[{"name": "r", "tools": [{"kind": "result", "result": "plain words"}]}]
    ).passed
    failed = _verify(
        journal,
        requests=[
            {"name": "r", "tools": [{"kind": "result", "fields": [{"path": "$", "expected_json": "x"}]}]}
        ],
    )
    assert [f.kind for f in failed.failures] == ["tool_count"]


def test_any_matching_conversation_state_satisfies_the_expectation() -> None:
    def status(conversation: str, steps: list[str], terminal: bool) -> ConversationStatus:
        return ConversationStatus.model_validate(
            {
                "scenario": "g",
                "provider": "openai",
                "conversation_id": conversation,
                "credential_hash": None,
                "state": "completed" if terminal else "awaiting",
                "busy": False,
                "terminal": terminal,
                "terminal_policy": "reject",
                "run": 1,
                "executions": len(steps),
                "max_steps": 64,
                "executed_steps": steps,
                "last_step": steps[-1],
                "last_turn": 1,
                "last_successful_turn": 1,
                "in_flight_step": None,
                "next_steps": [],
                "unvisited_steps": [],
                "replays": 0,
                "replayable": False,
                "retained_bytes": 0,
            }
        )

    statuses = [status("a", ["ask"], False), status("b", ["ask", "done"], True)]
    request = VerificationRequest.model_validate(
        {"conversations": [{"scenario": "g", "visited_steps": ["ask", "done"], "terminal": True}]}
    )
    assert verify(Journal().snapshot(), request, statuses=statuses).passed
    assert not verify(Journal().snapshot(), request, statuses=statuses, conversation="a").passed


def test_seeded_ids_depend_on_seed_provider_ordinal_and_domain() -> None:
    seeded = Determinism(seed="s", fixed_utc="2026-01-01T00:00:00Z")  # type: ignore[arg-type]

    def wire(
        provider: str = "openai", ordinal: int = 1, determinism: Determinism | None = seeded
    ) -> WireIdentity:
        return WireIdentity(provider, ordinal, determinism, _Clock(), _Ids())

    assert wire().id_for() == wire().id_for() and len(wire().id_for()) == 24
    assert (
        len({wire().id_for(), wire(ordinal=2).id_for(), wire("gemini").id_for(), wire().id_for("message")})
        == 4
    )
    other = Determinism(seed="t")
    assert wire(determinism=other).id_for() != wire().id_for()
    assert (wire().created_at(), wire().clock_mode, wire().http_date()) == (
        1767225600,
        "fixed",
        "Thu, 01 Jan 2026 00:00:00 GMT",
    )
    assert (wire(determinism=other).created_at(), wire(determinism=other).clock_mode) == (
        1_800_000_000,
        "live",
    )


def test_live_ids_come_from_the_id_source_once_per_request() -> None:
    ids = _Ids()
    live = WireIdentity("openai", 1, None, _Clock(), ids)
    assert live.id_for() == live.id_for() == "000000000000000000000001"
    assert live.id_for("message") != live.id_for() and ids.count == 1
    assert live.http_date() is None and not live.seeded
