"""Exact numbers for file-search filters: decimals from JSON literals, never binary floats.

``Decimal`` compares exactly (``1E-29 < 2E-29``, ``1e2 == 100 == 100.0``, ``-0 == 0``) without
expanding exponents. A request's filter numbers come from its JSON text (``parse_exact_json``); a
fixture's from its configuration text, or from a Python float's shortest round-trip repr.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

__all__ = ["exact_number", "exact_scalar", "parse_exact_json"]


def exact_number(value: int | float | Decimal) -> Decimal:
    if isinstance(value, Decimal):
        return value
    if isinstance(value, int):
        return Decimal(value)
    return Decimal(repr(value))


def exact_scalar(value: Any) -> str | bool | Decimal:
    """A fixture attribute as filters see it (strings and booleans as they are, numbers exact)."""
    if isinstance(value, (str, bool)):
        return value
    return exact_number(value)


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not a finite JSON number")


def parse_exact_json(body: bytes) -> Any:
    """The JSON document with every number as the ``Decimal`` of its literal."""
    return json.loads(body, parse_float=Decimal, parse_int=Decimal, parse_constant=_no_constants)
