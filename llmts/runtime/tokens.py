"""Deterministic token estimates (documented in docs/configuration.md#token-usage), and the output count
of a request an adapter counts exactly (``NeutralRequest.exact_tokens``, docs/tokens.md).

Real tokenizers are model-specific; tests need numbers that are stable, plausible and explainable:

* text costs ``ceil(characters / 4)`` tokens (0 for the empty string);
* each input message adds 4 tokens of framing, and every request adds 3 (OpenAI's chat priming);
* tool declarations and other prompt material before the messages (the "preamble") count by their
  characters the same way;
* output counts its text, or for tool calls each call's name plus its arguments JSON.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from llmts.schema.neutral import NeutralMessage, NeutralToolCall, ScriptedOutput

__all__ = [
    "counted_output_tokens",
    "estimate_input_tokens",
    "estimate_message_tokens",
    "estimate_preamble_tokens",
    "estimate_text_tokens",
    "estimate_tool_call_tokens",
]

_MESSAGE_OVERHEAD = 4
_REQUEST_OVERHEAD = 3


def estimate_text_tokens(text: str) -> int:
    return (len(text) + 3) // 4


def estimate_tool_call_tokens(calls: Iterable[NeutralToolCall]) -> int:
    return sum(estimate_text_tokens(call.name) + estimate_text_tokens(call.arguments) for call in calls)


def estimate_message_tokens(message: NeutralMessage) -> int:
    total = _MESSAGE_OVERHEAD + estimate_text_tokens(message.text)
    if message.tool_calls:
        total += estimate_tool_call_tokens(message.tool_calls)
    return total


def estimate_preamble_tokens(preamble: str) -> int:
    return _REQUEST_OVERHEAD + estimate_text_tokens(preamble)


def estimate_input_tokens(messages: Iterable[NeutralMessage], preamble: str = "") -> int:
    return estimate_preamble_tokens(preamble) + sum(estimate_message_tokens(m) for m in messages)


# The chat answers whose tokens are their text, calls and refusal; the others (native items, recordings,
# operations' results) keep their compiled count.
_COUNTED_KINDS = frozenset({"text", "json", "tool_calls"})


def counted_output_tokens(output: ScriptedOutput, count_text: Callable[[str], int] | None) -> int:
    """An answer's output tokens: with ``count_text`` (the model's encoding) its text, refusal and tool
    calls (name and arguments) counted, plus the reasoning's tokens; without, the compiled estimate."""
    if count_text is None or output.kind not in _COUNTED_KINDS or output.spoken:
        return output.output_tokens
    total = count_text(output.text) if output.text else 0
    for call in output.tool_calls:
        total += count_text(call.name) + count_text(call.arguments)
    if output.refusal:
        total += count_text(output.refusal)
    if output.reasoning is not None:
        total += output.reasoning.tokens
    return total
