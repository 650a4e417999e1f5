"""OpenAI's request rules for the strict request contract (``llmts/providers/strict.py``): one table for
Chat Completions, one for Responses. Messages are OpenAI's own wording; docs/realistic-answers.md lists
each rule with its source. OpenAI sends ``code: null`` for the tool-ordering errors; llmts sends the rule
name there so the journal says which rule answered.
"""

from __future__ import annotations

from typing import Any

from llmts.providers.chat_completions.ranges import CHAT_BOUNDS, SAMPLING_BOUNDS, openai_range_violation
from llmts.providers.strict import StrictRule, Violation, range_rule
from llmts.providers.tool_messages import messages_of, orphan_tool_result, unanswered_tool_calls
from llmts.runtime.signatures import SignatureBook

__all__ = ["CHAT_RULES", "RESPONSES_RULES"]

_CHAT_TOOLS_GUIDE = "https://platform.openai.com/docs/guides/function-calling"
_REASONING_GUIDE = "https://platform.openai.com/docs/guides/reasoning"
_CHAT_REFERENCE = "https://platform.openai.com/docs/api-reference/chat/create"
_RESPONSES_REFERENCE = "https://platform.openai.com/docs/api-reference/responses/create"


def _chat_tool_result_without_call(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    """A ``tool`` message must follow an assistant message with ``tool_calls`` (or its other tool
    messages) and name one of those calls."""
    orphan = orphan_tool_result(messages_of(body))
    if orphan is None:
        return None
    index, call_id, after_calls = orphan
    if not after_calls:
        return Violation(
            "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
            "message with 'tool_calls'.",
            f"messages.[{index}].role",
        )
    return Violation(
        f"Invalid parameter: 'tool_call_id' of '{call_id}' not found in 'tool_calls' of previous message.",
        f"messages.[{index}].tool_call_id",
    )


def _chat_tool_calls_unanswered(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    """Every id of an assistant message's ``tool_calls`` needs a ``tool`` message right after it."""
    unanswered = unanswered_tool_calls(messages_of(body))
    if unanswered is None:
        return None
    index, missing = unanswered
    return Violation(
        "An assistant message with 'tool_calls' must be followed by tool messages responding to "
        "each 'tool_call_id'. The following tool_call_ids did not have response messages: "
        + ", ".join(missing),
        f"messages.[{index}].role",
    )


def _reasoning_model(model: Any) -> bool:
    """o-series and gpt-5 family reasoning models (not the ``gpt-5-chat`` models, which are not)."""
    if not isinstance(model, str):
        return False
    name = model.rsplit("/", 1)[-1].lower()
    if name.startswith("gpt-5"):
        return "-chat" not in name
    return len(name) > 1 and name[0] == "o" and name[1].isdigit()


def _default_only(parameter: str) -> Any:
    def check(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
        value = body.get(parameter)
        if value is None or value == 1 or not _reasoning_model(body.get("model")):
            return None
        return Violation(
            f"Unsupported value: '{parameter}' does not support {value} with this model. Only the default "
            "(1) value is supported.",
            parameter,
        )

    return check


_SAMPLING_RULES = (
    StrictRule(
        "reasoning_model_temperature",
        _default_only("temperature"),
        code="unsupported_value",
        source=_REASONING_GUIDE,
        markers=(b'"temperature"',),
    ),
    StrictRule(
        "reasoning_model_top_p",
        _default_only("top_p"),
        code="unsupported_value",
        source=_REASONING_GUIDE,
        markers=(b'"top_p"',),
    ),
)

# The range rule comes first: the real API validates the body's schema before any model-specific rule;
# each of its violations carries OpenAI's own code (``decimal_above_max_value``...), not ``invalid_value``.
CHAT_RULES: tuple[StrictRule, ...] = (
    range_rule(CHAT_BOUNDS, openai_range_violation, code="invalid_value", source=_CHAT_REFERENCE),
    StrictRule(
        "tool_result_without_call",
        _chat_tool_result_without_call,
        code="tool_result_without_call",
        source=_CHAT_TOOLS_GUIDE,
        markers=(b'"tool',),
    ),
    StrictRule(
        "tool_calls_unanswered",
        _chat_tool_calls_unanswered,
        code="tool_calls_unanswered",
        source=_CHAT_TOOLS_GUIDE,
        markers=(b'"tool_calls"',),
    ),
    *_SAMPLING_RULES,
)


def _input_items(body: dict[str, Any]) -> list[dict[str, Any]]:
    raw = body.get("input")
    return [item for item in raw if isinstance(item, dict)] if isinstance(raw, list) else []


def _responses_output_without_call(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    """A ``function_call_output`` needs its ``function_call`` earlier in ``input`` (or in the stored
    conversation a ``previous_response_id`` continues, which llmts's parser already resolved)."""
    if body.get("previous_response_id") is not None:
        return None
    calls: set[str] = set()
    for item in _input_items(body):
        if item.get("type") == "function_call":
            calls.add(str(item.get("call_id")))
        elif item.get("type") == "function_call_output" and str(item.get("call_id")) not in calls:
            return Violation(
                f"No tool call found for function call output with call_id {item.get('call_id')}.", "input"
            )
    return None


def _responses_call_unanswered(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    """A ``function_call`` in ``input`` needs its ``function_call_output`` in the same input."""
    items = _input_items(body)
    outputs = {str(item.get("call_id")) for item in items if item.get("type") == "function_call_output"}
    for item in items:
        if item.get("type") == "function_call" and str(item.get("call_id")) not in outputs:
            return Violation(f"No tool output found for function call {item.get('call_id')}.", "input")
    return None


def _abbreviated(value: str) -> str:
    return value if len(value) <= 12 else f"{value[:4]}...{value[-4:]}"


def _responses_encrypted_content(body: dict[str, Any], signatures: SignatureBook) -> Violation | None:
    """A ``reasoning`` input item's ``encrypted_content`` is one llmts sent (its signature), unchanged."""
    for item in _input_items(body):
        if item.get("type") != "reasoning" or "encrypted_content" not in item:
            continue
        content = item["encrypted_content"]
        if content is not None and not signatures.issued(content):
            shown = _abbreviated(content) if isinstance(content, str) else "?"
            return Violation(f"The encrypted content {shown} could not be verified.")
    return None


RESPONSES_RULES: tuple[StrictRule, ...] = (
    range_rule(SAMPLING_BOUNDS, openai_range_violation, code="invalid_value", source=_RESPONSES_REFERENCE),
    StrictRule(
        "function_call_output_without_call",
        _responses_output_without_call,
        code="function_call_output_without_call",
        source=_CHAT_TOOLS_GUIDE,
        markers=(b'"function_call',),
    ),
    StrictRule(
        "function_call_unanswered",
        _responses_call_unanswered,
        code="function_call_unanswered",
        source=_CHAT_TOOLS_GUIDE,
        markers=(b'"function_call',),
    ),
    StrictRule(
        "encrypted_content_unverified",
        _responses_encrypted_content,
        code="invalid_encrypted_content",
        source=_REASONING_GUIDE,
        markers=(b'"encrypted_content"',),
    ),
    *_SAMPLING_RULES,
)
