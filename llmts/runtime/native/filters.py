"""The file-search attribute filter language: parse (400 naming the field) and evaluate (exact decimals).

* ``eq``/``ne`` compare a scalar of the same kind: string, finite number or boolean.
* ``gt gte lt lte`` order strings by code point and numbers numerically; booleans cannot be ordered.
* ``in``/``nin`` take a nonempty homogeneous array of strings or of numbers.
* A missing attribute or one of another kind matches nothing, not even ``ne``/``nin``.
* ``and``/``or`` need all/any child to match. The root is depth 1; depth <= 8, <= 128 nodes in the tree,
  and arrays (members, children) hold <= 128 entries.

Numbers arrive as ``Decimal`` from the request's JSON literal (``numbers.parse_exact_json``).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from llmts.errors import InvalidRequest
from llmts.schema.native import NATIVE_REQUEST_LIMITS, FilterNode, FilterValue
from llmts.schema.wire_values import one_of

__all__ = ["COMPARISONS", "COMPOUNDS", "filter_matches", "parse_filter"]

COMPARISONS = frozenset({"eq", "ne", "gt", "gte", "lt", "lte", "in", "nin"})
COMPOUNDS = frozenset({"and", "or"})
_ORDERING = frozenset({"gt", "gte", "lt", "lte"})
_MAX_DEPTH = NATIVE_REQUEST_LIMITS["filter_depth"]
_MAX_NODES = NATIVE_REQUEST_LIMITS["filter_nodes"]
_MAX_ENTRIES = NATIVE_REQUEST_LIMITS["filter_entries"]
_MAX_KEY = 64


def _bad(message: str, param: str, code: str = "invalid_value") -> InvalidRequest:
    return InvalidRequest(message, code=code, param=param)


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Decimal):
        return "number"
    return "other"


def _scalar(value: Any, param: str) -> str | bool | Decimal:
    if _kind(value) == "other":
        raise _bad("value must be a string, a finite number or a boolean", param, "invalid_type")
    if isinstance(value, Decimal) and not value.is_finite():
        raise _bad("value must be a finite number", param)
    result: str | bool | Decimal = value
    return result


def _members(value: Any, param: str) -> FilterValue:
    if not isinstance(value, list) or not value:
        raise _bad("in/nin need a nonempty array of strings or of numbers", param, "invalid_type")
    if len(value) > _MAX_ENTRIES:
        raise _bad(f"in/nin arrays have at most {_MAX_ENTRIES} entries", param)
    kinds = {_kind(member) for member in value}
    if kinds == {"string"}:
        return tuple(value)
    if kinds == {"number"}:
        for position, member in enumerate(value):
            _scalar(member, f"{param}[{position}]")
        return tuple(value)
    raise _bad(
        "in/nin arrays must hold only strings or only numbers (no booleans, nulls or mixed kinds)",
        param,
        "invalid_type",
    )


def _unknown(raw: dict[str, Any], allowed: frozenset[str], param: str) -> None:
    for key in raw:
        if key not in allowed:
            raise _bad(f"Unknown parameter: '{param}.{key}'.", f"{param}.{key}", "unknown_parameter")


_COMPARISON_FIELDS = frozenset({"type", "key", "value"})
_COMPOUND_FIELDS = frozenset({"type", "filters"})


class _Parser:
    __slots__ = ("nodes",)

    def __init__(self) -> None:
        self.nodes = 0

    def node(self, raw: Any, param: str, depth: int) -> FilterNode:
        if depth > _MAX_DEPTH:
            raise _bad(f"filters nest at most {_MAX_DEPTH} levels deep", param)
        self.nodes += 1
        if self.nodes > _MAX_NODES:
            raise _bad(f"a filter tree has at most {_MAX_NODES} nodes", param)
        if not isinstance(raw, dict):
            raise _bad("a filter must be an object", param, "invalid_type")
        op = raw.get("type")
        if one_of(op, COMPOUNDS):
            _unknown(raw, _COMPOUND_FIELDS, param)
            children = raw.get("filters")
            if not isinstance(children, list):
                raise _bad(f"an {op} filter needs a filters array", f"{param}.filters", "invalid_type")
            if len(children) > _MAX_ENTRIES:
                raise _bad(f"a compound filter has at most {_MAX_ENTRIES} filters", f"{param}.filters")
            return FilterNode(
                str(op),
                children=tuple(
                    self.node(child, f"{param}.filters[{i}]", depth + 1) for i, child in enumerate(children)
                ),
            )
        if not one_of(op, COMPARISONS):
            raise _bad(
                "filter type must be one of eq, ne, gt, gte, lt, lte, in, nin, and, or", f"{param}.type"
            )
        _unknown(raw, _COMPARISON_FIELDS, param)
        key = raw.get("key")
        if not isinstance(key, str) or not key.strip() or len(key) > _MAX_KEY:
            raise _bad(f"key must be a nonblank string of at most {_MAX_KEY} characters", f"{param}.key")
        if "value" not in raw:
            raise _bad("a comparison filter needs value", f"{param}.value", "missing_required_parameter")
        raw_value = raw["value"]
        value: FilterValue
        if op in ("in", "nin"):
            value = _members(raw_value, f"{param}.value")
        else:
            value = _scalar(raw_value, f"{param}.value")
            if op in _ORDERING and isinstance(value, bool):
                raise _bad(f"{op} cannot order booleans", f"{param}.value", "invalid_type")
        return FilterNode(str(op), key=key, value=value)


def parse_filter(raw: Any, param: str) -> FilterNode | None:
    """``raw`` is the filter as exact JSON (numbers are ``Decimal``); None/absent means no filter."""
    if raw is None:
        return None
    return _Parser().node(raw, param, 1)


def _compare(op: str, actual: Any, expected: Any) -> bool:
    if op == "eq":
        return bool(actual == expected)
    if op == "ne":
        return bool(actual != expected)
    if op == "gt":
        return bool(actual > expected)
    if op == "gte":
        return bool(actual >= expected)
    if op == "lt":
        return bool(actual < expected)
    return bool(actual <= expected)


def filter_matches(node: FilterNode, attributes: dict[str, str | bool | Decimal] | None) -> bool:
    if node.op == "and":
        return all(filter_matches(child, attributes) for child in node.children)
    if node.op == "or":
        return any(filter_matches(child, attributes) for child in node.children)
    if attributes is None or node.key not in attributes:
        return False
    actual = attributes[node.key]
    kind = _kind(actual)
    if node.op in ("in", "nin"):
        members = node.value
        assert isinstance(members, tuple)
        if kind != _kind(members[0]):
            return False
        found = any(actual == member for member in members)
        return found if node.op == "in" else not found
    if kind != _kind(node.value):
        return False
    return _compare(node.op, actual, node.value)
