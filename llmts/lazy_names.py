"""Public names a package loads on first use (PEP 562), so that importing one of its modules does not
import every module its ``__init__`` names: ``llmts`` and ``llmts.schema`` (docs/design/memory.md, "The
two processes' import sets")."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from importlib import import_module
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(
    namespace: dict[str, Any], homes: Mapping[str, Sequence[str]], public: Sequence[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level ``__getattr__`` and ``__dir__`` of the package whose ``globals()`` is
    ``namespace``: a name ``homes`` lists under a module is imported from it on first use and kept there.
    Assigned under ``if not TYPE_CHECKING``, so that mypy, which sees the names' own imports, still
    flags a misspelled one."""
    package = namespace["__name__"]
    home_of = {name: home for home, names in homes.items() for name in names}

    def __getattr__(name: str) -> Any:
        home = home_of.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(home), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *public})

    return __getattr__, __dir__
