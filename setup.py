"""The optional compiled build; everything else about the package is in pyproject.toml.

``LLMTS_MYPYC=1`` compiles the request path's modules (setup.cfg, ``[llmts.compiled]``) with mypyc, which
comes with mypy: a quarter to a third less server CPU per request (docs/design/compiled.md). Without it
the package is pure Python; an editable install refuses it (a compiled module beside its source would
shadow every later edit). The build needs a C compiler and Python's headers::

    LLMTS_MYPYC=1 pip install .

mypyc type-checks what it compiles, so the build environment needs mypy and llmts's own dependencies:
they are this build's extra requirements (``setup_requires``, which pip installs into its isolated build
environment before the build itself runs).
"""

from __future__ import annotations

import configparser
import os
import sys
from pathlib import Path
from typing import Any

from setuptools import setup
from setuptools.command.build_ext import build_ext

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

    project = load_file(HERE / "pyproject.toml")["project"]
    mypy = [spec for spec in project["optional-dependencies"]["dev"] if spec.startswith("mypy")]
    return [*mypy, *project["dependencies"]]


def _ext_modules() -> list[Any]:
    if not COMPILED:
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        if "egg_info" in sys.argv:  # pip asking for the requirements above, before it installs them
            return []
        message = "LLMTS_MYPYC=1 needs mypy where llmts is built (pip's isolated build installs it)"
        raise SystemExit(message) from None
    return list(mypycify([*MYPYC_OPTIONS, *compiled_modules()], opt_level="3"))


class _RefusedWhenEditable(build_ext):
    """An editable install keeps the sources importable as they are edited: no compiled module beside them."""

    def run(self) -> None:
        if self.extensions and getattr(self, "editable_mode", False):
            raise SystemExit("LLMTS_MYPYC=1 does not apply to an editable install: pip install . instead")
        super().run()


if __name__ == "__main__":
    setup(
        ext_modules=_ext_modules(),
        setup_requires=_build_requires(),
        cmdclass={"build_ext": _RefusedWhenEditable},
    )
