"""The published ranges of OpenAI's numeric sampling parameters and OpenAI's wording when one is broken.

Chat Completions and Responses document ``temperature`` 0-2, ``top_p`` 0-1, the penalties -2-2,
``top_logprobs`` 0-20 and ``n`` 1-128 (API reference and the published OpenAPI document). The real API
answers a value outside them with 400 ``invalid_request_error``, ``param`` the parameter and a ``code``
that says which side and which type (``decimal_above_max_value``, ``integer_below_min_value``...); the
strict rule ``parameter_out_of_range`` (``llmts/providers/openai/strict_rules.py``) answers the same.
"""

from __future__ import annotations

from llmts.providers.strict import Bound, OutOfRange, Violation

__all__ = ["CHAT_BOUNDS", "MAX_N", "N_BOUND", "SAMPLING_BOUNDS", "openai_range_violation"]

# The API's own bound on ``n`` (llmts answers at most ``MAX_CHOICES`` choices, a smaller limit of its own).
MAX_N = 128

# The ranges Chat Completions and Responses share (Responses has no penalties and no ``n``).
SAMPLING_BOUNDS: tuple[Bound, ...] = (
    Bound(("temperature",), 0, 2),
    Bound(("top_p",), 0, 1),
    Bound(("top_logprobs",), 0, 20, integer=True),
)
CHAT_BOUNDS: tuple[Bound, ...] = (
    *SAMPLING_BOUNDS,
    Bound(("frequency_penalty",), -2, 2),
    Bound(("presence_penalty",), -2, 2),
)
# ``n`` is the parser's (it must be a usable count whatever ``strict_requests`` says).
N_BOUND = Bound(("n",), 1, MAX_N, integer=True)


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(value)


def openai_range_violation(found: OutOfRange) -> Violation:
    """OpenAI's message and code for a value outside its range: "Invalid 'temperature': decimal above
    maximum value. Expected a value <= 2, but got 3 instead." (``decimal_above_max_value``)."""
    bound = found.bound
    kind = "integer" if bound.integer else "decimal"
    if found.above:
        side, relation, limit, code = "above maximum", "<=", bound.high, f"{kind}_above_max_value"
    else:
        side, relation, limit, code = "below minimum", ">=", bound.low, f"{kind}_below_min_value"
    assert limit is not None  # the side that was broken has a limit
    return Violation(
        f"Invalid '{bound.name}': {kind} {side} value. Expected a value {relation} {_number(limit)}, "
        f"but got {_number(found.value)} instead.",
        bound.name,
        code,
    )
