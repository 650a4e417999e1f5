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


def _varied_journal() -> Journal:
    """Attempts of two providers, several statuses, streams, retry groups, one still in progress (answered
    but not finished: its ``success`` is set on the record, unset in the entry)."""
    journal = Journal(JournalSettings(max_entries=40))
    for index in range(48):
        provider = "openai" if index % 3 else "anthropic"
        record = journal.begin(f"req_{index}", provider, "POST", "/x", 1_700_000_000.0 + index, float(index))
        record.identify(f"g{index % 4}" if index % 2 else None, None)
        operation = ("chat.completions", "messages", "embeddings", "models.list")[index % 4]
        family = {"models.list": None, "embeddings": "embeddings"}.get(operation, "chat")
        record.parsed(operation, model=f"m{index % 2}", streaming=index % 5 == 0, family=family)
        record.answered(200 if index % 7 else 429)
        if index % 7 == 0:
            record.failed("rate_limit_exceeded")
        if index != 45:
            record.finish(1_700_000_000.5 + index, index + 0.5)
        journal.settle(record)
    return journal


def test_querying_records_gives_exactly_what_querying_entries_gives() -> None:
    from datetime import datetime, timezone

    from llmts.runtime.journal_query import query_journal, run_query
    from llmts.schema.journal import JournalQuery

    journal = _varied_journal()
    queries = [
        JournalQuery(),
        JournalQuery(order="asc", limit=7, offset=3),
        JournalQuery(provider="anthropic"),
        JournalQuery(model="m1", streaming=False, order="asc"),
        JournalQuery(status=429),
        JournalQuery(success=True, limit=5),
        JournalQuery(success=False),
        JournalQuery(completed=False),
        JournalQuery(error_code="rate_limit_exceeded", order="asc"),
        JournalQuery(retry_group="g1"),
        JournalQuery(after=40, order="asc"),
        JournalQuery(after=44, success=True),
        JournalQuery(offset=100),
        JournalQuery(operation="chat"),  # the family: chat.completions and messages
        JournalQuery(operation="messages", order="asc"),
        JournalQuery(operation="embeddings"),
        JournalQuery(operation="models.list"),
        JournalQuery.model_validate(
            {
                "from": datetime.fromtimestamp(1_700_000_020.0, timezone.utc),
                "to": datetime.fromtimestamp(1_700_000_030.0, timezone.utc),
            }
        ),
    ]
    whole = journal.snapshot()
    for query in queries:
        fast, slow = query_journal(journal, query), run_query(whole, query)
        assert [e.public() for e in fast.entries] == [e.public() for e in slow.entries], query
        assert fast.total_matched == slow.total_matched, query
        assert (fast.snapshot.first_sequence, fast.snapshot.last_sequence) == (9, 48)
    assert query_journal(journal, JournalQuery(completed=False)).total_matched == 1
    chat = query_journal(journal, JournalQuery(operation="chat")).entries
    assert {e.operation for e in chat} == {"chat.completions", "messages"} and len(chat) == 20
    assert query_journal(journal, JournalQuery(success=True, completed=False)).entries == []


def test_evictions_say_whether_the_journal_or_the_process_budget_took_them() -> None:
    from llmts.schema.journal import JournalSettings

    journal = Journal(JournalSettings(max_entries=2))
    for index in range(4):
        journal.settle(journal.begin(f"req_{index}", "openai", "POST", "/x", 1_700_000_000.0, 0.0))
    assert journal.snapshot().eviction_causes() == "the journal's max_entries/max_bytes"
    assert journal.evict_oldest_for_budget() is not None
    snapshot = journal.snapshot()
    assert (snapshot.evicted, snapshot.evicted_by_budget) == (3, 1)
    assert snapshot.eviction_causes().startswith(
        "2 by the journal's max_entries/max_bytes, 1 by the server's"
    )
    journal.clear()
    assert journal.evict_oldest_for_budget() == 0  # empty: nothing taken, nothing counted
    assert journal.snapshot().evicted_by_budget == 0
