"""Copies of llmts with the request path compiled by mypyc: for the benchmarks, and for the test suite.

The compiled build (setup.py, ``LLMTS_MYPYC=1``; docs/design/compiled.md) compiles the modules setup.cfg
lists under ``[llmts.compiled]``. This does the same, with setup.py's own list and options, in a
throwaway copy, never in the checkout: a compiled module beside its source would shadow every later edit
of that source.

    python benchmarks/compiled.py test -n auto          # the suite against a compiled copy of this tree
    python benchmarks/compiled.py test tests/server     # part of it

``compare.py --compiled`` and ``run.py --compiled`` serve from a compiled copy (benchmarks/README.md,
"A compiled request path"). Needs mypy (the ``dev`` extra) and a C compiler with the Python headers.
"""

from __future__ import annotations

import contextlib
import os
import runpy
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

__all__ = ["compile_tree", "compiled_checkout", "compiled_copy", "worktree"]

REPO = Path(__file__).resolve().parent.parent


def _build_settings(tree: Path) -> dict[str, Any]:
    """``tree``'s setup.py read, not run: its module list and mypyc options are the compiled build's."""
    if not (tree / "setup.py").is_file():
        raise SystemExit(f"{tree} has no setup.py: a tree from before the compiled build (2026-12-03)")
    return runpy.run_path(str(tree / "setup.py"))


def compile_tree(tree: Path) -> None:
    """Compile ``tree``'s listed modules in place (about two minutes of one CPU), as its setup.py does."""
    mypyc = shutil.which("mypyc", path=str(Path(sys.executable).parent)) or shutil.which("mypyc")
    if mypyc is None:
        raise SystemExit("mypyc not found: pip install -e '.[dev]' (it comes with mypy)")
    settings = _build_settings(tree)
    modules: list[str] = settings["compiled_modules"]()
    print(f"compiling {len(modules)} modules with mypyc in {tree} ...", file=sys.stderr, flush=True)
    # mypyc builds through setuptools, which reads the project's pyproject.toml from the working directory
    # (and an older setuptools refuses its license field): set aside while the extensions build in place.
    project = tree / "pyproject.toml"
    aside = tree / "pyproject.toml.aside"
    project.rename(aside)
    try:
        done = subprocess.run(
            [mypyc, *settings["MYPYC_OPTIONS"], *modules], cwd=tree, capture_output=True, text=True
        )
    finally:
        aside.rename(project)
    if done.returncode != 0:
        raise SystemExit(f"mypyc failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}")


@contextlib.contextmanager
def worktree(revision: str) -> Iterator[Path]:
    """A detached worktree of ``revision``, removed afterwards (however the caller ends)."""
    where = Path(tempfile.mkdtemp(prefix="llmts-worktree-")) / "tree"
    try:
        add = ["git", "-C", str(REPO), "worktree", "add", "--detach", "--quiet", str(where), revision]
        subprocess.run(add, check=True)
        yield where
    finally:
        subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(where)], check=False)
        shutil.rmtree(where.parent, ignore_errors=True)
        subprocess.run(["git", "-C", str(REPO), "worktree", "prune"], check=False)


@contextlib.contextmanager
def compiled_checkout(revision: str) -> Iterator[Path]:
    """A worktree of ``revision``, compiled; removed afterwards."""
    with worktree(revision) as where:
        compile_tree(where)
        yield where


@contextlib.contextmanager
def compiled_copy() -> Iterator[Path]:
    """A copy of this working tree (its tracked and untracked files, not what git ignores), compiled;
    removed afterwards."""
    listed = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    where = Path(tempfile.mkdtemp(prefix="llmts-compiled-")) / "tree"
    try:
        for name in filter(None, (entry.decode() for entry in listed)):
            source = REPO / name
            if source.is_file():
                target = where / name
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target)
        compile_tree(where)
        yield where
    finally:
        shutil.rmtree(where.parent, ignore_errors=True)


def main(argv: Sequence[str]) -> int:
    if not argv or argv[0] != "test":
        print(__doc__)
        return 2
    with compiled_copy() as tree:
        # The copy comes first on sys.path (pytest's rootdir) and in every server the suite starts.
        # LLMTS_EXPECT_COMPILED: tests/test_compiled_build.py checks that the run imports compiled modules.
        env = {**os.environ, "PYTHONPATH": str(tree), "LLMTS_EXPECT_COMPILED": "1"}
        return subprocess.run([sys.executable, "-m", "pytest", *argv[1:]], cwd=tree, env=env).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
