"""What the run must do before pytest imports the plugins installed as entry points: loaded by
``-p llmts_tests_early`` in setup.cfg's ``addopts`` (``pythonpath = tests/early`` makes it importable that
early; this folder holds nothing else, so no other name comes into sys.path, and the checkout's root does
not either: a tox environment still imports the llmts it installed), so it runs in the controller, every
xdist worker and every process that reads this checkout's setup.cfg, before llmts, hypothesis, anyio and
pytest-xdist are imported (docs/design/test-suite.md, "Compiled code and the collector").

- Compiled code is cached even where the environment says not to (``PYTHONDONTWRITEBYTECODE``). pytest
  rewrites the asserts of the test modules and of every module of a distribution that declares a pytest
  plugin (hypothesis, anyio, pytest-xdist and platformdirs here; llmts too where pytest finds it on
  ``sys.path``: a wheel installed by tox, or ``python -m pytest`` in the checkout); without the cache every
  pytest process rewrites them again (0.6 s of CPU for the plugins' ~120 modules on the 2-core VM, 3.7 s
  for the test modules) and every server, CLI and inner pytest the suite starts recompiles llmts. The
  writes land only in this checkout's gitignored ``__pycache__`` folders and the environment's
  site-packages, atomically and checked against the source, and fail silently where either is read-only.
  The variable is removed for the processes the run starts, whose caches then serve inner runs too.
- The cyclic collector is off from here until collection ends (the hooks below turn it on again, in any
  run of this checkout, whatever it collects): the plugins' and the test modules' imports (the official
  SDKs among them) make about 350,000 objects that live as long as the process, and the full collections
  they trigger find only a few dozen cycles. What collection made moves to the permanent generation,
  where later full collections never look: the same boot as a server worker's
  (llmts/server/process/boot.py).
"""

from __future__ import annotations

import gc
import os
import sys

import pytest

__all__ = ["pytest_collection_finish", "pytest_sessionstart", "pytest_unconfigure"]

sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
gc.disable()


def pytest_sessionstart(session: pytest.Session) -> None:
    """An xdist controller collects nothing: its collector goes on again at once."""
    if session.config.pluginmanager.get_plugin("dsession") is not None:
        gc.enable()


def pytest_collection_finish(session: pytest.Session) -> None:
    """The collector on again, without collection's objects."""
    gc.freeze()
    gc.enable()


def pytest_unconfigure(config: pytest.Config) -> None:
    """On again in a run that never finished collecting (``--help``, ``--version``, an error before)."""
    gc.enable()
