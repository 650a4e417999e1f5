"""The strict request contract: rules a real provider enforces on requests, as data.

Each provider package declares its rules as a table (a tuple of ``StrictRule``) and hands it to the
``InferenceRoute`` that serves the wire they apply to. The server runs a route's table after parsing and
before admission when the session's ``strict_requests`` is on (the default), so a rejected request is
journaled with the provider's own 400 and consumes nothing (docs/realistic-answers.md, "Strict request
contract"; docs/architecture.md, "The path of one request"). ``POST /admin-api/match/explain`` runs the
same tables on a wire body it is given.

A check reads the request body as the client sent it (the parsed JSON object): the rules are about wire
details (block order, ids, parameters) that the neutral request deliberately drops, and the session's
``SignatureBook`` (which reasoning signatures it issued). A rule with ``markers`` runs only when one of
those byte strings occurs in the raw body (``b'"tool'`` for tool-ordering rules), a memchr-speed test: a
long history without tool calls or thinking blocks is never walked. A body that spells its keys with JSON
escapes skips such a rule; no SDK writes one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from llmts.errors import StrictRequestRejected
from llmts.runtime.signatures import SignatureBook

__all__ = [
    "Bound",
    "OutOfRange",
    "RuleCheck",
    "StrictRule",
    "Violation",
    "check_strict",
    "out_of_range",
    "range_rule",
]


@dataclass(frozen=True, slots=True)
class Violation:
    """What a rule found: the provider's message, the field it is about (OpenAI ``param``) and, for a
    rule whose provider code depends on what was found (OpenAI's ``decimal_above_max_value`` vs
    ``integer_below_min_value``), that code instead of the rule's."""

    message: str
    param: str | None = None
    code: str | None = None


@dataclass(frozen=True, slots=True)
class Bound:
    """A numeric request parameter's published range: the key path in the body (``("inferenceConfig",
    "temperature")``), the inclusive ``low``/``high`` (``None``: unbounded that way) and whether the
    provider types it as an integer (OpenAI words the two differently)."""

    path: tuple[str, ...]
    low: float | None
    high: float | None
    integer: bool = False

    @property
    def name(self) -> str:
        return ".".join(self.path)


@dataclass(frozen=True, slots=True)
class OutOfRange:
    """The first bound a body breaks: the value as sent and which side it is on."""

    bound: Bound
    value: int | float
    above: bool


# A rule's check: the wire body and the session's signatures -> what is broken, or None.
RuleCheck = Callable[[dict[str, Any], SignatureBook], Violation | None]


@dataclass(frozen=True, slots=True)
class StrictRule:
    """One row: ``name`` (what the 400 names), ``check`` (body, the session's signatures -> a violation or
        None), the provider's error ``code`` (and ``error_type`` when it is not the provider's default for a
        400), ``source``: where the provider documents or shows the rule (listed in
        docs/realistic-answers.md), and ``markers``: byte strings of which the body must hold one for the rule
    to be broken (empty: the rule always runs)."""

    name: str
    check: RuleCheck
    code: str
    source: str
    error_type: str | None = None
    markers: tuple[bytes, ...] = ()


def check_strict(
    rules: tuple[StrictRule, ...], raw: bytes, body: dict[str, Any], signatures: SignatureBook
) -> None:
    """Raise the first broken rule's 400 (rules run in table order)."""
    for rule in rules:
        markers = rule.markers
        if markers:  # a plain loop: a generator per rule costs more than the scan (hot path)
            for marker in markers:
                if marker in raw:
                    break
            else:
                continue
        found = rule.check(body, signatures)
        if found is not None:
            raise StrictRequestRejected(
                f"{found.message} (llmts strict rule {rule.name}; strict_requests: false accepts it)",
                rule=rule.name,
                code=found.code or rule.code,
                error_type=rule.error_type,
                param=found.param,
            )


def out_of_range(body: dict[str, Any], bounds: tuple[Bound, ...]) -> OutOfRange | None:
    """The first of ``bounds`` (in order) whose number in ``body`` lies outside its range. Values that are
    not numbers are the parser's business (a wrong type), so they are skipped here."""
    for bound in bounds:
        value: Any = body
        for key in bound.path:
            value = value.get(key) if isinstance(value, dict) else None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        if bound.low is not None and value < bound.low:
            return OutOfRange(bound, value, False)
        if bound.high is not None and value > bound.high:
            return OutOfRange(bound, value, True)
    return None


def range_rule(
    bounds: tuple[Bound, ...], say: Callable[[OutOfRange], Violation], *, code: str, source: str
) -> StrictRule:
    """The rule ``parameter_out_of_range`` over ``bounds``, worded by the provider's ``say``. It takes no
    markers: one set test over the parsed body's keys costs less than scanning a large raw body once per
    key, and a body without any bounded key (most requests) is done with after it."""
    tops = frozenset(bound.path[0] for bound in bounds)

    def check(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
        if tops.isdisjoint(body):
            return None
        found = out_of_range(body, bounds)
        return None if found is None else say(found)

    return StrictRule("parameter_out_of_range", check, code=code, source=source)
