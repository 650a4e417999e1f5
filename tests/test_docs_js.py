"""docs/javascript.md's example is tests/js/example.mjs, which the Node suite runs (``tox -e js``)."""

from __future__ import annotations

from tests.test_docs import ROOT, code_blocks


def test_javascript_example_is_the_file_the_node_suite_runs() -> None:
    (block,) = [b for b in code_blocks(ROOT / "docs" / "javascript.md") if b.language == "js"]
    example = (ROOT / "tests" / "js" / "example.mjs").read_text(encoding="utf-8")
    assert block.source.strip() in example, "docs/javascript.md's example differs from tests/js/example.mjs"
