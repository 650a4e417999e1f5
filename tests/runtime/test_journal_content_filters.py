"""The content filters of a journal query (``has_tool_results``, ``tool_result_contains``) give one answer on
live records, on entries and in ``unmet_filters`` (what the nearest-request report lists), and the report
of what came closest stays bounded (docs/journal.md, "Querying", "What came closest")."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from llmts.runtime.journal import Journal, JournalRecord
from llmts.runtime.journal_query import matches, query_journal, record_matches, run_query, unmet_filters
from llmts.runtime.verify_nearest import (
    NEAREST_REQUESTS,
    SENT_ITEMS,
    SHOWN_CHARS,
    nearest_requests,
    sent_items,
)
from llmts.schema.journal import QUERY_TEXT_CHARS, JournalQuery
from llmts.schema.verify_report import detail_lines

# The tool results each request sends back: none, one, two.
RESULTS: list[tuple[tuple[str, str | None, str, bool], ...]] = [
    (),
    (("call_1", "get_weather", '{"sky": "clear"}', False),),
    (("call_1", "get_weather", '{"sky": "clear"}', False), ("call_2", None, "plain text: rain", False)),
]


def _journal(live: list[JournalRecord] | None = None) -> Journal:
    """Six finished requests (two models, each sending none, one or two results); ``live`` gets the
    records themselves."""
    journal = Journal()
    for index, results in enumerate(RESULTS * 2):
        record = journal.begin(f"req_{index}", "openai", "POST", "/x", 1_700_000_000.0 + index, float(index))
        record.parsed("chat", model="m0" if index < len(RESULTS) else "m1")
        record.answered(200)
        record.tool_results = results
        record.finish(1_700_000_000.5 + index, index + 0.5)
        journal.settle(record)
        if live is not None:
            live.append(record)
    return journal


QUERIES: list[dict[str, Any]] = [
    {"has_tool_results": True},
    {"has_tool_results": False},
    {"tool_result_contains": "clear"},
    {"tool_result_contains": "rain"},
    {"tool_result_contains": "Rain"},
    {"tool_result_contains": '"sky"', "has_tool_results": False},
    {"tool_result_contains": "rain", "model": "m1"},
]


@pytest.mark.parametrize("filters", QUERIES)
def test_records_entries_and_unmet_filters_agree(filters: dict[str, Any]) -> None:
    live: list[JournalRecord] = []
    journal = _journal(live)
    query = JournalQuery(order="asc", **filters)
    fast, slow = query_journal(journal, query), run_query(journal.snapshot(), query)
    assert [e.public() for e in fast.entries] == [e.public() for e in slow.entries]
    entries = journal.snapshot().entries
    assert [record_matches(record, query) for record in live] == [matches(e, query) for e in entries]
    for entry in entries:
        assert matches(entry, query) == (not unmet_filters(entry, query)), (filters, entry.sequence)


def test_what_each_filter_selects() -> None:
    journal = _journal()

    def sequences(**filters: Any) -> list[int]:
        return [e.sequence for e in query_journal(journal, JournalQuery(order="asc", **filters)).entries]

    assert sequences(has_tool_results=True) == [2, 3, 5, 6]
    assert sequences(has_tool_results=False) == [1, 4]
    assert sequences(tool_result_contains="rain") == [3, 6]
    assert sequences(tool_result_contains="Rain") == []  # case-sensitive
    assert sequences(tool_result_contains='{"sky"') == [2, 3, 5, 6]


def test_unmet_filters_name_each_failed_filter_with_the_entrys_value() -> None:
    first = _journal().snapshot().entries[0]
    query = JournalQuery(model="m1", has_tool_results=True, tool_result_contains="x", after=3)
    assert [(u.name, u.wanted, u.actual) for u in unmet_filters(first, query)] == [
        ("model", "m1", "m0"),
        ("has_tool_results", True, 0),
        ("tool_result_contains", "x", []),
        ("after", 3, 1),
    ]


def test_the_filter_text_is_bounded() -> None:
    JournalQuery(tool_result_contains="x" * QUERY_TEXT_CHARS)
    for text in ("", "x" * (QUERY_TEXT_CHARS + 1)):
        with pytest.raises(ValidationError):
            JournalQuery(tool_result_contains=text)


def test_the_report_of_what_came_closest_is_bounded() -> None:
    journal = Journal()
    long = "y" * (SHOWN_CHARS * 3)
    for index in range(10):
        record = journal.begin(f"req_{index}", "openai", "POST", "/x", 1_700_000_000.0, float(index))
        record.tool_results = tuple((f"c{n}", "f", long, False) for n in range(SENT_ITEMS + 3))
        record.finish(1_700_000_000.5, index + 0.5)
        journal.settle(record)
    entries = list(journal.snapshot().entries)
    nearest = nearest_requests(entries, JournalQuery(tool_result_contains="z"))
    assert len(nearest) == NEAREST_REQUESTS
    shown = nearest[0]["unmet"][0]["actual"]
    assert len(shown) == SENT_ITEMS and {len(item["content"]) for item in shown} == {SHOWN_CHARS}

    judged = [((f"c{n}", "f", long), ["result"] * (n % 3)) for n in range(SENT_ITEMS + 3)]
    sent = sent_items("result", judged)
    assert sent["sent_count"] == SENT_ITEMS + 3 and len(sent["sent"]) == SENT_ITEMS
    assert [len(item["mismatched"]) for item in sent["sent"]] == [0, 0, 0, 1, 1]  # closest first
    lines = detail_lines({"found": 3, **sent})
    assert (
        lines[0]
        == f"    the request sent back {SENT_ITEMS + 3} tool result(s), the {SENT_ITEMS} closest shown:"
    )
    assert all(len(line) < SHOWN_CHARS + 60 for line in lines)
    assert detail_lines(3) == [] and detail_lines({"found": 3}) == []
