"""The optional compiled build; everything else about the package is in pyproject.toml.

``LLMTS_MYPYC=1`` compiles the request path's modules (setup.cfg, ``[llmts.compiled]``) with mypyc, which
comes with mypy: a quarter to a third less server CPU per request (docs/design/compiled.md). Without it,
or in an editable install, the package is pure Python. The build needs a C compiler and Python's headers::

    LLMTS_MYPYC=1 pip install .

mypyc type-checks what it compiles, so the build environment needs mypy and llmts's own dependencies:
they are this build's extra requirements (``setup_requires``, which pip installs into its isolated build
environment before the build itself runs).
"""

from __future__ import annotations

import configparser
import os
from pathlib import Path
from typing import Any

from setuptools import setup

HERE = Path(__file__).resolve().parent
COMPILED = os.environ.get("LLMTS_MYPYC") == "1"
# The compiled modules are checked strictly (setup.cfg's [mypy]); the rest of the package is only read for
# its types, so an optional import the build environment lacks (httpx, a2a-sdk, type stubs) is no error.
MYPYC_OPTIONS = ("--follow-imports=silent",)


def compiled_modules() -> list[str]:
    """The modules ``[llmts.compiled]`` names, as paths relative to this file."""
    config = configparser.ConfigParser()
    config.read(HERE / "setup.cfg")
    return config["llmts.compiled"]["modules"].split()


def _build_requires() -> list[str]:
    if not COMPILED:
        return []
    from setuptools.config.pyprojecttoml import load_file

    dependencies: list[str] = load_file(HERE / "pyproject.toml")["project"]["dependencies"]
    return ["mypy>=1.10", *dependencies]


def _ext_modules() -> list[Any]:
    if not COMPILED:
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:  # pip asking for the requirements above, before it installs them
        return []
    return list(mypycify([*MYPYC_OPTIONS, *compiled_modules()], opt_level="3"))


if __name__ == "__main__":
    setup(ext_modules=_ext_modules(), setup_requires=_build_requires())
