"""The repository's Markdown documents as tests read them: their headings, and a section by its heading
(fenced code is skipped, so a ``#`` comment in a shell block is no heading)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

__all__ = ["ROOT", "doc_section", "doc_table", "headings"]

ROOT = Path(__file__).resolve().parents[2]

_HEADING = re.compile(r"(#{1,6}) (.+)")
_FENCE = re.compile(r" *(`{3,}|~{3,})")


def _lines_outside_code(text: str) -> Iterator[tuple[int, str, bool]]:
    """(index, line, whether it is outside fenced code) for each line of ``text``."""
    fence: str | None = None  # the open fence: a closing one is the same character, at least as long
    for index, line in enumerate(text.splitlines()):
        found = _FENCE.match(line)
        marker = found.group(1) if found is not None else ""
        if fence is None and marker:
            fence = marker
        elif fence is not None and marker[:1] == fence[0] and len(marker) >= len(fence):
            fence = None
        else:
            yield index, line, fence is None
            continue
        yield index, line, False


def headings(path: Path) -> list[str]:
    """The titles of a document's headings, in order."""
    text = path.read_text(encoding="utf-8")
    return [
        found.group(2).strip()
        for _, line, outside in _lines_outside_code(text)
        if outside and (found := _HEADING.fullmatch(line))
    ]


def doc_table(document: str, header: str) -> list[list[str]]:
    """The rows of the table of ``document`` (a path under the repository) whose header line starts with
    ``header``: each row's cells, stripped, the header and its rule left out (a ``\\|`` inside a cell
    splits it too)."""
    text = (ROOT / document).read_text(encoding="utf-8")
    assert header in text, f"{document} has no table {header!r}"
    block = text.split(header, 1)[1].split("\n\n", 1)[0]
    return [[cell.strip() for cell in row.strip().strip("|").split("|")] for row in block.splitlines()[2:]]


def doc_section(document: str, heading: str) -> str:
    """The section of ``document`` (a path under the repository, ``docs/configuration.md``) that
    ``heading`` opens (written with its ``#``s: ``"### Predicates"``), heading line included, up to the next
    heading of its level or a higher one."""
    level = len(heading) - len(heading.lstrip("#"))
    text = (ROOT / document).read_text(encoding="utf-8")
    lines = text.splitlines()
    start: int | None = None
    for index, line, outside in _lines_outside_code(text):
        if not outside or (found := _HEADING.fullmatch(line)) is None:
            continue
        if start is None:
            start = index if line == heading else None
        elif len(found.group(1)) <= level:
            return "\n".join(lines[start:index])
    assert start is not None, f"{document} has no heading {heading!r}"
    return "\n".join(lines[start:])
