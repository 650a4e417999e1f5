"""Copies of llmts with the request path compiled by mypyc: for the benchmarks, and for the test suite.

The compiled build (setup.py, ``LLMTS_MYPYC=1``; docs/design/compiled.md) compiles the modules setup.cfg
lists under ``[llmts.compiled]``. This does the same in a throwaway copy, never in the checkout: a
compiled module beside its source would shadow every later edit of that source.

    python benchmarks/compiled.py test -n auto          # the suite against a compiled copy of this tree
    python benchmarks/compiled.py test tests/server     # part of it

``compare.py --compiled`` and ``run.py --compiled`` serve from a compiled copy (benchmarks/README.md,
"A compiled request path"). Needs mypy (the ``dev`` extra) and a C compiler with the Python headers.
"""

from __future__ import annotations

import configparser
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

__all__ = ["compile_tree", "compiled_checkout", "compiled_copy", "compiled_modules"]

REPO = Path(__file__).resolve().parent.parent


def compiled_modules(tree: Path = REPO) -> list[str]:
    """The modules setup.cfg's ``[llmts.compiled]`` names, relative to ``tree``."""
    config = configparser.ConfigParser()
    config.read(tree / "setup.cfg")
    if not config.has_option("llmts.compiled", "modules"):
        raise SystemExit(f"{tree / 'setup.cfg'} lists no [llmts.compiled] modules (a tree before 2026-12-03)")
    return config["llmts.compiled"]["modules"].split()


def compile_tree(tree: Path) -> None:
    """Compile ``tree``'s listed modules in place (about two minutes of one CPU), as setup.py does."""
    mypyc = shutil.which("mypyc", path=str(Path(sys.executable).parent)) or shutil.which("mypyc")
    if mypyc is None:
        raise SystemExit("mypyc not found: pip install -e '.[dev]' (it comes with mypy)")
    modules = compiled_modules(tree)
    print(f"compiling {len(modules)} modules with mypyc in {tree} ...", file=sys.stderr, flush=True)
    # mypyc builds through setuptools, which reads the project's pyproject.toml from the working directory
    # (and an older setuptools refuses its license field): set aside while the extensions build in place.
    project = tree / "pyproject.toml"
    aside = tree / "pyproject.toml.aside"
    project.rename(aside)
    try:
        done = subprocess.run(
            [mypyc, "--follow-imports=silent", *modules], cwd=tree, capture_output=True, text=True
        )
    finally:
        aside.rename(project)
    if done.returncode != 0:
        raise SystemExit(f"mypyc failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}")


@contextlib.contextmanager
def compiled_checkout(revision: str) -> Iterator[Path]:
    """A detached worktree of ``revision``, compiled; removed afterwards."""
    where = Path(tempfile.mkdtemp(prefix="llmts-compiled-")) / "tree"
    try:
        add = ["git", "-C", str(REPO), "worktree", "add", "--detach", "--quiet", str(where), revision]
        subprocess.run(add, check=True)
        compile_tree(where)
        yield where
    finally:
        subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(where)], check=False)
        shutil.rmtree(where.parent, ignore_errors=True)
        subprocess.run(["git", "-C", str(REPO), "worktree", "prune"], check=False)


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
