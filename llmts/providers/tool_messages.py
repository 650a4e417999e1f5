"""Tool-call pairing in an OpenAI-shaped message history, for strict request rules (``providers/strict.py``).

OpenAI Chat Completions and Cohere v2 both pair results with calls the same way: an ``assistant`` message
lists ``tool_calls`` (each with an ``id``), and the ``tool`` messages right after it answer them by
``tool_call_id``. Both providers reject a history that breaks the pairing, each in its own words: these
walkers find the first break, and each provider's rule table words the error.
"""

from __future__ import annotations

from typing import Any

__all__ = ["messages_of", "orphan_tool_result", "unanswered_tool_calls"]


def messages_of(body: dict[str, Any]) -> list[Any]:
    """The body's ``messages`` list (empty when absent or not a list)."""
    raw = body.get("messages")
    return raw if isinstance(raw, list) else []


def _role(message: Any) -> Any:
    return message.get("role") if isinstance(message, dict) else None


def _call_ids(message: Any) -> list[str]:
    calls = message.get("tool_calls") if isinstance(message, dict) else None
    if not isinstance(calls, list):
        return []
    return [str(call.get("id")) for call in calls if isinstance(call, dict) and call.get("id") is not None]


def orphan_tool_result(messages: list[Any]) -> tuple[int, str, bool] | None:
    """The first ``tool`` message that answers no call of the assistant message its run of tool messages
    follows: ``(index, its tool_call_id, whether such an assistant message precedes it at all)``."""
    open_ids: list[str] | None = None  # the ids of the assistant turn the tool messages answer
    for index, message in enumerate(messages):
        role = _role(message)
        if role == "tool":
            call_id = str(message.get("tool_call_id"))
            if open_ids is None or call_id not in open_ids:
                return index, call_id, open_ids is not None
        elif role == "assistant" and (ids := _call_ids(message)):
            open_ids = ids
        else:
            open_ids = None
    return None


def unanswered_tool_calls(
    messages: list[Any], *, last_may_wait: bool = False
) -> tuple[int, list[str]] | None:
    """The first assistant message with ``tool_calls`` whose ids are not all answered by the ``tool``
    messages right after it: ``(index, the unanswered ids)``. ``last_may_wait``: the history's last
    message may be such an assistant message (its results are not due yet)."""
    checked = messages[:-1] if last_may_wait else messages
    for index, message in enumerate(checked):
        if _role(message) != "assistant" or not (ids := _call_ids(message)):
            continue
        # Walked by index, not over a slice: a copy of the rest per assistant turn would be quadratic.
        answered = set()
        after = index + 1
        while after < len(messages) and _role(messages[after]) == "tool":
            answered.add(str(messages[after].get("tool_call_id")))
            after += 1
        missing = [call_id for call_id in ids if call_id not in answered]
        if missing:
            return index, missing
    return None
