"""Server events as bytes, and the refusal of a bad client event in the service's own words.

Every event is a JSON object ``{"type", "event_id", ...}``; ``EventError`` is how the parsers stop at the
first problem of a client event, and becomes one ``error`` event (``type`` ``invalid_request_error``,
``code``, ``message``, ``param`` and the client's ``event_id``) that changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

import orjson

__all__ = [
    "Emitter",
    "EventError",
    "check_keys",
    "describe",
    "invalid_type",
    "one_of",
    "optional",
    "optional_str",
    "require",
    "require_int",
    "require_str",
    "too_long",
]


class EventError(Exception):
    """A client event the service would refuse: its ``error`` event's code, message and param."""

    def __init__(self, message: str, code: str = "invalid_value", param: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.param = param


class Emitter:
    """Builds server events with fresh ``event_...`` ids from the connection's id source."""

    __slots__ = ("_new_id",)

    def __init__(self, new_id: Callable[[str], str]) -> None:
        self._new_id = new_id

    def new_id(self, prefix: str) -> str:
        return self._new_id(prefix)

    def event(self, kind: str, **fields: Any) -> bytes:
        return orjson.dumps({"type": kind, "event_id": self._new_id("event"), **fields})

    def error(
        self,
        message: str,
        *,
        code: str | None,
        param: str | None = None,
        event_id: str | None = None,
        error_type: str = "invalid_request_error",
    ) -> bytes:
        error = {"type": error_type, "code": code, "message": message, "param": param, "event_id": event_id}
        return self.event("error", error=error)

    def refusal(self, problem: EventError, event_id: str | None) -> bytes:
        return self.error(problem.message, code=problem.code, param=problem.param, event_id=event_id)


_TYPE_NAMES = {
    bool: "a boolean",
    int: "an integer",
    float: "a number",
    str: "a string",
    list: "an array",
    dict: "an object",
    type(None): "null",
}


def describe(value: Any) -> str:
    """How the service names a JSON value's type in its messages (``an integer``, ``an object``...)."""
    return _TYPE_NAMES.get(type(value), "a value")


def _invalid_type(param: str, expected: str, value: Any) -> EventError:
    return EventError(
        f"Invalid type for '{param}': expected {expected}, but got {describe(value)} instead.",
        "invalid_type",
        param,
    )


def check_keys(raw: dict[str, Any], allowed: Collection[str], prefix: str) -> None:
    """Refuse a key the API does not know (the service answers ``unknown_parameter``)."""
    for key in raw:
        if key not in allowed:
            param = f"{prefix}.{key}" if prefix else key
            raise EventError(f"Unknown parameter: '{param}'.", "unknown_parameter", param)


def require(raw: dict[str, Any], key: str, prefix: str) -> Any:
    value = raw.get(key)
    if value is None:
        param = f"{prefix}.{key}" if prefix else key
        raise EventError(f"Missing required parameter: '{param}'.", "missing_required_parameter", param)
    return value


def _param(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def require_str(raw: dict[str, Any], key: str, prefix: str, max_chars: int | None = None) -> str:
    value = require(raw, key, prefix)
    return _string(value, _param(prefix, key), max_chars)


def optional(raw: dict[str, Any], key: str, prefix: str, kind: type | tuple[type, ...], expected: str) -> Any:
    """``raw[key]`` when present and not null, checked against ``kind`` (booleans are not integers)."""
    value = raw.get(key)
    if value is None:
        return None
    if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        raise _invalid_type(_param(prefix, key), expected, value)
    if not isinstance(value, kind):
        raise _invalid_type(_param(prefix, key), expected, value)
    return value


def optional_str(raw: dict[str, Any], key: str, prefix: str, max_chars: int | None = None) -> str | None:
    value = raw.get(key)
    return None if value is None else _string(value, _param(prefix, key), max_chars)


def require_int(raw: dict[str, Any], key: str, prefix: str, minimum: int = 0) -> int:
    value = require(raw, key, prefix)
    param = _param(prefix, key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise _invalid_type(param, "an integer", value)
    if value < minimum:
        raise EventError(
            f"Invalid '{param}': integer below minimum value. Expected a value >= {minimum}, but got "
            f"{value} instead.",
            "integer_below_min_value",
            param,
        )
    return value


def _string(value: Any, param: str, max_chars: int | None) -> str:
    if not isinstance(value, str):
        raise _invalid_type(param, "a string", value)
    if max_chars is not None and len(value) > max_chars:
        raise too_long(param, max_chars, len(value))
    return value


def too_long(param: str, max_chars: int, length: int) -> EventError:
    return EventError(
        f"Invalid '{param}': string too long. Expected a string with maximum length {max_chars}, but got a "
        f"string with length {length} instead.",
        "string_above_max_length",
        param,
    )


def invalid_type(param: str, expected: str, value: Any) -> EventError:
    return _invalid_type(param, expected, value)


def one_of(value: Any, allowed: tuple[str, ...], param: str) -> str:
    """``value`` when it is one of ``allowed`` (strings), else the service's ``invalid_value``."""
    if isinstance(value, str) and value in allowed:
        return value
    if not isinstance(value, str):
        raise _invalid_type(param, "a string", value)
    names = [f"'{name}'" for name in allowed]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    raise EventError(f"Invalid value: '{value}'. Supported values are: {listed}.", "invalid_value", param)
