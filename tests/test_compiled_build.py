"""The optional compiled build of the request path (docs/design/compiled.md).

In the default run these check the build's configuration and that the package is pure. Under
``python benchmarks/compiled.py test`` (``LLMTS_EXPECT_COMPILED=1``) the same tests check that the suite
really runs the compiled modules, in its own process and in the servers it starts, so a compiled run can
never pass on pure code by mistake.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import os
import runpy
import sys
from pathlib import Path

import pytest

from llmts import LlmTestServer

ROOT = Path(__file__).resolve().parent.parent
EXPECT_COMPILED = os.environ.get("LLMTS_EXPECT_COMPILED") == "1"


def _listed() -> list[str]:
    setup = runpy.run_path(str(ROOT / "setup.py"))  # not as __main__: defines, builds nothing
    modules: list[str] = setup["compiled_modules"]()
    return modules


def test_the_list_names_distinct_modules_of_the_package() -> None:
    listed = _listed()
    assert listed and len(listed) == len(set(listed))
    for path in listed:
        assert path.startswith("llmts/") and path.endswith(".py"), path
        assert (ROOT / path).is_file(), f"setup.cfg [llmts.compiled] lists {path}, which does not exist"


@pytest.mark.parametrize(
    "path",
    [
        # Its parts hold it through a WeakMethod; a compiled class has no weak references.
        "llmts/runtime/session.py",
        # WholeStream subclasses list, which mypyc compiles only with mypy_extensions' attribute.
        "llmts/transport/whole_stream.py",
    ],
)
def test_modules_mypyc_cannot_keep_as_they_are_stay_out(path: str) -> None:
    assert path not in _listed()


def test_without_the_variable_setup_builds_no_extension(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LLMTS_MYPYC", raising=False)
    setup = runpy.run_path(str(ROOT / "setup.py"))
    assert setup["_ext_modules"]() == []


def _loaded_compiled(dotted: str) -> bool:
    module = importlib.import_module(dotted)
    return str(module.__file__).endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))


def test_this_process_imports_every_listed_module_as_the_run_expects() -> None:
    for path in _listed():
        dotted = path.removesuffix(".py").replace("/", ".")
        assert _loaded_compiled(dotted) is EXPECT_COMPILED, (dotted, sys.modules[dotted].__file__)


def test_the_runs_server_reports_whether_its_request_path_is_compiled(llmts_server: LlmTestServer) -> None:
    assert llmts_server.process_stats()["compiled"] is EXPECT_COMPILED
