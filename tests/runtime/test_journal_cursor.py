"""``Journal.snapshot(after)``: the cursor the dashboard polls with converts only the newer records and
keeps the whole journal's counters (docs/journal.md, "Querying")."""

from __future__ import annotations

from llmts.runtime.journal import Journal, JournalRecord
from llmts.schema.journal import JournalSettings


def _fill(journal: Journal, count: int) -> list[JournalRecord]:
    records = []
    for index in range(count):
        record = journal.begin(f"req_{index}", "openai", "POST", "/openai/v1/chat/completions", 0.0, 0.0)
        record.finish(1.0, 1.0)
        journal.settle(record)
        records.append(record)
    return records


def test_snapshot_after_holds_only_the_newer_entries_and_the_whole_journals_counters() -> None:
    journal = Journal(JournalSettings(max_entries=5))
    _fill(journal, 8)  # sequences 4..8 retained, 3 evicted
    whole = journal.snapshot()
    tail = journal.snapshot(after=6)
    assert [entry.sequence for entry in whole.entries] == [4, 5, 6, 7, 8]
    assert [entry.sequence for entry in tail.entries] == [7, 8]
    for snapshot in (whole, tail):
        assert (snapshot.first_sequence, snapshot.last_sequence) == (4, 8)
        assert (snapshot.total_observed, snapshot.evicted, snapshot.retained_entries) == (8, 3, 5)
        assert snapshot.retained_bytes == whole.retained_bytes
    assert journal.snapshot(after=8).entries == ()
    assert [e.sequence for e in journal.snapshot(after=2).entries] == [4, 5, 6, 7, 8]  # before the first


def test_counters_match_the_snapshot() -> None:
    journal = Journal(JournalSettings(max_entries=3))
    _fill(journal, 4)
    snapshot = journal.snapshot()
    assert journal.counters() == (3, snapshot.retained_bytes, 4, 1)
    journal.clear()
    assert journal.counters() == (0, 0, 0, 0)
    assert Journal().snapshot().first_sequence is None
