"""What an operation other than chat is to the runtime: one ``OperationUnit``, declared once in its own
module of this package (docs/architecture.md, "Operations").

A unit names its row of the schema's ``OPERATIONS`` table and brings everything the runtime does with
that operation: its typed input (``OperationInput`` subclass, built by the adapters), how its fixture
compiles, whether a compiled answer fits a request, its generator (None: the operation needs a scripted
answer), its input tokens and, for a streamed answer, how many content frames it has. ``load_units``
imports every module of the package and collects the units they declare; the import fails, naming the
unit or the row, unless the units and the table agree.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType, ModuleType
from typing import Any, Generic, TypeVar

from llmts.runtime.tokens import estimate_text_tokens
from llmts.schema.neutral import OperationInput, ScriptedOutput, build
from llmts.schema.operation_row import OperationResult
from llmts.schema.operations import CHAT_LIKE

__all__ = ["OperationUnit", "answer", "load_units", "text_tokens", "units_of"]

_I = TypeVar("_I", bound=OperationInput)


def answer(kind: str, result: OperationResult, output_tokens: int = 0) -> ScriptedOutput:
    """An operation's compiled or generated answer (``kind``: its fixture kind)."""
    return build(ScriptedOutput, kind=kind, result=result, output_tokens=output_tokens)


def text_tokens(value: OperationInput) -> int:
    """Input tokens by the chat estimate of the input's texts and query, without message framing."""
    return sum(estimate_text_tokens(text) for text in value.texts()) + estimate_text_tokens(
        value.query_text()
    )


@dataclass(frozen=True, slots=True)
class OperationUnit(Generic[_I]):
    """One operation's runtime half; ``name`` is its ``OPERATIONS`` row, ``fixture`` the
    ``ResponseFixture`` field (a fixture kind of that row) that scripts its answer."""

    name: str
    input_type: type[_I]
    fixture: str
    # Configure time: the validated fixture value -> the compiled answer.
    compile: Callable[[Any], ScriptedOutput]
    # Admission: raise ``FixtureMismatch`` (naming ``where``) when the answer cannot answer the input.
    fits: Callable[[_I, ScriptedOutput, str, bool], None]
    # The answer when no fixture owns the request, from the input and a seed (None: a fixture is needed).
    generate: Callable[[_I, str], ScriptedOutput] | None
    input_tokens: Callable[[_I], int] = text_tokens  # type: ignore[assignment]
    # A streamed answer's counted content frames (None: the operation does not stream).
    content_frames: Callable[[_I, ScriptedOutput], int | None] | None = None


def _declared_in(module: ModuleType) -> list[OperationUnit[Any]]:
    return [value for value in vars(module).values() if isinstance(value, OperationUnit)]


def units_of(
    modules: Iterable[ModuleType], table: Mapping[str, tuple[str, ...]], fixture_fields: Iterable[str]
) -> Mapping[str, OperationUnit[Any]]:
    """Operation name -> unit, in ``table`` order, from the units ``modules`` declare; raises
    ``RuntimeError`` naming the unit or the row when they and the table (every row but ``chat``) or the
    fixture's fields disagree."""
    fields = frozenset(fixture_fields)
    units: dict[str, OperationUnit[Any]] = {}
    for module in modules:
        for unit in _declared_in(module):
            if units.get(unit.name, unit) is not unit:
                raise RuntimeError(f"{module.__name__} declares a second unit of operation {unit.name!r}")
            kinds = table.get(unit.name)
            if kinds is None or unit.name in CHAT_LIKE:
                raise RuntimeError(
                    f"{module.__name__} declares a unit of operation {unit.name!r}, which the operation "
                    "table (llmts.schema.operations.OPERATIONS) does not have"
                )
            if unit.fixture not in kinds:
                raise RuntimeError(
                    f"{module.__name__}: operation {unit.name!r} is answered by fixture {unit.fixture!r}, "
                    f"which is not one of its table row's kinds ({', '.join(kinds)})"
                )
            if unit.fixture not in fields:
                raise RuntimeError(
                    f"{module.__name__}: operation {unit.name!r} is answered by fixture {unit.fixture!r}, "
                    "which is not a field of ResponseFixture (its registration line in "
                    "llmts/schema/fixtures.py)"
                )
            units[unit.name] = unit
    missing = [name for name in table if name not in CHAT_LIKE and name not in units]
    if missing:
        raise RuntimeError(
            f"no unit in llmts/runtime/operations/ declares the operation(s) {', '.join(missing)} of the "
            "operation table (llmts.schema.operations.OPERATIONS)"
        )
    return MappingProxyType({name: units[name] for name in table if name in units})


def load_units(
    package: str, path: Iterable[str], table: Mapping[str, tuple[str, ...]], fixture_fields: Iterable[str]
) -> Mapping[str, OperationUnit[Any]]:
    """Imports every module of ``package`` (at ``path``) and builds the registry from their units."""
    modules = [importlib.import_module(f"{package}.{info.name}") for info in pkgutil.iter_modules(path)]
    return units_of(modules, table, fixture_fields)
