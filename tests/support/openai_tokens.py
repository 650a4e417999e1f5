"""Expected exact OpenAI usage in tests (docs/tokens.md): the chat rule over bpe_openai's own encoder,
not llmts's counter (whose memos and loading are what the tests check), so a regression in llmts's
counting cannot agree with itself."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from llmts.providers.chat_completions.encodings import CL100K_BASE, O200K_BASE

__all__ = ["cl100k", "message_tokens", "o200k", "own_encoding", "prompt_tokens"]


@cache
def own_encoding(encoding: str) -> Any:
    """bpe_openai's own encoder for ``encoding``. Imported on first use: importing the package builds all
    its vocabularies' tables (~0.5 s and ~80 MB), which each xdist worker would pay at collection."""
    import bpe_openai

    return bpe_openai.get_encoding(encoding)


@cache
def _counter(encoding: str) -> Callable[[str], int]:
    own = own_encoding(encoding)
    return lambda text: len(own.encode_ordinary(text))


def o200k(text: str) -> int:
    return _counter(O200K_BASE)(text)


def cl100k(text: str) -> int:
    return _counter(CL100K_BASE)(text)


def message_tokens(text: str, role: str = "user", *, encoding: str = O200K_BASE) -> int:
    """One message without a name: 3 of overhead, its role, its text."""
    count = _counter(encoding)
    return 3 + count(role) + count(text)


def prompt_tokens(*messages: tuple[str, str], encoding: str = O200K_BASE) -> int:
    """A request of ``(role, text)`` messages and no tools: theirs plus 3 for the reply's priming."""
    return 3 + sum(message_tokens(text, role, encoding=encoding) for role, text in messages)
