"""No import cycle inside ``llmts/schema`` (docs/architecture.md, "Layers"): every
``import`` counts, including those under ``if TYPE_CHECKING:`` and inside functions."""

from __future__ import annotations

import ast
from pathlib import Path

SCHEMA = Path(__file__).resolve().parents[2] / "llmts" / "schema"


def _module(path: Path) -> str:
    return path.stem


def _schema_imports(path: Path) -> set[str]:
    """The ``llmts/schema`` modules one file imports (absolute or relative, any nesting)."""
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = "llmts.schema" + (f".{base}" if base else "")
            names = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[:2] == ["llmts", "schema"] and len(parts) > 2 and (SCHEMA / f"{parts[2]}.py").exists():
                targets.add(parts[2])
    targets.discard(_module(path))
    return targets


def _graph() -> dict[str, set[str]]:
    return {_module(path): _schema_imports(path) for path in SCHEMA.glob("*.py") if path.stem != "__init__"}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every elementary cycle found by a depth-first search (each reported once, from its least node)."""
    found: list[list[str]] = []

    def visit(start: str, node: str, path: list[str]) -> None:
        for target in sorted(graph.get(node, ())):
            if target == start:
                found.append([*path, start])
            elif target > start and target not in path:
                visit(start, target, [*path, target])

    for start in sorted(graph):
        visit(start, start, [start])
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_the_known_edges() -> None:
    graph = _graph()
    assert "conversations" in graph["config"]  # SessionConfig holds graphs
    assert "fixtures" in graph["conversations"]  # graph steps answer with response fixtures
    assert "predicates" in graph["conversations"]  # StepWhen derives from the predicate table


def test_no_import_cycle_within_schema() -> None:
    assert _cycles(_graph()) == []
