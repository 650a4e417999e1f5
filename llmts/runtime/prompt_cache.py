"""Prompt-cache simulation: per session, provider and model; bounded; cleared by reset/configure.

The rule (documented in docs/configuration.md#prompt-cache):

* A prompt is a chain of segments: the preamble (tools, system blocks), then each message. Every prefix
  of that chain has a hash and a token count (the same count as usage: exact where the adapter counted
  the segments, else the estimate).
* ``implicit`` (OpenAI, Gemini): every prefix of at least ``MIN_CACHEABLE_TOKENS`` tokens is remembered.
  A later request reads the longest remembered prefix, reported in 128-token blocks.
* ``explicit`` (Anthropic ``cache_control``): only prefixes ending at a breakpoint are remembered. A
  request reads the longest remembered breakpoint prefix, and writes the tokens from there up to its last
  breakpoint (``cache_creation_input_tokens``); prefixes under ``MIN_CACHEABLE_TOKENS`` are not cached.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from llmts.runtime.tokens import estimate_message_tokens, estimate_preamble_tokens
from llmts.schema.neutral import NeutralMessage, NeutralRequest

__all__ = [
    "CACHE_BLOCK_TOKENS",
    "MAX_CACHED_PREFIXES",
    "MIN_CACHEABLE_TOKENS",
    "NO_CACHE_EFFECT",
    "CacheEffect",
    "PromptCache",
]

MIN_CACHEABLE_TOKENS = 1024
CACHE_BLOCK_TOKENS = 128
# Remembered prefixes per session (all providers and models together); the oldest are forgotten first.
MAX_CACHED_PREFIXES = 4096


@dataclass(frozen=True, slots=True)
class CacheEffect:
    read_tokens: int = 0
    write_tokens: int = 0


NO_CACHE_EFFECT = CacheEffect()


# Texts longer than this are hashed a slice at a time: a 1 MB message would otherwise be copied three
# times (the joined key, its UTF-8 bytes, the separator prepended) only to be hashed.
_SLICE = 64 * 1024


def _tail(message: NeutralMessage) -> str:
    """What follows a message's text in its key: its tool call id and its calls."""
    calls = "\x1e".join(f"{c.id}\x1f{c.name}\x1f{c.arguments}" for c in message.tool_calls)
    return f"\x1d{message.tool_call_id or ''}\x1d{calls}"


def _message_key(message: NeutralMessage) -> bytes:
    return f"\x00{message.role}\x1d{message.text}{_tail(message)}".encode()


def _feed(digest: Any, text: str) -> None:
    """``digest.update(text.encode())`` without holding the whole encoding (same bytes, same hash)."""
    for start in range(0, len(text), _SLICE):
        digest.update(text[start : start + _SLICE].encode())


def _feed_message(digest: Any, message: NeutralMessage) -> None:
    if len(message.text) <= _SLICE:
        digest.update(_message_key(message))
        return
    digest.update(f"\x00{message.role}\x1d".encode())
    _feed(digest, message.text)
    _feed(digest, _tail(message))


def _prefixes(request: NeutralRequest) -> Iterable[tuple[bytes, int]]:
    """(hash of the prefix through segment i, cumulative tokens through segment i), in order."""
    digest = hashlib.blake2b(f"{request.provider}\x00{request.model}\x00".encode(), digest_size=16)
    _feed(digest, request.preamble)
    exact = request.exact_tokens
    segments = exact.segments if exact is not None else None
    tokens = segments[0] if segments else estimate_preamble_tokens(request.preamble)
    yield digest.digest(), tokens
    for index, message in enumerate(request.messages, 1):
        _feed_message(digest, message)
        tokens += segments[index] if segments else estimate_message_tokens(message)
        yield digest.digest(), tokens


class PromptCache:
    """Not thread-safe on its own: the owning session calls it under its lock."""

    def __init__(self, max_prefixes: int = MAX_CACHED_PREFIXES) -> None:
        self._max = max_prefixes
        self._seen: OrderedDict[bytes, None] = OrderedDict()

    def __len__(self) -> int:
        return len(self._seen)

    def clear(self) -> None:
        self._seen.clear()

    def _remember(self, key: bytes) -> None:
        self._seen[key] = None
        self._seen.move_to_end(key)
        while len(self._seen) > self._max:
            self._seen.popitem(last=False)

    def observe(self, request: NeutralRequest) -> CacheEffect:
        if request.cache_mode == "none":
            return NO_CACHE_EFFECT
        prefixes = list(_prefixes(request))
        if request.cache_mode == "implicit":
            read = 0
            for key, tokens in prefixes:
                if key in self._seen:
                    read = tokens
            for key, tokens in prefixes:
                if tokens >= MIN_CACHEABLE_TOKENS:
                    self._remember(key)
            blocks = read // CACHE_BLOCK_TOKENS * CACHE_BLOCK_TOKENS if read >= MIN_CACHEABLE_TOKENS else 0
            return CacheEffect(read_tokens=blocks)
        marked = [prefixes[i] for i in sorted(set(request.cache_breakpoints)) if 0 <= i < len(prefixes)]
        marked = [(key, tokens) for key, tokens in marked if tokens >= MIN_CACHEABLE_TOKENS]
        if not marked:
            return NO_CACHE_EFFECT
        read = 0
        for key, tokens in marked:
            if key in self._seen:
                read = tokens
                self._seen.move_to_end(key)
        for key, _ in marked:
            self._remember(key)
        return CacheEffect(read_tokens=read, write_tokens=max(0, marked[-1][1] - read))
