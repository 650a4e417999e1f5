"""An inner pytest run in this process (``pytester.runpytest_inprocess``): the llmts plugin as installed,
without an interpreter start-up per run. Runs whose subject is pytest-xdist or the processes of a run stay
``runpytest_subprocess``."""

from __future__ import annotations

import importlib

import pytest

__all__ = ["run_in_process"]


def run_in_process(pytester: pytest.Pytester, *args: str, preload: tuple[str, ...] = ()) -> pytest.RunResult:
    """Run pytest on ``pytester``'s files with ``args``. pytester forgets the modules a run imported, so the
    SDKs the inner tests use are imported here first (``preload``), once, instead of by every run. llmts is
    imported already, so pytest would warn that it cannot rewrite llmts's asserts: that warning is off."""
    for name in preload:
        importlib.import_module(name)
    return pytester.runpytest_inprocess("-W", "ignore::pytest.PytestAssertRewriteWarning", *args)
