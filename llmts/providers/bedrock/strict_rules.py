"""Bedrock Converse request rules for the strict request contract (``llmts/providers/strict.py``).

Answered as ``ValidationException`` (400) in Bedrock's envelope, so boto3 raises
``client.exceptions.ValidationException``. Messages are the service's wording; rules about Claude's
extended thinking are the model's errors, which Converse passes on prefixed with "The model returned the
following errors: ". docs/realistic-answers.md lists each rule with its source.

InvokeModel carries Anthropic's Messages body, so its routes run Anthropic's own table (the adapter
attaches ``llmts/providers/anthropic/strict_rules.py``; Bedrock passes those messages on unchanged).
``max_tokens`` on InvokeModel is not a rule here: it is always enforced (the parser's 400).
"""

from __future__ import annotations

from typing import Any

from llmts.providers.strict import Bound, OutOfRange, StrictRule, Violation, range_rule
from llmts.runtime.signatures import SignatureBook

__all__ = ["CONVERSE_RULES"]

_CONVERSE_REFERENCE = "https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html"
_TOOL_USE_GUIDE = "https://docs.aws.amazon.com/bedrock/latest/userguide/tool-use-inference-call.html"
_THINKING_GUIDE = (
    "https://docs.aws.amazon.com/bedrock/latest/userguide/claude-messages-extended-thinking.html"
)
_MODEL_ERRORS = "The model returned the following errors: "
_MIN_BUDGET = 1024
# The Converse reference's ``InferenceConfiguration``: ``temperature`` and ``topP`` 0-1, ``maxTokens`` >= 1.
_BOUNDS = (
    Bound(("inferenceConfig", "temperature"), 0, 1),
    Bound(("inferenceConfig", "topP"), 0, 1),
    Bound(("inferenceConfig", "maxTokens"), 1, None, integer=True),
)


def _range_violation(found: OutOfRange) -> Violation:
    """The service's constraint wording: "1 validation error detected: Value '1.5' at
    'inferenceConfig.temperature' failed to satisfy constraint: Member must have value less than or equal
    to 1"."""
    bound = found.bound
    relation, limit = ("less", bound.high) if found.above else ("greater", bound.low)
    return Violation(
        f"1 validation error detected: Value '{found.value}' at '{bound.name}' failed to satisfy "
        f"constraint: Member must have value {relation} than or equal to {limit:g}",
        bound.name,
    )


# Converse block kinds as Claude names them in its errors.
_CLAUDE_KINDS = {"text": "text", "toolUse": "tool_use", "toolResult": "tool_result", "image": "image"}


def _messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    raw = body.get("messages")
    return [m for m in raw if isinstance(m, dict)] if isinstance(raw, list) else []


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _ids(message: dict[str, Any], kind: str, key: str) -> list[str]:
    found = []
    for block in _blocks(message):
        inner = block.get(kind)
        if isinstance(inner, dict):
            found.append(str(inner.get(key)))
    return found


def _first_message_user(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    messages = _messages(body)
    if messages and messages[0].get("role") != "user":
        return Violation(
            "A conversation must start with a user message. Try again with a conversation that starts with "
            "a user message."
        )
    return None


def _alternating(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    """Converse, unlike Anthropic's Messages API, does not merge consecutive turns of one role."""
    previous = None
    for message in _messages(body):
        role = message.get("role")
        if role == previous:
            return Violation(
                "A conversation must alternate between user and assistant roles. Make sure the conversation "
                "alternates between user and assistant roles and try again."
            )
        previous = role
    return None


def _result_without_use(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    """Each ``toolResult`` answers a ``toolUse`` of the message right before it."""
    previous: dict[str, Any] = {}
    for index, message in enumerate(_messages(body)):
        results = _ids(message, "toolResult", "toolUseId")
        if results:
            offered = _ids(previous, "toolUse", "toolUseId") if previous.get("role") == "assistant" else []
            if len(results) > len(offered):
                return Violation(
                    f"The number of toolResult blocks at messages.{index}.content exceeds the number of "
                    "toolUse blocks of previous turn."
                )
            unknown = [tool_id for tool_id in results if tool_id not in offered]
            if unknown:
                return Violation(
                    f"The toolUseId {unknown[0]} of a toolResult block at messages.{index}.content does not "
                    "match any toolUse block of previous turn."
                )
        previous = message
    return None


def _use_without_result(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    """Each ``toolUse`` is answered by a ``toolResult`` in the next message (when there is one)."""
    messages = _messages(body)
    for index, message in enumerate(messages[:-1]):
        if message.get("role") != "assistant":
            continue
        ids = _ids(message, "toolUse", "toolUseId")
        if not ids:
            continue
        answered = set(_ids(messages[index + 1], "toolResult", "toolUseId"))
        missing = [tool_id for tool_id in ids if tool_id not in answered]
        if missing:
            return Violation(
                f"Expected toolResult blocks at messages.{index + 1}.content for the following Ids: "
                + ", ".join(missing)
            )
    return None


def _thinking(body: dict[str, Any]) -> dict[str, Any] | None:
    """Claude's ``thinking`` (or the older ``reasoning_config``) in ``additionalModelRequestFields``."""
    extra = body.get("additionalModelRequestFields")
    if not isinstance(extra, dict):
        return None
    for key in ("thinking", "reasoning_config"):
        value = extra.get(key)
        if isinstance(value, dict) and value.get("type") == "enabled":
            return value
    return None


def _thinking_budget(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    thinking = _thinking(body)
    if thinking is None:
        return None
    budget = thinking.get("budget_tokens")
    if not isinstance(budget, int) or budget < _MIN_BUDGET:
        return Violation(
            f"{_MODEL_ERRORS}thinking.enabled.budget_tokens: Input should be greater than or equal to "
            f"{_MIN_BUDGET}"
        )
    config = body.get("inferenceConfig")
    max_tokens = config.get("maxTokens") if isinstance(config, dict) else None
    if isinstance(max_tokens, int) and max_tokens <= budget:
        return Violation(f"{_MODEL_ERRORS}`max_tokens` must be greater than `thinking.budget_tokens`.")
    return None


def _thinking_block_first(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    """With thinking on, the assistant turn before the final ``toolResult`` turn starts with its
    ``reasoningContent`` block."""
    if _thinking(body) is None:
        return None
    messages = _messages(body)
    if len(messages) < 2:
        return None
    last, assistant = messages[-1], messages[-2]
    if last.get("role") != "user" or not _ids(last, "toolResult", "toolUseId"):
        return None
    if assistant.get("role") != "assistant":
        return None
    blocks = _blocks(assistant)
    first = next(iter(blocks[0]), "text") if blocks else "text"
    if first == "reasoningContent":
        return None
    index = len(messages) - 2
    return Violation(
        f"{_MODEL_ERRORS}messages.{index}.content.0.type: Expected `thinking` or `redacted_thinking`, but "
        f"found `{_CLAUDE_KINDS.get(first, first)}`. When `thinking` is enabled, a final `assistant` message "
        "must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` "
        "blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, "
        "disable `thinking`."
    )


def _reasoning_unchanged(body: dict[str, Any], signatures: SignatureBook) -> Violation | None:
    """With thinking on, every ``reasoningContent`` block passed back is one llmts issued, unchanged."""
    if _thinking(body) is None:
        return None
    for index, message in enumerate(_messages(body)):
        if message.get("role") != "assistant":
            continue
        for block_index, block in enumerate(_blocks(message)):
            content = block.get("reasoningContent")
            if not isinstance(content, dict):
                continue
            text = content.get("reasoningText")
            if isinstance(text, dict):
                if not signatures.issued(text.get("signature"), text.get("text")):
                    return Violation(
                        f"{_MODEL_ERRORS}messages.{index}.content.{block_index}: Invalid `signature` in "
                        "`thinking` block"
                    )
            elif "redactedContent" in content and not signatures.issued_bytes(content["redactedContent"]):
                return Violation(
                    f"{_MODEL_ERRORS}messages.{index}.content.{block_index}: Invalid `data` in "
                    "`redacted_thinking` block"
                )
    return None


CONVERSE_RULES: tuple[StrictRule, ...] = (
    range_rule(_BOUNDS, _range_violation, code="parameter_out_of_range", source=_CONVERSE_REFERENCE),
    StrictRule(
        "first_message_not_user",
        _first_message_user,
        code="first_message_not_user",
        source=_CONVERSE_REFERENCE,
    ),
    StrictRule(
        "roles_not_alternating", _alternating, code="roles_not_alternating", source=_CONVERSE_REFERENCE
    ),
    StrictRule(
        "tool_result_without_tool_use",
        _result_without_use,
        code="tool_result_without_tool_use",
        source=_TOOL_USE_GUIDE,
        markers=(b'"toolResult"',),
    ),
    StrictRule(
        "tool_use_without_tool_result",
        _use_without_result,
        code="tool_use_without_tool_result",
        source=_TOOL_USE_GUIDE,
        markers=(b'"toolUse"',),
    ),
    StrictRule(
        "thinking_budget",
        _thinking_budget,
        code="thinking_budget",
        source=_THINKING_GUIDE,
        markers=(b"additionalModelRequestFields",),
    ),
    StrictRule(
        "thinking_block_not_first",
        _thinking_block_first,
        code="thinking_block_not_first",
        source=_THINKING_GUIDE,
        markers=(b'"toolResult"',),
    ),
    StrictRule(
        "thinking_block_modified",
        _reasoning_unchanged,
        code="thinking_block_modified",
        source=_THINKING_GUIDE,
        markers=(b'"reasoningContent"',),
    ),
)
