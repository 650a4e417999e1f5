"""Step predicates, compiled once per step, evaluated against a ``RequestView`` built once per request.

Message predicates read the *final* normalized message (``tool_result`` reads the final run of tool
results, so parallel results can each be matched); nothing searches older user text. Request predicates
read what the request declares: its system prompt / instructions (``system_contains``) and its tools
(``declares_tool``). Text comparisons are ordinal (plain ``==`` / ``in`` on code points). JSON comparisons
are structural: key order is irrelevant, ``1`` equals ``1.0``, ``true`` never equals ``1``.

Each compiler declares the predicate it compiles, ``@compiles("turn")``, by the name of its row in the
schema's table (``llmts.schema.predicates.PREDICATES``); ``COMPILERS`` is derived from those declarations
at import, which fails unless they and the table name the same predicates.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import FunctionType, MappingProxyType
from typing import Any, TypeVar

import orjson

from llmts.schema.conversations import StepWhen
from llmts.schema.json_path import PathSegment, parse_json_path
from llmts.schema.neutral import NeutralMessage, NeutralRequest, NeutralToolCall
from llmts.schema.predicates import (
    PATTERN_TIMEOUT_SECONDS,
    PREDICATES,
    JsonPathMatch,
    JsonPathValueMatch,
    PredicateSpec,
    ToolResultMatch,
)

__all__ = [
    "COMPILERS",
    "Check",
    "Compiler",
    "Predicate",
    "RequestView",
    "compile_when",
    "compilers_of",
    "compiles",
    "json_equal",
    "logical_turn",
    "resolve_path",
]

_MISSING: Any = object()
_IGNORED_ROLES = frozenset({"system", "developer"})


def logical_turn(messages: tuple[NeutralMessage, ...]) -> int:
    """1 + the number of runs of consecutive assistant messages (system/developer messages skipped).

    Parallel tool calls are one assistant message (adapters merge them), and HTTP attempts add nothing:
    the turn depends only on the history the client sends.
    """
    groups = 0
    in_assistant = False
    for message in messages:
        role = message.role
        if role in _IGNORED_ROLES:
            continue
        if role == "assistant":
            if not in_assistant:
                groups += 1
            in_assistant = True
        else:
            in_assistant = False
    return groups + 1


def json_equal(left: Any, right: Any) -> bool:
    """JSON structural equality (booleans are not numbers; integers equal floats of the same value)."""
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if isinstance(left, int | float) and isinstance(right, int | float):
        return left == right
    if isinstance(left, dict):
        return (
            isinstance(right, dict)
            and left.keys() == right.keys()
            and all(json_equal(value, right[key]) for key, value in left.items())
        )
    if isinstance(left, list):
        return (
            isinstance(right, list)
            and len(left) == len(right)
            and all(json_equal(a, b) for a, b in zip(left, right, strict=True))
        )
    return type(left) is type(right) and left == right


def resolve_path(document: Any, segments: tuple[PathSegment, ...]) -> Any:
    """The value at ``segments`` or ``_MISSING``."""
    value = document
    for segment in segments:
        if segment.kind == "key":
            if not isinstance(value, dict) or segment.name not in value:
                return _MISSING
            value = value[segment.name]
        elif segment.kind == "index":
            if not isinstance(value, list) or segment.index >= len(value):
                return _MISSING
            value = value[segment.index]
        elif isinstance(value, dict):
            if segment.name not in value:
                return _MISSING
            value = value[segment.name]
        elif isinstance(value, list):
            if not 0 <= segment.index < len(value):
                return _MISSING
            value = value[segment.index]
        else:
            return _MISSING
    return value


def _parse_json(text: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return _MISSING


class RequestView:
    """What predicates read from one request; derived values are computed on first use."""

    __slots__ = ("_calls", "_latest_json", "latest", "messages", "request", "turn")

    def __init__(self, request: NeutralRequest) -> None:
        self.request = request
        self.messages = request.messages
        self.latest: NeutralMessage | None = request.messages[-1] if request.messages else None
        self.turn = logical_turn(request.messages)
        self._latest_json: Any = None
        self._calls: dict[str, NeutralToolCall] | None = None

    @property
    def latest_json(self) -> Any:
        """The final message's text as JSON, or ``_MISSING`` when it is not JSON."""
        if self._latest_json is None:
            self._latest_json = _parse_json(self.latest.text) if self.latest is not None else _MISSING
        return self._latest_json

    def call(self, call_id: str | None) -> NeutralToolCall | None:
        """The assistant tool call with this id in the history (the latest one if ids repeat)."""
        if call_id is None:
            return None
        if self._calls is None:
            self._calls = {
                call.id: call
                for message in self.messages
                if message.role == "assistant"
                for call in message.tool_calls
            }
        return self._calls.get(call_id)

    def system_texts(self) -> list[str]:
        """The request's system prompt / instructions: the provider's top-level field (Anthropic
        ``system``, Gemini ``systemInstruction``) and every system or developer message (OpenAI Chat,
        Responses ``instructions`` and input)."""
        texts = [self.request.system] if self.request.system else []
        texts.extend(m.text for m in self.messages if m.role in _IGNORED_ROLES)
        return texts

    def trailing_tool_results(self) -> list[NeutralMessage]:
        results = []
        for message in reversed(self.messages):
            if message.role != "tool":
                break
            results.append(message)
        results.reverse()
        return results


Check = Callable[["RequestView"], bool]


@dataclass(frozen=True, slots=True)
class Predicate:
    """One ``when`` field: its name (as configured, for explanations and errors) and its test."""

    field: str
    test: Check


# A compiler gets the configured value and the whole ``when`` (for keys that refine another, like
# ``tool_arguments_json``) and returns the check, once, at configure time.
Compiler = Callable[[Any, StepWhen], Check]
_C = TypeVar("_C", bound=Compiler)
# The attribute ``compiles`` sets on a compiler: the name of the predicate it compiles.
_COMPILES = "__llmts_predicate__"


def compiles(predicate: str) -> Callable[[_C], _C]:
    """Declares the decorated function the compiler of ``predicate``, a row of the schema's table
    (``llmts.schema.predicates.PREDICATES``); the function is returned unchanged."""

    def declare(compiler: _C) -> _C:
        setattr(compiler, _COMPILES, predicate)
        return compiler

    return declare


@compiles("latest_role")
def _latest_role(expected: str, when: StepWhen) -> Check:
    return lambda view: view.latest is not None and view.latest.role == expected


@compiles("latest_text_contains")
def _latest_text_contains(needle: str, when: StepWhen) -> Check:
    return lambda view: view.latest is not None and needle in view.latest.text


@compiles("latest_user_contains")
def _latest_user_contains(needle: str, when: StepWhen) -> Check:
    return lambda view: view.latest is not None and view.latest.role == "user" and needle in view.latest.text


@compiles("latest_user_equals")
def _latest_user_equals(expected: str, when: StepWhen) -> Check:
    return lambda view: (
        view.latest is not None and view.latest.role == "user" and view.latest.text == expected
    )


@compiles("turn")
def _turn(expected: int, when: StepWhen) -> Check:
    return lambda view: view.turn == expected


@compiles("declares_tool")
def _declares_tool(name: str, when: StepWhen) -> Check:
    return lambda view: name in view.request.tool_names


@compiles("system_contains")
def _system_contains(needle: str, when: StepWhen) -> Check:
    """Each system text on its own (a needle never spans two of them)."""
    return lambda view: any(needle in text for text in view.system_texts())


@compiles("latest_text_matches")
def _latest_text_matches(pattern: str, when: StepWhen) -> Check:
    """Compiled here, at configure time; a search that runs out of time fails the predicate."""
    import regex  # on first use: only graphs with a pattern need it (~1.5 MB resident)

    compiled = regex.compile(pattern)

    def test(view: RequestView) -> bool:
        if view.latest is None:
            return False
        try:
            return compiled.search(view.latest.text, timeout=PATTERN_TIMEOUT_SECONDS) is not None
        except TimeoutError:
            return False

    return test


def _tool_call_matches(name: str, call_id: str | None, arguments: Any = _MISSING) -> Check:
    """A trailing tool result answers a call of ``name`` (with ``call_id``); with ``arguments``, that
    call's arguments also equal them structurally."""

    def test(view: RequestView) -> bool:
        for result in view.trailing_tool_results():
            if call_id is not None and result.tool_call_id != call_id:
                continue
            call = view.call(result.tool_call_id)
            if call is None or call.name != name:
                continue
            if arguments is _MISSING:
                return True
            actual = _parse_json(call.arguments)
            if actual is not _MISSING and json_equal(actual, arguments):
                return True
        return False

    return test


@compiles("tool_result")
def _tool_result(match: ToolResultMatch, when: StepWhen) -> Check:
    return _tool_call_matches(match.name, match.call_id)


@compiles("tool_arguments_json")
def _tool_arguments_json(arguments: Any, when: StepWhen) -> Check:
    match = when.value_of("tool_result")
    assert isinstance(match, ToolResultMatch)  # the schema requires tool_result beside it
    return _tool_call_matches(match.name, match.call_id, arguments)


def _path_equals(path: str, expected: tuple[Any, ...]) -> Check:
    segments = parse_json_path(path)

    def test(view: RequestView) -> bool:
        document = view.latest_json
        if document is _MISSING:
            return False
        actual = resolve_path(document, segments)
        return actual is not _MISSING and any(json_equal(actual, option) for option in expected)

    return test


def _expected_json_options(expected: Any) -> tuple[Any, ...]:
    """A string ``expected_json`` matches itself, and the value it encodes when it is JSON text."""
    if isinstance(expected, str):
        decoded = _parse_json(expected)
        if decoded is not _MISSING:
            return (expected, decoded)
    return (expected,)


@compiles("latest_json")
def _latest_json(match: JsonPathMatch, when: StepWhen) -> Check:
    return _path_equals(match.path, _expected_json_options(match.expected_json))


@compiles("latest_json_value")
def _latest_json_value(match: JsonPathValueMatch, when: StepWhen) -> Check:
    return _path_equals(match.path, (match.value,))


def compilers_of(functions: Iterable[object], table: Sequence[PredicateSpec]) -> Mapping[str, Compiler]:
    """Predicate name -> compiler, in ``table`` (evaluation) order, from the functions ``compiles``
    declared; raises ``RuntimeError`` naming the predicate when they and the table disagree."""
    names = {spec.name for spec in table}
    declared: dict[str, Compiler] = {}
    for function in functions:
        if not isinstance(function, FunctionType) or _COMPILES not in function.__dict__:
            continue
        name = function.__dict__[_COMPILES]
        if name not in names:
            raise RuntimeError(
                f"{function.__qualname__} compiles the predicate {name!r}, which the predicate table "
                "(llmts.schema.predicates.PREDICATES) does not have"
            )
        if declared.setdefault(name, function) is not function:
            raise RuntimeError(
                f"{declared[name].__qualname__} and {function.__qualname__} both compile {name!r}"
            )
    missing = [spec.name for spec in table if spec.name not in declared]
    if missing:
        raise RuntimeError(
            f"no function declares itself the compiler (@compiles) of the predicate(s) {', '.join(missing)} "
            "of the predicate table (llmts.schema.predicates.PREDICATES)"
        )
    return MappingProxyType({spec.name: declared[spec.name] for spec in table})


# The compiled half of the predicate table, built once at import from this module's ``@compiles``
# functions: importing fails unless they and ``PREDICATES`` name the same predicates.
COMPILERS: Mapping[str, Compiler] = compilers_of(list(globals().values()), PREDICATES)


def compile_when(when: StepWhen) -> tuple[Predicate, ...]:
    """The step's configured predicates, compiled, in the table's order (cheap checks first)."""
    return tuple(Predicate(name, COMPILERS[name](value, when)) for name, value in when.predicates())
