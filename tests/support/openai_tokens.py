"""Expected exact OpenAI usage in tests (docs/tokens.md): the encodings' own counts and the chat rule."""

from __future__ import annotations

from llmts.providers.chat_completions.encodings import CL100K_BASE, O200K_BASE, text_counter

__all__ = ["cl100k", "message_tokens", "o200k", "prompt_tokens"]

o200k = text_counter(O200K_BASE)
cl100k = text_counter(CL100K_BASE)


def message_tokens(text: str, role: str = "user", *, encoding: str = O200K_BASE) -> int:
    """One message without a name: 3 of overhead, its role, its text."""
    count = text_counter(encoding)
    return 3 + count(role) + count(text)


def prompt_tokens(*messages: tuple[str, str], encoding: str = O200K_BASE) -> int:
    """A request of ``(role, text)`` messages and no tools: theirs plus 3 for the reply's priming."""
    return 3 + sum(message_tokens(text, role, encoding=encoding) for role, text in messages)
