"""The process memory budget (llmts.runtime.memory): accounting, oldest-first journal eviction across
sessions, refusal of stored objects / conversation state, and that nothing waits on another session."""

from __future__ import annotations

import pytest

from llmts.errors import MemoryBudgetExceeded
from llmts.runtime import SessionRegistry
from llmts.runtime.journal import Journal, JournalRecord
from llmts.runtime.memory import MemoryBudget, default_max_memory, parse_memory_size
from llmts.runtime.resident_size import configuration_size
from llmts.schema.journal import JournalSettings
from llmts.schema.validation import parse_session_config
from tests.runtime.doubles import CountingIds, FixedClock
from tests.runtime.test_conversations_state import chat


def _entry(journal: Journal, name: str, preview: int = 1000) -> JournalRecord:
    record = journal.begin(name, "openai", "POST", "/p", 0.0, 0.0)
    record.capture_response(b"x" * preview, None, journal.preview_bytes)
    record.finish(1.0, 1.0)
    journal.settle(record)
    return record


def _ids(journal: Journal) -> list[str]:
    return [entry.request_id for entry in journal.snapshot().entries]


def _size() -> int:
    return _entry(Journal(), "r0").accounted


def test_parse_memory_size() -> None:
    assert parse_memory_size("1048576") == 1 << 20
    assert parse_memory_size("512M") == 512 << 20
    assert parse_memory_size("2g") == 2 << 30
    assert parse_memory_size(" 64KiB ") == 64 << 10
    for bad in ("", "M", "1.5G", "-1", "12T", "ten"):
        with pytest.raises(ValueError, match="not a memory size"):
            parse_memory_size(bad)


def test_default_is_a_quarter_of_the_machine_within_bounds() -> None:
    assert 256 << 20 <= default_max_memory() <= 8 << 30
    assert MemoryBudget().max_bytes == default_max_memory()


def test_eviction_is_oldest_first_across_journals() -> None:
    size = _size()
    budget = MemoryBudget(4 * size)
    first, second = Journal(budget=budget), Journal(budget=budget)
    _entry(first, "a1")
    _entry(second, "b1")
    _entry(first, "a2")
    _entry(second, "b2")
    assert budget.used_bytes == budget.journal_bytes == 4 * size and budget.evicted_entries == 0
    _entry(second, "b3")  # over: the process's oldest entry (a1) goes, not this journal's own
    assert (_ids(first), _ids(second)) == (["a2"], ["b1", "b2", "b3"])
    _entry(second, "b4")
    assert (_ids(first), _ids(second)) == (["a2"], ["b2", "b3", "b4"])
    assert budget.evicted_entries == 2 and budget.journal_entries == 4
    assert budget.journal_bytes == first.snapshot().retained_bytes + second.snapshot().retained_bytes
    snapshot = second.snapshot()
    assert (snapshot.evicted, snapshot.total_observed) == (1, 4)  # evidence says what went


def test_entries_gone_by_local_limits_or_reset_are_skipped_not_counted_twice() -> None:
    size = _size()
    budget = MemoryBudget(3 * size)
    small = Journal(JournalSettings(max_entries=1), budget=budget)
    other = Journal(budget=budget)
    _entry(small, "s1")
    _entry(small, "s2")  # s1 evicted by the journal's own limit
    _entry(other, "o1")
    assert budget.journal_entries == 2 and budget.journal_bytes == 2 * size
    other.clear()
    assert budget.journal_entries == 1 and budget.journal_bytes == size
    _entry(other, "o2")
    _entry(other, "o3")
    _entry(other, "o4")  # over: stale references (s1, o1) are skipped; s2 is the oldest live entry
    assert (_ids(small), _ids(other)) == ([], ["o2", "o3", "o4"])
    assert budget.evicted_entries == 1


def test_stale_references_are_compacted() -> None:
    budget = MemoryBudget(1 << 30)
    journal = Journal(JournalSettings(max_entries=2), budget=budget)
    for index in range(10_000):
        _entry(journal, f"r{index}", preview=10)
    assert budget.journal_entries == 2
    assert len(budget._arrivals) <= 2 * 2 + 4096 + 1


def test_a_busy_journal_is_never_waited_for() -> None:
    size = _size()
    budget = MemoryBudget(2 * size)
    busy, other = Journal(budget=budget), Journal(budget=budget)
    _entry(busy, "a1")
    busy._lock.acquire()  # another greenlet is inside that session's journal
    try:
        _entry(other, "b1")
        _entry(other, "b2")  # over budget, but the oldest entry's journal is busy: no wait, no eviction
        assert budget.used_bytes > budget.max_bytes
    finally:
        busy._lock.release()
    _entry(other, "b3")  # the next growth resumes the eviction
    assert budget.used_bytes <= budget.max_bytes
    assert _ids(busy) == [] and _ids(other) == ["b2", "b3"]


def test_a_record_evicted_in_flight_is_not_charged_when_it_settles() -> None:
    size = _size()
    budget = MemoryBudget(2 * size)
    journal = Journal(budget=budget)
    pending = journal.begin("p", "openai", "POST", "/p", 0.0, 0.0)
    _entry(journal, "x1")
    _entry(journal, "x2")  # pushes the in-progress record out
    assert pending.accounted == 0
    pending.capture_response(b"y" * 5000, None, journal.preview_bytes)
    journal.settle(pending)
    assert budget.journal_bytes == journal.snapshot().retained_bytes == 2 * size


def _registry(max_bytes: int) -> SessionRegistry:
    return SessionRegistry(clock=FixedClock(), ids=CountingIds(), max_memory_bytes=max_bytes)


def test_stored_objects_evict_journals_first_then_are_refused() -> None:
    registry = _registry(64 * 1024)
    session, other = registry.create(), registry.create()
    _entry(other.journal, "old")
    session.store.put("openai", "resp_1", object(), 40 * 1024)
    assert _ids(other.journal) == ["old"]
    session.store.put("openai", "resp_2", object(), 23 * 1024)  # only fits once the journal entry goes
    assert _ids(other.journal) == [] and registry.memory.evicted_entries == 1
    assert registry.memory.store_bytes == 63 * 1024
    with pytest.raises(MemoryBudgetExceeded) as raised:
        session.store.put("openai", "resp_3", object(), 8 * 1024)
    assert (raised.value.http_status, raised.value.code) == (507, "llm_test_server_memory_exhausted")
    assert session.store.get("openai", "resp_3") is None and registry.memory.refused == 1
    session.store.delete("openai", "resp_1")
    assert registry.memory.store_bytes == 23 * 1024
    session.reset()
    assert registry.memory.store_bytes == 0


def test_conversation_growth_over_the_budget_is_refused_and_changes_nothing() -> None:
    config = {
        "conversations": [
            {
                "id": "g",
                "steps": [
                    {"id": "a", "when": {"turn": 1}, "response": {"text": "A" * 5000}, "complete": True}
                ],
            }
        ]
    }
    # Room for the configuration itself, not for the step's 5,000 bytes of state.
    registry = _registry(configuration_size(parse_session_config(config)) + 4096)
    session = registry.create()
    session.configure(parse_session_config(config))
    with pytest.raises(MemoryBudgetExceeded, match="conversation step 'a'"):
        session.admit(chat("hi"))
    assert session.conversations.status() == [] and registry.memory.conversation_bytes == 0
    roomy = _registry(1 << 20)
    fits = roomy.create()
    fits.configure(parse_session_config(config))
    fits.complete(fits.admit(chat("hi")), chat("hi"))
    assert roomy.memory.conversation_bytes == sum(s.retained_bytes for s in fits.conversations.status()) > 0


def test_deleting_a_session_gives_its_memory_back() -> None:
    registry = _registry(1 << 20)
    session = registry.create()
    _entry(session.journal, "a")
    session.store.put("openai", "resp_1", object(), 1000)
    assert registry.memory.used_bytes > 1000
    registry.delete(session.id)
    assert registry.memory.report()["used_bytes"] == 0
    assert registry.memory.journal_entries == 0


def test_a_held_write_evicts_journal_entries_and_one_that_cannot_fit_keeps_them() -> None:
    size = _size()
    budget = MemoryBudget(4 * size)
    journal = Journal(budget=budget)
    for name in ("a", "b", "c"):
        _entry(journal, name)
    assert budget.hold(2 * size)  # a client that does not read: the oldest entry makes room
    assert _ids(journal) == ["b", "c"] and budget.used_bytes <= 4 * size
    assert budget.report()["held_write_bytes"] == 2 * size
    assert not budget.hold(5 * size)  # more than the budget even without journals: nothing evicted
    assert _ids(journal) == ["b", "c"] and budget.refused == 1
    budget.release(2 * size)
    assert budget.held_write_bytes == 0 and budget.used_bytes == budget.journal_bytes


def _texts(count: int, text: str = "an answer") -> dict[str, object]:
    return {"scenarios": [{"id": "s", "responses": [{"text": f"{text} {n}"} for n in range(count)]}]}


def test_a_configuration_is_charged_while_in_force_and_one_that_cannot_fit_changes_nothing() -> None:
    small, large = parse_session_config(_texts(2)), parse_session_config(_texts(400))
    # Priced per model and string, not per JSON byte: 400 short answers are held as 400 models and plans.
    assert configuration_size(large) > 400 * 2048 > 80 * len(large.model_dump_json())
    registry = _registry(configuration_size(small) + 64 * 1024)
    session = registry.create()
    session.configure(small)
    assert registry.memory.configuration_bytes == configuration_size(small)
    _entry(session.journal, "a")

    with pytest.raises(MemoryBudgetExceeded, match="the configuration") as raised:
        session.configure(large)
    assert (raised.value.http_status, raised.value.code) == (507, "llm_test_server_memory_exhausted")
    # Nothing changed: the small configuration is in force and charged, and the journal kept its entry
    # (what cannot fit even without journal entries evicts none).
    assert session.plan.configuration == small and _ids(session.journal) == ["a"]
    assert registry.memory.configuration_bytes == configuration_size(small) and registry.memory.refused == 1

    session.configure(parse_session_config(_texts(1)))  # smaller: gives the difference back
    assert registry.memory.configuration_bytes == configuration_size(parse_session_config(_texts(1)))
    session.reset()  # a reset keeps the configuration in force, and its charge
    assert registry.memory.configuration_bytes > 0
    registry.delete(session.id)
    assert registry.memory.configuration_bytes == 0 and registry.memory.used_bytes == 0


def test_the_size_walk_survives_json_deeper_than_the_recursion_limit() -> None:
    deep: object = "leaf"
    for _ in range(5000):
        deep = [deep]
    config = parse_session_config({"scenarios": [{"responses": [{"json": {"deep": deep}}]}]})
    assert configuration_size(config) > 5000 * 128


def test_a_reconfigure_counts_what_it_clears_and_takes_no_other_sessions_evidence_for_it() -> None:
    """What the session's own configure frees (its stored objects, its journal) makes room first: a
    configuration that fits once they are gone is accepted, and another session's older journal entry is
    not evicted for room this session's own state gives back."""
    small, large = parse_session_config(_texts(2)), parse_session_config(_texts(40))
    room, entry = configuration_size(large) - configuration_size(small), _size()
    registry = _registry(configuration_size(small) + room + 5 * entry + entry // 2)
    other = registry.create()
    _entry(other.journal, "older, another session's")
    session = registry.create()
    session.configure(small)
    for n in range(4):
        _entry(session.journal, f"own {n}")
    session.store.put("openai", "resp_1", object(), room)  # the budget is now nearly full
    assert registry.memory.used_bytes > registry.memory.max_bytes - entry
    assert registry.memory.evicted_entries == 0

    session.configure(large)  # fits once its own stored object and journal are cleared

    assert _ids(other.journal) == ["older, another session's"] and registry.memory.evicted_entries == 0
    assert registry.memory.configuration_bytes == configuration_size(large) and registry.memory.refused == 0
    assert registry.memory.store_bytes == 0 and session.plan.configuration == large


def test_a_reconfigure_that_needs_other_journals_evicts_them_only_after_its_own_state_went() -> None:
    small, large = parse_session_config(_texts(2)), parse_session_config(_texts(40))
    entry = _size()
    registry = _registry(configuration_size(large) + entry // 2)
    other = registry.create()
    _entry(other.journal, "theirs")
    session = registry.create()
    session.configure(small)
    _entry(session.journal, "own")

    session.configure(large)  # only room for it with every journal entry gone: theirs goes, counted

    assert _ids(other.journal) == [] and registry.memory.evicted_entries == 1
    assert registry.memory.used_bytes <= registry.memory.max_bytes
