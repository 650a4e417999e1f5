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

__all__ = ["StrictRule", "Violation", "check_strict"]


@dataclass(frozen=True, slots=True)
class Violation:
    """What a rule found: the provider's message and the field it is about (OpenAI ``param``)."""

    message: str
    param: str | None = None


@dataclass(frozen=True, slots=True)
class StrictRule:
    """One row: ``name`` (what the 400 names), ``check`` (body, the session's signatures -> a violation or
        None), the provider's error ``code`` (and ``error_type`` when it is not the provider's default for a
        400), ``source``: where the provider documents or shows the rule (listed in
        docs/realistic-answers.md), and ``markers``: byte strings of which the body must hold one for the rule
    to be broken (empty: the rule always runs)."""

    name: str
    check: Callable[[dict[str, Any], SignatureBook], Violation | None]
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
                code=rule.code,
                error_type=rule.error_type,
                param=found.param,
            )
