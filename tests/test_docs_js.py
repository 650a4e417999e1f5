"""docs/javascript.md's examples are the files the Node suite runs (``tox -e js``): tests/js/example.mjs and,
for realtime over TLS, tests/js/realtime-example.mjs."""

from __future__ import annotations

from tests.test_docs import ROOT, code_blocks


def test_javascript_examples_are_the_files_the_node_suite_runs() -> None:
    first, realtime = [b for b in code_blocks(ROOT / "docs" / "javascript.md") if b.language == "js"]
    example = (ROOT / "tests" / "js" / "example.mjs").read_text(encoding="utf-8")
    assert first.source.strip() in example, "docs/javascript.md's example differs from tests/js/example.mjs"
    example = (ROOT / "tests" / "js" / "realtime-example.mjs").read_text(encoding="utf-8")
    assert realtime.source.strip() in example, (
        "docs/javascript.md's realtime example differs from tests/js/realtime-example.mjs"
    )
