"""``journal_table``: one row per request, every line within the width by display columns, texts cleaned
of what a terminal would act on, robust to missing fields, and the most recent rows kept by ``max_rows``.
Plain unit tests: a real journal's entries are in the CLI tests (tests/server/test_cli_session.py)."""

from __future__ import annotations

import unicodedata
from typing import Any

import pytest

from llmts.client.journal_table import journal_table

THEN = "\u203a"  # the right-pointing angle quote between a scenario and its step


def _display_width(line: str) -> int:
    return sum(
        0
        if unicodedata.combining(c) or unicodedata.category(c) in ("Mn", "Me", "Cf")
        else 2
        if unicodedata.east_asian_width(c) in ("W", "F")
        else 1
        for c in line
    )


def _entry(sequence: int, **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "sequence": sequence,
        "provider": "openai",
        "operation": "chat.completions",
        "model": "gpt-4.1-mini",
        "status": 200,
        "completed": True,
        "success": True,
        "transport_outcome": "completed",
        "scenario": "main",
        "response_index": sequence - 1,
        "prompt_text": f"question {sequence}",
        "answer_text": f"answer {sequence}",
    }
    return {**base, **fields}


def _rows(table: str) -> list[str]:
    """The data rows: after the header and its rule."""
    return table.splitlines()[2:]


def test_header_then_one_row_per_request_oldest_first() -> None:
    # GET /admin-api/requests answers newest first; the table reads top to bottom in time.
    table = journal_table([_entry(2), _entry(1)])

    header, rule, *rows = table.splitlines()
    assert header.split() == [
        "#",
        "provider/operation",
        "model",
        "status",
        "outcome",
        "answered",
        "by",
        "prompt",
        "answer",
    ]
    assert set(rule.replace(" ", "")) == {"-"}
    assert [row.split()[0] for row in rows] == ["1", "2"]
    assert rows[0].split() == [
        "1",
        "openai/chat.completions",
        "gpt-4.1-mini",
        "200",
        "ok",
        "main",
        "#0",
        "question",
        "1",
        "answer",
        "1",
    ]


def test_outcomes_name_what_went_wrong() -> None:
    entries = [
        _entry(1, success=False, transport_outcome="early_end"),
        _entry(2, success=False, transport_outcome="aborted"),
        _entry(3, status=429, success=False, error_code="rate_limit_exceeded", retry_after_seconds=2.0),
        _entry(4, status=503, success=False, error_code="service_unavailable", retry_after_seconds=1.5),
        _entry(5, operation="realtime", success=False, close_code=1011, transport_outcome="completed"),
        _entry(6, completed=False, success=None, status=None, transport_outcome=None),
        _entry(7, success=False, transport_outcome="completed"),
    ]

    rows = _rows(journal_table(entries, width=200))

    assert "early_end" in rows[0] and "aborted" in rows[1]
    assert "rate_limit_exceeded retry 2s" in rows[2]
    assert "service_unavailable retry 1.5s" in rows[3]
    assert "closed 1011" in rows[4]
    assert "in progress" in rows[5] and rows[5].split()[3] == "…"  # no status sent yet
    assert " failed " in rows[6]


def test_answered_by_names_the_graph_step_or_the_scenario_response() -> None:
    entries = [
        _entry(1, scenario="approval", step="ask", response_index=None),
        _entry(2, scenario="main", response_index=3),
        _entry(3, scenario=None, response_index=None, forwarded=True),
        _entry(4, scenario=None, response_index=None),
    ]

    rows = _rows(journal_table(entries, width=200))

    assert f"approval {THEN} ask" in rows[0]
    assert "main #3" in rows[1]
    assert "upstream" in rows[2]
    assert "#" not in rows[3].split(maxsplit=1)[1]


def test_tool_markers_come_first_so_shortening_never_hides_them() -> None:
    calls = [{"id": "c1", "name": "get_weather"}, {"id": "c2", "name": "get_time"}]
    entries = [
        _entry(1, answer_text="I will look that up for you right away, " * 5, response_tool_calls=calls),
        _entry(2, prompt_text="thanks " * 30, tool_results=[{"call_id": "c1"}, {"call_id": "c2"}]),
    ]

    rows = _rows(journal_table(entries, width=130))

    assert "⚒get_weather ⚒get_time I" in rows[0] and rows[0].endswith("…")
    assert "↩2 thanks" in rows[1]


def test_mcp_and_a2a_rows_name_the_peer() -> None:
    entries = [
        {
            "sequence": 1,
            "provider": "mcp",
            "operation": "tools/call",
            "mcp_server": "files",
            "tool_name": "search",
        },
        {"sequence": 2, "provider": "a2a", "operation": "SendMessage", "a2a_agent": "researcher"},
    ]

    rows = _rows(journal_table(entries))

    assert "mcp/tools/call" in rows[0] and f"files {THEN} search" in rows[0]
    assert "a2a/SendMessage" in rows[1] and "researcher" in rows[1]


@pytest.mark.parametrize("width", [60, 80, 120, 200])
def test_long_and_wide_texts_are_shortened_to_the_width(width: int) -> None:
    entries = [
        _entry(1, prompt_text="word " * 100, answer_text="語" * 200),
        _entry(2, prompt_text="🙂" * 150, answer_text="e\u0301" * 300),  # e + combining acute accent
        _entry(3, provider="azure-openai", operation="responses", model="a-very-long-deployment-name-" * 3),
    ]

    table = journal_table(entries, width=width)

    lines = table.splitlines()
    assert max(_display_width(line) for line in lines) <= width
    assert all(line.endswith("…") for line in _rows(table)[:2])  # each row's answer was cut
    assert "…" in _rows(table)[2]  # the long model name too


def test_the_narrowest_table_still_has_every_column() -> None:
    # Below what the columns' floors need, the table is wider than asked rather than losing columns.
    table = journal_table([_entry(1, prompt_text="x" * 50, answer_text="y" * 50)], width=10)

    row = _rows(table)[0]
    assert row.startswith("1  openai/")
    assert "xxxx" in row and row.endswith("…")


def test_newlines_collapse_and_control_characters_are_dropped() -> None:
    hostile = "line one\nline two\r\n\tindented\x00\x07 \x1b[31mred\x1b[0m \u202egnirts\u2066 end"

    table = journal_table([_entry(1, prompt_text=hostile, answer_text="ok\n\nthen")], width=200)

    row = _rows(table)[0]
    assert "line one line two indented red gnirts end" in row
    assert "ok then" in row
    assert all(c == " " or unicodedata.category(c)[0] != "C" for c in table.replace("\n", ""))
    assert "\x1b" not in table and "[31m" not in table


def test_missing_and_odd_fields_do_not_break_a_row() -> None:
    entries: list[Any] = [
        {},
        {"sequence": "7", "status": "200", "provider": None, "prompt_text": 42, "response_tool_calls": "x"},
        {"sequence": 3, "response_tool_calls": [None, {"id": "c"}], "tool_results": None},
        "not an entry",
    ]

    table = journal_table(entries)

    rows = _rows(table)
    assert len(rows) == 3  # the string is skipped; the others keep their given order (a sequence is odd)
    assert "42" in rows[1]
    assert "⚒" in rows[2]


def test_max_rows_keeps_the_most_recent_requests() -> None:
    entries = [_entry(n) for n in range(10, 0, -1)]  # newest first, as the server answers

    table = journal_table(entries, max_rows=3)

    lines = table.splitlines()
    assert lines[2] == "(7 more not shown)"
    assert [row.split()[0] for row in lines[3:]] == ["8", "9", "10"]
    assert "more not shown" not in journal_table(entries, max_rows=10)
    assert journal_table(entries, max_rows=0).splitlines()[2:] == ["(10 more not shown)"]


def test_no_entries() -> None:
    assert journal_table([]) == "(no requests)"
