"""Anthropic Messages request rules for the strict request contract (``llmts/providers/strict.py``).
Messages are Anthropic's own wording; docs/realistic-answers.md lists each rule with its source.

Not rules here, on purpose: consecutive turns of the same role (the API combines them into one turn, as
its Messages reference says), and ``max_tokens`` (missing or negative is a 400 from the parser whatever
``strict_requests`` says; ``0`` is llmts's documented cache warm-up, docs/prompt-cache.md).
"""

from __future__ import annotations

from typing import Any

from llmts.providers.strict import Bound, OutOfRange, StrictRule, Violation, range_rule
from llmts.runtime.signatures import SignatureBook

__all__ = ["MESSAGES_RULES"]

_MESSAGES_REFERENCE = "https://docs.anthropic.com/en/api/messages"
_TOOL_USE_GUIDE = "https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use"
_THINKING_GUIDE = "https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking"
_MIN_BUDGET = 1024
# The Messages reference's ranges: ``temperature`` and ``top_p`` 0-1, ``top_k`` at least 0.
_BOUNDS = (
    Bound(("temperature",), 0, 1),
    Bound(("top_p",), 0, 1),
    Bound(("top_k",), 0, None, integer=True),
)


def _range_violation(found: OutOfRange) -> Violation:
    """Anthropic's wording: "temperature: range: 0..1"."""
    bound = found.bound
    low = "" if bound.low is None else f"{bound.low:g}"
    high = "" if bound.high is None else f"{bound.high:g}"
    return Violation(f"{bound.name}: range: {low}..{high}", bound.name)


def _messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    raw = body.get("messages")
    return [m for m in raw if isinstance(m, dict)] if isinstance(raw, list) else []


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _tool_use_ids(message: dict[str, Any]) -> list[str]:
    if message.get("role") != "assistant":
        return []
    return [str(b.get("id")) for b in _blocks(message) if b.get("type") == "tool_use"]


def _first_message_user(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    messages = _messages(body)
    if messages and messages[0].get("role") != "user":
        return Violation('messages: first message must use the "user" role', "messages.0.role")
    return None


def _tool_result_without_tool_use(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    """Each ``tool_result`` answers a ``tool_use`` of the message right before it."""
    previous: dict[str, Any] = {}
    for index, message in enumerate(_messages(body)):
        offered = set(_tool_use_ids(previous))
        for block_index, block in enumerate(_blocks(message)):
            if block.get("type") == "tool_result" and str(block.get("tool_use_id")) not in offered:
                return Violation(
                    f"messages.{index}.content.{block_index}: unexpected `tool_use_id` found in "
                    f"`tool_result` blocks: {block.get('tool_use_id')}. Each `tool_result` block must have "
                    "a corresponding `tool_use` block in the previous message.",
                    f"messages.{index}.content.{block_index}",
                )
        previous = message
    return None


def _tool_use_without_result(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    """Each ``tool_use`` is answered by a ``tool_result`` in the next message (when there is one)."""
    messages = _messages(body)
    for index, message in enumerate(messages[:-1]):
        ids = _tool_use_ids(message)
        if not ids:
            continue
        answered = {
            str(b.get("tool_use_id")) for b in _blocks(messages[index + 1]) if b.get("type") == "tool_result"
        }
        missing = [tool_id for tool_id in ids if tool_id not in answered]
        if missing:
            return Violation(
                f"messages.{index}: `tool_use` ids were found without `tool_result` blocks immediately "
                f"after: {', '.join(missing)}. Each `tool_use` block must have a corresponding "
                "`tool_result` block in the next message.",
                f"messages.{index}",
            )
    return None


def _thinking_enabled(body: dict[str, Any]) -> dict[str, Any] | None:
    thinking = body.get("thinking")
    return thinking if isinstance(thinking, dict) and thinking.get("type") == "enabled" else None


def _thinking_on(body: dict[str, Any]) -> bool:
    """``enabled`` or ``adaptive`` (the model decides when to think; no budget, and no thinking block is
    required in a turn where it did not think)."""
    thinking = body.get("thinking")
    return isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")


def _thinking_budget(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    thinking = _thinking_enabled(body)
    if thinking is None:
        return None
    budget = thinking.get("budget_tokens")
    if not isinstance(budget, int) or budget < _MIN_BUDGET:
        return Violation(
            f"thinking.enabled.budget_tokens: Input should be greater than or equal to {_MIN_BUDGET}",
            "thinking.budget_tokens",
        )
    max_tokens = body.get("max_tokens")
    if isinstance(max_tokens, int) and max_tokens > 0 and max_tokens <= budget:
        return Violation(
            "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation "
            "at " + _THINKING_GUIDE,
            "max_tokens",
        )
    return None


def _thinking_block_first(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    """With thinking on, a tool loop that continues passes the assistant turn back starting with its
    thinking block: the assistant message before the final ``tool_result`` turn must start with one."""
    if _thinking_enabled(body) is None:
        return None
    messages = _messages(body)
    if len(messages) < 2:
        return None
    last, assistant = messages[-1], messages[-2]
    if last.get("role") != "user" or not any(b.get("type") == "tool_result" for b in _blocks(last)):
        return None
    if assistant.get("role") != "assistant":
        return None
    blocks = _blocks(assistant)
    first = blocks[0].get("type") if blocks else "text"
    if first in ("thinking", "redacted_thinking"):
        return None
    index = len(messages) - 2
    return Violation(
        f"messages.{index}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{first}`. "
        "When `thinking` is enabled, a final `assistant` message must start with a thinking block "
        "(preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include "
        "thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please "
        "consult our documentation at " + _THINKING_GUIDE,
        f"messages.{index}.content.0.type",
    )


def _thinking_blocks_unchanged(body: dict[str, Any], signatures: SignatureBook) -> Violation | None:
    """With thinking on, every ``thinking`` / ``redacted_thinking`` block passed back is one llmts issued,
    unchanged: its signature verifies over its text (``llmts/runtime/signatures.py``)."""
    if not _thinking_on(body):
        return None
    for index, message in enumerate(_messages(body)):
        if message.get("role") != "assistant":
            continue
        for block_index, block in enumerate(_blocks(message)):
            kind = block.get("type")
            if kind == "thinking" and not signatures.issued(block.get("signature"), block.get("thinking")):
                return Violation(
                    f"messages.{index}.content.{block_index}: Invalid `signature` in `thinking` block",
                    f"messages.{index}.content.{block_index}",
                )
            if kind == "redacted_thinking" and not signatures.issued(block.get("data")):
                return Violation(
                    f"messages.{index}.content.{block_index}: Invalid `data` in `redacted_thinking` block",
                    f"messages.{index}.content.{block_index}",
                )
    return None


MESSAGES_RULES: tuple[StrictRule, ...] = (
    range_rule(_BOUNDS, _range_violation, code="parameter_out_of_range", source=_MESSAGES_REFERENCE),
    StrictRule(
        "first_message_not_user",
        _first_message_user,
        code="first_message_not_user",
        source=_MESSAGES_REFERENCE,
    ),
    StrictRule(
        "tool_result_without_tool_use",
        _tool_result_without_tool_use,
        code="tool_result_without_tool_use",
        source=_TOOL_USE_GUIDE,
        markers=(b'"tool_result"',),
    ),
    StrictRule(
        "tool_use_without_tool_result",
        _tool_use_without_result,
        code="tool_use_without_tool_result",
        source=_TOOL_USE_GUIDE,
        markers=(b'"tool_use"',),
    ),
    StrictRule(
        "thinking_budget",
        _thinking_budget,
        code="thinking_budget",
        source=_THINKING_GUIDE,
        markers=(b'"thinking"',),
    ),
    StrictRule(
        "thinking_block_not_first",
        _thinking_block_first,
        code="thinking_block_not_first",
        source=_THINKING_GUIDE,
        markers=(b'"tool_result"',),
    ),
    StrictRule(
        "thinking_block_modified",
        _thinking_blocks_unchanged,
        code="thinking_block_modified",
        source=_THINKING_GUIDE,
        # A thinking block has a signature (or spells its type as SDKs and orjson write it).
        markers=(b'"signature"', b"redacted_thinking", b'"type":"thinking"', b'"type": "thinking"'),
    ),
)
