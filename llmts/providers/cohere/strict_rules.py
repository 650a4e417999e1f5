"""Cohere v2 chat request rules for the strict request contract (``llmts/providers/strict.py``).

v2 pairs tool results with tool calls by ``tool_call_id`` (Cohere's v1-to-v2 migration guide, "tool call
id"; its tool use guide sends one ``tool`` message per call right after the assistant's ``tool_calls``),
and answers a history that breaks the pairing with 400, which ``cohere`` raises as ``BadRequestError``.
Cohere does not publish the wording of these errors; the messages follow its ``invalid request: ...``
form. docs/realistic-answers.md lists each rule with its source.
"""

from __future__ import annotations

from typing import Any

from llmts.providers.strict import StrictRule, Violation
from llmts.runtime.signatures import SignatureBook

__all__ = ["CHAT_RULES"]

_TOOL_USE_GUIDE = "https://docs.cohere.com/v2/docs/tool-use-overview"
_MIGRATION_GUIDE = "https://docs.cohere.com/v2/docs/migrating-v1-to-v2"


def _messages(body: dict[str, Any]) -> list[Any]:
    raw = body.get("messages")
    return raw if isinstance(raw, list) else []


def _role(message: Any) -> Any:
    return message.get("role") if isinstance(message, dict) else None


def _call_ids(message: Any) -> list[str]:
    calls = message.get("tool_calls") if isinstance(message, dict) else None
    if not isinstance(calls, list):
        return []
    return [str(call.get("id")) for call in calls if isinstance(call, dict) and call.get("id") is not None]


def _tool_result_without_call(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    """A ``tool`` message answers a call of the assistant message its run of tool messages follows."""
    open_ids: list[str] | None = None
    for index, message in enumerate(_messages(body)):
        role = _role(message)
        if role == "tool":
            call_id = str(message.get("tool_call_id"))
            if open_ids is None or call_id not in open_ids:
                return Violation(
                    f"invalid request: messages[{index}]: tool_call_id '{call_id}' does not match any tool "
                    "call of the preceding assistant message",
                    f"messages[{index}].tool_call_id",
                )
        elif role == "assistant" and _call_ids(message):
            open_ids = _call_ids(message)
        else:
            open_ids = None
    return None


def _tool_calls_unanswered(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
    """Every call of an assistant message's ``tool_calls`` has its ``tool`` message before the next turn."""
    messages = _messages(body)
    for index, message in enumerate(messages[:-1]):
        if _role(message) != "assistant" or not (ids := _call_ids(message)):
            continue
        answered = set()
        for later in messages[index + 1 :]:
            if _role(later) != "tool":
                break
            answered.add(str(later.get("tool_call_id")))
        missing = [call_id for call_id in ids if call_id not in answered]
        if missing:
            return Violation(
                f"invalid request: messages[{index}]: tool calls without a tool result: {', '.join(missing)}",
                f"messages[{index}].tool_calls",
            )
    return None


CHAT_RULES: tuple[StrictRule, ...] = (
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
