"""Membership tests on values straight from a request body.

``value in frozenset(...)`` raises ``TypeError`` when a client sends an object or an array where a string
belongs (unhashable); that must be the provider's 400, never a 500. Parsers test wire values with
:func:`one_of`, which is false for anything but one of the names.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations are never evaluated at run time
    from typing_extensions import TypeIs

__all__ = ["one_of"]


def one_of(value: object, names: Collection[str]) -> TypeIs[str]:
    """Whether ``value`` is a string among ``names`` (false, never an error, for any other JSON value).

    Typed ``TypeIs[str]`` so that a parser's ``if not one_of(role, ROLES): raise ...`` leaves ``role`` a
    ``str``; the "false" branch is only ever a rejection, where the value's type no longer matters.
    """
    return isinstance(value, str) and value in names
