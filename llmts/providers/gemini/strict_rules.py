"""Gemini ``generateContent`` request rules for the strict request contract (``llmts/providers/strict.py``).
Messages are Gemini's own wording (400 ``INVALID_ARGUMENT``); docs/realistic-answers.md lists each rule
with its source.
"""

from __future__ import annotations

from typing import Any

from llmts.providers.strict import StrictRule, Violation

__all__ = ["GENERATE_RULES"]

_FUNCTION_CALLING_GUIDE = "https://ai.google.dev/gemini-api/docs/function-calling"


def _contents(body: dict[str, Any]) -> list[dict[str, Any]]:
    raw = body.get("contents")
    return [c for c in raw if isinstance(c, dict)] if isinstance(raw, list) else []


def _parts(content: dict[str, Any], *keys: str) -> list[Any]:
    parts = content.get("parts")
    if not isinstance(parts, list):
        return []
    found = []
    for part in parts:
        if isinstance(part, dict):
            for key in keys:
                if isinstance(part.get(key), dict):
                    found.append(part[key])
                    break
    return found


def _calls(content: dict[str, Any]) -> list[Any]:
    return _parts(content, "functionCall", "function_call")


def _responses(content: dict[str, Any]) -> list[Any]:
    return _parts(content, "functionResponse", "function_response")


def _response_without_call(body: dict[str, Any]) -> Violation | None:
    """A turn of ``functionResponse`` parts comes right after the ``functionCall`` turn it answers."""
    previous: dict[str, Any] = {}
    for index, content in enumerate(_contents(body)):
        if _responses(content):
            called = {str(call.get("name")) for call in _calls(previous)}
            if not called or any(str(r.get("name")) not in called for r in _responses(content)):
                return Violation(
                    "Please ensure that function response turn comes immediately after a function call turn.",
                    f"contents[{index}]",
                )
        previous = content
    return None


def _calls_unanswered(body: dict[str, Any]) -> Violation | None:
    """A function call turn followed by a response turn has as many responses as calls."""
    contents = _contents(body)
    for index, content in enumerate(contents[:-1]):
        calls = _calls(content)
        answers = _responses(contents[index + 1])
        if calls and answers and len(calls) != len(answers):
            return Violation(
                "Please ensure that the number of function response parts is equal to the number of "
                "function call parts of the function call turn.",
                f"contents[{index + 1}]",
            )
    return None


GENERATE_RULES: tuple[StrictRule, ...] = (
    StrictRule(
        "function_response_without_call",
        _response_without_call,
        code="function_response_without_call",
        source=_FUNCTION_CALLING_GUIDE,
    ),
    StrictRule(
        "function_calls_unanswered",
        _calls_unanswered,
        code="function_calls_unanswered",
        source=_FUNCTION_CALLING_GUIDE,
    ),
)
