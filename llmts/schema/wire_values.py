"""Tests on values straight from a request body: membership, and how deep parsed JSON nests.

``value in frozenset(...)`` raises ``TypeError`` when a client sends an object or an array where a string
belongs (unhashable); that must be the provider's 400, never a 500. Parsers test wire values with
:func:`one_of`, which is false for anything but one of the names.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations are never evaluated at run time
    from typing_extensions import TypeIs

__all__ = ["MAX_JSON_NESTING", "nests_deeper", "one_of"]

# How deep client JSON may nest (objects and arrays): orjson reads about 1,024 levels but writes only about
# 254, and llmts echoes and journals what clients send, so deeper input is refused where it is parsed
# (JSON-RPC peers, realtime events).
MAX_JSON_NESTING = 64


def one_of(value: object, names: Collection[str]) -> TypeIs[str]:
    """Whether ``value`` is a string among ``names`` (false, never an error, for any other JSON value).

    Typed ``TypeIs[str]`` so that a parser's ``if not one_of(role, ROLES): raise ...`` leaves ``role`` a
    ``str``; the "false" branch is only ever a rejection, where the value's type no longer matters.
    """
    return isinstance(value, str) and value in names


def nests_deeper(value: object, limit: int = MAX_JSON_NESTING) -> bool:
    """Whether ``value`` nests objects and arrays deeper than ``limit`` (iterative: no recursion limit)."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Collection[object] = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False
