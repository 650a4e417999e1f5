"""An inner pytest run in this process (``pytester.runpytest_inprocess``): the llmts plugin as installed,
without an interpreter start-up per run. Runs whose subject is pytest-xdist or the processes of a run stay
``runpytest_subprocess``."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from _pytest import pytester as _pytester

from tests.support.worker_zygote import SPEC_VARIABLE

__all__ = [
    "UNRELATED_PLUGINS",
    "attached_to",
    "run_in_process",
    "run_in_subprocess",
    "workers_from_the_zygote",
]

# Installed pytest plugins an inner run's subject does not involve: each loads in the run's controller and
# in every xdist worker it starts (anyio's and hypothesis's most of all), about 1 s of CPU per ``-n 2`` run
# of 4 s. The llmts plugin still loads through its entry point, as a user's run loads it.
UNRELATED_PLUGINS = (
    "-p",
    "no:anyio",
    "-p",
    "no:hypothesispytest",
    "-p",
    "no:timeout",
    "-p",
    "no:platformdirs",
)


# Module files given absolute, normalised once per process (a relative one depends on the working
# directory, so it is not kept): a restore asks about the same thousands of modules every run, and
# ``os.path.abspath`` was most of its cost.
_ABSOLUTE: dict[str, str] = {}


class _KeepLibraries(_pytester.SysModulesSnapshot):
    """pytester forgets every module an inner run imported. For a library (an SDK's HTTP client, first
    connecting inside the run) that would leave two copies of a lazily imported module, whose exception
    classes then differ from the ones the library's other modules catch: later tests in this process
    would see raw transport errors. So only the run's own modules (its files and conftests, under
    ``root``) are forgotten; libraries it loaded stay."""

    def __init__(self, root: Path) -> None:
        # A prefix test on the path as imported, not ``Path.resolve()`` per module: a restore asks about
        # every module in ``sys.modules`` (thousands in an xdist worker), ~0.5 s of CPU each time.
        prefixes = tuple({os.path.join(str(folder), "") for folder in (root, root.resolve())})

        def keep(name: str) -> bool:
            location = getattr(sys.modules.get(name), "__file__", None)
            if location is None:
                return False
            absolute = _ABSOLUTE.get(location)
            if absolute is None:
                absolute = os.path.abspath(location)
                if os.path.isabs(location):
                    _ABSOLUTE[location] = absolute
            return not absolute.startswith(prefixes)

        super().__init__(preserve=keep)


def attached_to(server: Any) -> list[str]:
    """The arguments of an in-process inner run (no xdist, no cache) attached to ``server`` (an
    ``LlmTestServer``: this run's, so its sessions are the outer test's to inspect), its control key
    included when it has one."""
    args = ["-p", "no:cacheprovider", "-p", "no:xdist", "--llmts-url", server.url]
    if server.control_key:
        args += ["--llmts-control-key", server.control_key]
    return args


def run_in_process(pytester: pytest.Pytester, *args: str, preload: tuple[str, ...] = ()) -> pytest.RunResult:
    """Run pytest on ``pytester``'s files with ``args``. The SDKs the inner tests use are imported here
    first (``preload``), once, instead of by every run. llmts is imported already, so pytest would warn
    that it cannot rewrite llmts's asserts: that warning is off."""
    for name in preload:
        importlib.import_module(name)
    # Both of pytester's snapshots: the one around the run and the one it restores at the test's end.
    root = pytester.path
    pytester._sys_modules_snapshot = _KeepLibraries(root)  # type: ignore[attr-defined]
    patch: Any = pytest.MonkeyPatch()
    patch.setattr(_pytester, "SysModulesSnapshot", lambda preserve=None: _KeepLibraries(root))
    try:
        return pytester.runpytest_inprocess("-W", "ignore::pytest.PytestAssertRewriteWarning", *args)
    finally:
        patch.undo()


def run_in_subprocess(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """``pytester.runpytest_subprocess`` without the ``UNRELATED_PLUGINS``, for runs whose subject is
    pytest-xdist or the run's own processes; its ``-n`` workers fork from this run's zygote when it has
    one (``workers_from_the_zygote``)."""
    return pytester.runpytest_subprocess(*UNRELATED_PLUGINS, *workers_from_the_zygote(args))


def workers_from_the_zygote(args: Sequence[str]) -> list[str]:
    """``-n N`` as ``--tx N*<this run's zygote>`` (with ``--dist load``, what ``-n`` implies), when this run
    has a zygote (tests/support/worker_zygote.py): an inner run's workers then fork from the process this
    run's workers came from, which has imported the SDKs, instead of each starting an interpreter that
    imports them (about 1.4 s of CPU each, 11 a run). Their subject (the plugin under xdist) is the same;
    how an xdist worker's process starts is the zygote's own tests' subject."""
    spec = os.environ.get(SPEC_VARIABLE)
    arguments = list(args)
    if not spec or "-n" not in arguments:
        return arguments
    at = arguments.index("-n")
    count = arguments[at + 1] if at + 1 < len(arguments) else ""
    if not count.isdigit() or int(count) == 0:  # -n 0 runs no worker
        return arguments
    arguments[at : at + 2] = ["--tx", f"{count}*{spec}"]
    if not any(argument == "--dist" or argument.startswith("--dist=") for argument in arguments):
        arguments += ["--dist", "load"]
    return arguments
