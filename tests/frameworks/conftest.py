"""Framework suites: popular LLM frameworks driven against a real llmts server (docs/frameworks.md).

Each module needs its framework installed and skips with the tox environment to run otherwise (the
frameworks pin conflicting SDK majors, so each has its own environment: ``tox -e fw-langchain`` ...).
Every test here carries the ``frameworks`` marker (``pytest -m frameworks``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

_HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _HERE in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.frameworks)
