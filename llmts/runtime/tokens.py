"""Deterministic token estimates (documented in docs/configuration.md#token-usage).

Real tokenizers are model-specific; tests need numbers that are stable, plausible and explainable:

* text costs ``ceil(characters / 4)`` tokens (0 for the empty string);
* each input message adds 4 tokens of framing, and every request adds 3 (OpenAI's chat priming);
* tool declarations and other prompt material before the messages (the "preamble") count by their
  characters the same way;
* output counts its text, or for tool calls each call's name plus its arguments JSON.
"""

from __future__ import annotations

from collections.abc import Iterable

from llmts.schema.neutral import NeutralMessage, NeutralToolCall

__all__ = [
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
