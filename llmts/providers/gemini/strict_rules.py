"""Gemini ``generateContent`` request rules for the strict request contract (``llmts/providers/strict.py``).
Messages are Gemini's own wording (400 ``INVALID_ARGUMENT``); docs/realistic-answers.md lists each rule
with its source.
"""

from __future__ import annotations

import base64
from typing import Any

from llmts.providers.strict import Bound, OutOfRange, StrictRule, Violation, range_rule
from llmts.runtime.signatures import SignatureBook

__all__ = ["GENERATE_RULES"]

_FUNCTION_CALLING_GUIDE = "https://ai.google.dev/gemini-api/docs/function-calling"
_THOUGHT_SIGNATURES_GUIDE = "https://ai.google.dev/gemini-api/docs/thought-signatures"
_GENERATION_CONFIG_REFERENCE = "https://ai.google.dev/api/generate-content#generationconfig"
# The generation config reference: ``temperature`` 0-2, ``topP`` 0-1, ``topK`` at least 1; the body may spell
# the config and its keys in camelCase (what the SDKs send) or snake_case (what the API also accepts).
_BOUNDS = tuple(
    Bound((config, key), low, high, integer)
    for config in ("generationConfig", "generation_config")
    for keys, low, high, integer in (
        (("temperature",), 0, 2, False),
        (("topP", "top_p"), 0, 1, False),
        (("topK", "top_k"), 1, None, True),
    )
    for key in keys
)


def _range_violation(found: OutOfRange) -> Violation:
    """Google's wording for a generation parameter out of range."""
    bound = found.bound
    field = bound.path[-1]
    high = "" if bound.high is None else f" to {bound.high:g} (inclusive)"
    return Violation(
        f"Unable to submit request because it has a {field} value of {found.value} but the supported range "
        f"is from {bound.low:g} (inclusive){high}. Update the value and try again.",
        bound.name,
    )


# In both spellings of the parts the rules read (``functionCall``, ``function_response``...).
_FUNCTION = b"unction"
# The dummy signatures the thought signatures guide documents for parts the model did not sign (history from
# another model, or a client that fills in the signature the API requires on function calls, as pydantic-ai
# does); the real API accepts them, base64-encoded as any bytes field.
_DUMMY_SIGNATURES = frozenset(
    base64.b64encode(text).decode("ascii")
    for text in (b"skip_thought_signature_validator", b"context_engineering_is_the_way_to_go")
)


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


def _response_without_call(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
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


def _calls_unanswered(body: dict[str, Any], _signatures: SignatureBook) -> Violation | None:
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


def _thought_signature_corrupted(body: dict[str, Any], signatures: SignatureBook) -> Violation | None:
    """A ``thoughtSignature`` passed back is one llmts sent, unchanged (as bytes: the SDK decodes it), or
    one of the guide's dummy signatures."""
    for index, content in enumerate(_contents(body)):
        parts = content.get("parts")
        for part_index, part in enumerate(parts if isinstance(parts, list) else ()):
            if not isinstance(part, dict):
                continue
            signature = part.get("thoughtSignature", part.get("thought_signature"))
            if signature is None or signature in _DUMMY_SIGNATURES:
                continue
            if not signatures.issued_bytes(signature):
                return Violation("Corrupted thought signature.", f"contents[{index}].parts[{part_index}]")
    return None


GENERATE_RULES: tuple[StrictRule, ...] = (
    range_rule(_BOUNDS, _range_violation, code="parameter_out_of_range", source=_GENERATION_CONFIG_REFERENCE),
    StrictRule(
        "function_response_without_call",
        _response_without_call,
        code="function_response_without_call",
        source=_FUNCTION_CALLING_GUIDE,
        markers=(_FUNCTION,),
    ),
    StrictRule(
        "function_calls_unanswered",
        _calls_unanswered,
        code="function_calls_unanswered",
        source=_FUNCTION_CALLING_GUIDE,
        markers=(_FUNCTION,),
    ),
    StrictRule(
        "thought_signature_corrupted",
        _thought_signature_corrupted,
        code="thought_signature_corrupted",
        source=_THOUGHT_SIGNATURES_GUIDE,
        markers=(b"houghtSignature", b"hought_signature"),
    ),
)
