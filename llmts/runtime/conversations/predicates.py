"""Step predicates, compiled once per step, evaluated against a ``RequestView`` built once per request.

Everything reads the *final* normalized message (``tool_result`` reads the final run of tool results, so
parallel results can each be matched); nothing searches older user text. Text comparisons are ordinal
(plain ``==`` / ``in`` on code points). JSON comparisons are structural: key order is irrelevant, ``1``
equals ``1.0``, ``true`` never equals ``1``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from llmts.schema.conversations import StepWhen
from llmts.schema.json_path import PathSegment, parse_json_path
from llmts.schema.neutral import NeutralMessage, NeutralRequest, NeutralToolCall

__all__ = ["Predicate", "RequestView", "compile_when", "json_equal", "logical_turn", "resolve_path"]

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

    def trailing_tool_results(self) -> list[NeutralMessage]:
        results = []
        for message in reversed(self.messages):
            if message.role != "tool":
                break
            results.append(message)
        results.reverse()
        return results


@dataclass(frozen=True, slots=True)
class Predicate:
    """One ``when`` field: its name (as configured, for explanations and errors) and its test."""

    field: str
    test: Callable[[RequestView], bool]


def _latest_role(expected: str) -> Callable[[RequestView], bool]:
    return lambda view: view.latest is not None and view.latest.role == expected


def _latest_text_contains(needle: str) -> Callable[[RequestView], bool]:
    return lambda view: view.latest is not None and needle in view.latest.text


def _latest_user_contains(needle: str) -> Callable[[RequestView], bool]:
    return lambda view: view.latest is not None and view.latest.role == "user" and needle in view.latest.text


def _latest_user_equals(expected: str) -> Callable[[RequestView], bool]:
    return lambda view: (
        view.latest is not None and view.latest.role == "user" and view.latest.text == expected
    )


def _turn(expected: int) -> Callable[[RequestView], bool]:
    return lambda view: view.turn == expected


def _tool_result(name: str, call_id: str | None, arguments: Any = _MISSING) -> Callable[[RequestView], bool]:
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


def _latest_json(path: str, expected: tuple[Any, ...]) -> Callable[[RequestView], bool]:
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


def compile_when(when: StepWhen) -> tuple[Predicate, ...]:
    """The step's predicates in a fixed order (cheap checks first)."""
    predicates: list[Predicate] = []
    if when.turn is not None:
        predicates.append(Predicate("turn", _turn(when.turn)))
    if when.latest_role is not None:
        predicates.append(Predicate("latest_role", _latest_role(when.latest_role)))
    if when.latest_user_equals is not None:
        predicates.append(Predicate("latest_user_equals", _latest_user_equals(when.latest_user_equals)))
    if when.latest_user_contains is not None:
        predicates.append(Predicate("latest_user_contains", _latest_user_contains(when.latest_user_contains)))
    if when.latest_text_contains is not None:
        predicates.append(Predicate("latest_text_contains", _latest_text_contains(when.latest_text_contains)))
    if when.tool_result is not None:
        name, call_id = when.tool_result.name, when.tool_result.call_id
        predicates.append(Predicate("tool_result", _tool_result(name, call_id)))
        if when.has_tool_arguments:
            arguments = _tool_result(name, call_id, when.tool_arguments_json)
            predicates.append(Predicate("tool_arguments_json", arguments))
    if when.latest_json is not None:
        match = when.latest_json
        predicates.append(
            Predicate("latest_json", _latest_json(match.path, _expected_json_options(match.expected_json)))
        )
    if when.latest_json_value is not None:
        value_match = when.latest_json_value
        predicates.append(
            Predicate("latest_json_value", _latest_json(value_match.path, (value_match.value,)))
        )
    return tuple(predicates)
