"""Cohere v2 chat request rules for the strict request contract (``llmts/providers/strict.py``).

v2 pairs tool results with tool calls by ``tool_call_id`` (Cohere's v1-to-v2 migration guide, "tool call
id"; its tool use guide sends one ``tool`` message per call right after the assistant's ``tool_calls``),
and answers a history that breaks the pairing with 400, which ``cohere`` raises as ``BadRequestError``.
Cohere does not publish the wording of these errors; the messages follow its ``invalid request: ...``
form. docs/realistic-answers.md lists each rule with its source.
"""

from __future__ import annotations

from typing import Any

from llmts.providers.strict import Bound, OutOfRange, StrictRule, Violation, range_rule
from llmts.providers.tool_messages import messages_of, orphan_tool_result, unanswered_tool_calls
from llmts.runtime.signatures import SignatureBook

__all__ = ["CHAT_RULES"]

_TOOL_USE_GUIDE = "https://docs.cohere.com/v2/docs/tool-use-overview"
_MIGRATION_GUIDE = "https://docs.cohere.com/v2/docs/migrating-v1-to-v2"
_CHAT_REFERENCE = "https://docs.cohere.com/reference/chat"
# The v2 chat reference: ``temperature`` at least 0, ``p`` 0.01-0.99, ``k`` 0-500, penalties 0-1.
_BOUNDS = (
    Bound(("temperature",), 0, None),
    Bound(("p",), 0.01, 0.99),
    Bound(("k",), 0, 500, integer=True),
    Bound(("frequency_penalty",), 0, 1),
    Bound(("presence_penalty",), 0, 1),
)


def _range_violation(found: OutOfRange) -> Violation:
    bound = found.bound
    if bound.high is None:
        allowed = f"greater than or equal to {bound.low:g}"
    else:
        allowed = f"between {bound.low:g} and {bound.high:g}"
    return Violation(f"invalid request: {bound.name} must be {allowed}, got {found.value}", bound.name)


def _tool_result_without_call(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    """A ``tool`` message answers a call of the assistant message its run of tool messages follows."""
    orphan = orphan_tool_result(messages_of(body))
    if orphan is None:
        return None
    index, call_id, _ = orphan
    return Violation(
        f"invalid request: messages[{index}]: tool_call_id '{call_id}' does not match any tool "
        "call of the preceding assistant message",
        f"messages[{index}].tool_call_id",
    )


def _tool_calls_unanswered(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    """Every call of an assistant message's ``tool_calls`` has its ``tool`` message before the next turn."""
    unanswered = unanswered_tool_calls(messages_of(body), last_may_wait=True)
    if unanswered is None:
        return None
    index, missing = unanswered
    return Violation(
        f"invalid request: messages[{index}]: tool calls without a tool result: {', '.join(missing)}",
        f"messages[{index}].tool_calls",
    )


CHAT_RULES: tuple[StrictRule, ...] = (
    range_rule(_BOUNDS, _range_violation, code="parameter_out_of_range", source=_CHAT_REFERENCE),
    StrictRule(
        "tool_result_without_call",
        _tool_result_without_call,
        code="tool_result_without_call",
        source=_MIGRATION_GUIDE,
        markers=(b'"tool',),
    ),
    StrictRule(
        "tool_calls_unanswered",
        _tool_calls_unanswered,
        code="tool_calls_unanswered",
        source=_TOOL_USE_GUIDE,
        markers=(b'"tool_calls"',),
    ),
)
