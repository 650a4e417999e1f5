"""A message longer than the prompt cache's hashing slice (64 KiB) is hashed a slice at a time instead
of as one joined copy (docs/design/memory.md, "Memory beyond the accounted bytes"): the cache still
recognises the same prefix, and any change inside the long text, or at a slice boundary, is a miss."""

from __future__ import annotations

import hashlib

import pytest

from llmts.runtime.prompt_cache import PromptCache, _feed_message, _message_key
from llmts.schema.neutral import NeutralMessage, NeutralRequest, NeutralToolCall

_LONG = ("naïve café, 東京 " * 20_000)[:200_001]  # ~200 K characters, non-ASCII, over three slices


def _request(system: str, user: str = "q") -> NeutralRequest:
    return NeutralRequest(
        provider="openai",
        operation="chat.completions",
        model="gpt-4.1-mini",
        messages=(NeutralMessage(role="system", text=system), NeutralMessage(role="user", text=user)),
        cache_mode="implicit",
    )


def test_a_long_message_is_recognised_again() -> None:
    cache = PromptCache()
    assert cache.observe(_request(_LONG)).read_tokens == 0
    read = cache.observe(_request(_LONG, user="another question")).read_tokens
    assert read >= len(_LONG) // 4 - 128  # the long system prefix, in 128-token blocks


def test_a_change_inside_a_long_message_is_a_miss() -> None:
    for at in (0, 65_535, 65_536, 100_000, len(_LONG) - 1):
        cache = PromptCache()
        cache.observe(_request(_LONG))
        changed = _LONG[:at] + "X" + _LONG[at + 1 :]
        assert cache.observe(_request(changed)).read_tokens == 0, at


def test_the_slice_boundary_does_not_merge_role_and_text() -> None:
    # "user" + "\x1d..." must not hash like "use" + "r\x1d...": the separators are fed in order.
    cache = PromptCache()
    cache.observe(_request(_LONG))
    swapped = NeutralRequest(
        provider="openai",
        operation="chat.completions",
        model="gpt-4.1-mini",
        messages=(NeutralMessage(role="user", text=_LONG), NeutralMessage(role="user", text="q")),
        cache_mode="implicit",
    )
    assert cache.observe(swapped).read_tokens == 0


@pytest.mark.parametrize("length", [65_535, 65_536, 65_537, 131_073])
def test_a_sliced_message_hashes_exactly_as_its_whole_key(length: int) -> None:
    """Slicing changes how the bytes reach the digest, never which bytes: the prefixes a long message
    started before the change are still recognised."""
    text = ("é東" * length)[:length]
    message = NeutralMessage(
        role="assistant",
        text=text,
        tool_calls=(NeutralToolCall(id="c1", name="f", arguments='{"a": 1}'),),
    )
    sliced = hashlib.blake2b(digest_size=16)
    _feed_message(sliced, message)

    assert sliced.digest() == hashlib.blake2b(_message_key(message), digest_size=16).digest()
