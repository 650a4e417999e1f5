"""The optional extra ``llmts[media]`` (PyAV and Pillow): imported on first use, inside the worker, so an
idle server never loads them; without them a request for a format that needs them is a clear 501
(docs/architecture.md, "Hand-written code and why")."""

from __future__ import annotations

import importlib
from types import ModuleType

from llmts.errors import EncoderMissing

__all__ = ["MEDIA_EXTRA", "media_module"]

MEDIA_EXTRA = "llmts[media]"


def media_module(module: str, package: str, what: str, param: str) -> ModuleType:
    """``module`` of the ``media`` extra, or ``EncoderMissing`` naming the extra (``what`` is the format
    asked for, ``param`` the request field that asked)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise EncoderMissing(
            f"llmts encodes {what} with {package}, which is not installed where the llmts server runs: "
            f"pip install '{MEDIA_EXTRA}' (or ask for a format llmts writes itself, or script the bytes "
            "in a fixture)",
            param=param,
        ) from None
