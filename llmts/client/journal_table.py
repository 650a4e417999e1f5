"""``journal_table``: a session's journal as a compact plain-text table, one row per request.

What ``llmts session journal`` prints and the pytest plugin's failure report shows (docs/cli.md,
docs/pytest-plugin.md): sequence, provider/operation, model, status, outcome, what answered, and the
latest user text and the answer, each shortened with ``…`` so a row fits the width. Entries are the JSON
objects ``GET /admin-api/requests`` returns; every field may be missing or odd (an older server, an
entry in progress), and the texts are client input, so they are cleaned of control characters and
measured by their display width (wide CJK and emoji count two columns, combining marks none).
Standard library only.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["journal_table"]

_HEADERS = ("#", "provider/operation", "model", "status", "outcome", "answered by", "prompt", "answer")
_GAP = "  "
# Between a scenario (or graph) and its step, and an MCP server and its tool, as the dashboard shows them.
_THEN = "\u203a"
_ELLIPSIS = "…"
# Widest a column is before the width is even considered: the short columns stay short, so prompt and
# answer get the room.
_CAPS = (8, 32, 28, 6, 40, 28, 240, 240)
# Narrowest a column is shrunk to when the width is tight (then the table is wider than asked).
_FLOORS = (1, 8, 6, 3, 6, 6, 8, 8)
_PROMPT, _ANSWER = 6, 7
# What prompt and answer need together before the other columns are narrowed to make room for them.
_TEXT_ROOM = 30

# An ANSI escape sequence (colours, cursor moves): dropped whole, not just its ESC.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")
# Bidirectional formatting characters reorder what a terminal shows (a spoofing trick): dropped.
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def journal_table(
    entries: Sequence[Mapping[str, Any]], *, width: int = 120, max_rows: int | None = None
) -> str:
    """The entries as a table of at most ``width`` display columns (wider only when even the narrowest
    columns do not fit), with a header row; oldest first by ``sequence``. ``max_rows`` keeps the last
    (most recent) rows and says how many earlier ones are left out: ``(N more not shown)``."""
    rows = [_row(entry) for entry in _in_order(entries)]
    if not rows:
        return "(no requests)"
    hidden = 0
    if max_rows is not None and len(rows) > max(max_rows, 0):
        hidden = len(rows) - max(max_rows, 0)
        rows = rows[hidden:]
    widths = _fit([_HEADERS, *rows], width)
    lines = [_line(_HEADERS, widths), _line(tuple("-" * w for w in widths), widths)]
    if hidden:
        lines.append(f"({hidden} more not shown)")
    lines.extend(_line(row, widths) for row in rows)
    return "\n".join(lines)


def _in_order(entries: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Oldest first (``GET /admin-api/requests`` answers newest first); as given when a sequence is
    missing."""
    kept = [entry for entry in entries if isinstance(entry, Mapping)]
    if all(isinstance(entry.get("sequence"), int) for entry in kept):
        return sorted(kept, key=lambda entry: int(entry["sequence"]))
    return kept


def _row(entry: Mapping[str, Any]) -> tuple[str, ...]:
    provider, operation = _text(entry.get("provider")), _text(entry.get("operation"))
    status = entry.get("status")
    return (
        _text(entry.get("sequence")),
        f"{provider}/{operation}" if provider and operation else provider or operation,
        _target(entry),
        "…" if status is None else _text(status),
        _outcome(entry),
        _answered_by(entry),
        _prompt(entry),
        _answer(entry),
    )


def _target(entry: Mapping[str, Any]) -> str:
    """The model, or for MCP and A2A requests the peer addressed (as the dashboard's journal shows it)."""
    server, tool, agent = entry.get("mcp_server"), entry.get("tool_name"), entry.get("a2a_agent")
    if server:
        return f"{_text(server)} {_THEN} {_text(tool)}" if tool else _text(server)
    if agent:
        return _text(agent)
    return _text(entry.get("model"))


def _outcome(entry: Mapping[str, Any]) -> str:
    if entry.get("completed") is False:
        return "in progress"
    close_code, error_code = entry.get("close_code"), entry.get("error_code")
    transport = entry.get("transport_outcome")
    if close_code is not None:
        outcome = f"closed {_text(close_code)}"
    elif error_code:
        outcome = _text(error_code)
    elif transport and transport != "completed":
        outcome = _text(transport)
    elif entry.get("success") is True:
        outcome = "ok"
    elif entry.get("success") is False:
        outcome = "failed"
    else:
        outcome = ""  # an entry without its verdict (an older server)
    retry_after = entry.get("retry_after_seconds")
    if isinstance(retry_after, int | float) and not isinstance(retry_after, bool):
        outcome += f" retry {retry_after:g}s"
    return outcome


def _answered_by(entry: Mapping[str, Any]) -> str:
    scenario, step, index = entry.get("scenario"), entry.get("step"), entry.get("response_index")
    if step:
        return f"{_text(scenario)} {_THEN} {_text(step)}" if scenario else _text(step)
    if scenario:
        return f"{_text(scenario)} #{_text(index)}" if index is not None else _text(scenario)
    if entry.get("forwarded"):
        return "upstream"
    return ""


def _prompt(entry: Mapping[str, Any]) -> str:
    """The latest user text; ``↩N`` first when the request sent N tool results back."""
    results = entry.get("tool_results")
    marker = f"↩{len(results)}" if isinstance(results, list) and results else ""
    return " ".join(part for part in (marker, _text(entry.get("prompt_text"))) if part)


def _answer(entry: Mapping[str, Any]) -> str:
    """The answer's text; ``⚒name`` first for each tool call it made (so shortening never hides them)."""
    calls = entry.get("response_tool_calls")
    markers = [
        "⚒" + _text(call.get("name"))
        for call in (calls if isinstance(calls, list) else ())
        if isinstance(call, Mapping)
    ]
    return " ".join(part for part in (*markers, _text(entry.get("answer_text"))) if part)


def _text(value: Any) -> str:
    """A value as one clean line: whitespace runs (newlines included) become one space, control and
    bidirectional formatting characters and ANSI escapes are dropped."""
    if value is None:
        return ""
    text = _ANSI.sub("", value if isinstance(value, str) else str(value))
    cleaned = []
    for char in text:
        if char.isspace():
            cleaned.append(" ")
        elif char in _BIDI or unicodedata.category(char) in ("Cc", "Cs", "Co"):
            continue
        else:
            cleaned.append(char)
    return " ".join("".join(cleaned).split())


def _char_width(char: str) -> int:
    if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def _width(text: str) -> int:
    return sum(_char_width(char) for char in text)


def _shorten(text: str, width: int) -> str:
    """``text`` cut to ``width`` display columns, ending in ``…`` when cut."""
    if _width(text) <= width:
        return text
    kept, used = [], 0
    for char in text:
        char_width = _char_width(char)
        if used + char_width > width - 1:
            break
        kept.append(char)
        used += char_width
    return "".join(kept).rstrip() + _ELLIPSIS


def _fit(rows: list[tuple[str, ...]], width: int) -> list[int]:
    """Column widths: each column's widest cell up to its cap; prompt and answer share what the other
    columns leave of ``width``. When that is less than ``_TEXT_ROOM``, the widest other column gives up
    a column at a time (down to its floor) first; the table is wider than ``width`` only when even the
    floors do not fit."""
    widths = [min(cap, max(_width(row[column]) for row in rows)) for column, cap in enumerate(_CAPS)]
    wanted = widths[_PROMPT] + widths[_ANSWER]
    available = width - len(_GAP) * (len(widths) - 1)
    room = min(wanted, _TEXT_ROOM)
    while available - (sum(widths) - wanted) < room:
        shrinkable = [c for c in range(_PROMPT) if widths[c] > _FLOORS[c]]
        if not shrinkable:
            break
        widths[max(shrinkable, key=lambda c: widths[c])] -= 1
    room = max(available - sum(widths[:_PROMPT]), _FLOORS[_PROMPT] + _FLOORS[_ANSWER])
    if wanted > room:  # each gets half, and what one does not need goes to the other
        half = room // 2
        prompt = max(_FLOORS[_PROMPT], min(widths[_PROMPT], max(half, room - widths[_ANSWER])))
        widths[_PROMPT], widths[_ANSWER] = prompt, max(_FLOORS[_ANSWER], room - prompt)
    return widths


def _line(cells: tuple[str, ...], widths: list[int]) -> str:
    parts = []
    for column, (cell, width) in enumerate(zip(cells, widths, strict=True)):
        shown = _shorten(cell, width)
        padding = " " * (width - _width(shown))
        parts.append(padding + shown if column in (0, 3) else shown + padding)  # numbers right-aligned
    return _GAP.join(parts).rstrip()
