"""The runtime side of the operations other than chat (docs/architecture.md, "Operations").

Each operation is one ``OperationUnit`` (``unit.py``) declared in its own module of this package: its
typed input, how its fixture compiles, its fit check, its generator and its input tokens. ``UNITS``
is built once, at import, from those declarations, in the order of the schema's ``OPERATIONS`` table;
a unit the table lacks or a row without a unit fails the import. The functions below are lookups in it.
Neutral: adapters build an ``OperationRequest`` carrying the operation's input and render the
``ScriptedOutput.result`` this package produces.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from llmts.errors import NoMatchingScenario
from llmts.runtime.operations.unit import OperationUnit, load_units
from llmts.schema.fixtures import ResponseFixture
from llmts.schema.neutral import NeutralRequest, OperationRequest, ScriptedOutput
from llmts.schema.operations import OPERATIONS

__all__ = [
    "DEFAULT_SEED",
    "UNITS",
    "OperationUnit",
    "check_result_fits",
    "compile_result",
    "content_frames",
    "generate",
    "operation_input_tokens",
]

# Generated answers of a session without ``determinism.seed`` use this seed, so they are stable too.
DEFAULT_SEED = "llmts"

UNITS: Mapping[str, OperationUnit[Any]] = load_units(
    __name__, __path__, OPERATIONS, ResponseFixture.model_fields
)


def _compilers() -> tuple[tuple[str, Callable[[Any], ScriptedOutput]], ...]:
    """(fixture field, its compiler) in table order; operations that share a fixture kind share it."""
    compilers: dict[str, Callable[[Any], ScriptedOutput]] = {}
    for unit in UNITS.values():
        compilers.setdefault(unit.fixture, unit.compile)
    return tuple(compilers.items())


_COMPILERS = _compilers()


def compile_result(fixture: ResponseFixture) -> ScriptedOutput | None:
    """The compiled answer of an operation fixture (None: the fixture is not one)."""
    for field, compile_fixture in _COMPILERS:
        value = getattr(fixture, field)
        if value is not None:
            return compile_fixture(value)
    return None


def generate(request: NeutralRequest, seed: str | None) -> ScriptedOutput:
    """The generated answer to an operation request no fixture owns."""
    unit = UNITS.get(request.operation)
    if unit is None or unit.generate is None or not isinstance(request, OperationRequest):
        raise NoMatchingScenario(
            f"no scenario of this session answers {request.operation} requests, and llmts generates "
            f"no {request.operation} answers; script one in a scenario with operation {request.operation!r}"
        )
    return unit.generate(request.input, seed or DEFAULT_SEED)


def check_result_fits(request: NeutralRequest, output: ScriptedOutput, where: str) -> None:
    """The operation's fit check: its fixture answers the request's input (one vector per text, of the
    dimension the request names; one moderation verdict or one per input; rerank indexes within the
    documents; one image per image asked for; the audio format asked for)."""
    if not isinstance(request, OperationRequest):
        return  # an explained request (POST /admin-api/match/explain) carries no inputs
    unit = UNITS.get(request.operation)
    if unit is not None:
        unit.fits(request.input, output, where, request.stream)


def content_frames(request: NeutralRequest, output: ScriptedOutput) -> int | None:
    """How many counted content frames the streamed answer of an operation has (None: not one that
    streams): partial images, transcript deltas or audio deltas."""
    if not isinstance(request, OperationRequest):
        return None
    unit = UNITS.get(request.operation)
    if unit is None or unit.content_frames is None:
        return None
    return unit.content_frames(request.input, output)


def operation_input_tokens(request: OperationRequest) -> int:
    """Input tokens of an operation request: its unit's count (texts and query by the chat estimate)."""
    return UNITS[request.operation].input_tokens(request.input)
