"""Reasoning signatures llmts issues and can verify without keeping per-response state.

Real providers sign every reasoning block they send (Anthropic ``signature``, ``redacted_thinking``
``data``, Gemini ``thoughtSignature``, Bedrock ``reasoningText.signature``) and reject a block passed
back changed. llmts's default signature is self-verifying: base64 of ``sha256(thinking)`` followed by
``HMAC(key, sha256(thinking))``, the key derived from the session's ``determinism.seed`` (one fixed key
without a seed). A block passed back is checked by recomputing the MAC over the digest it carries and,
where the block carries its text too, comparing the text's digest: no table of issued answers is kept.
A fixture's own ``signature`` cannot be verified that way, so the configuration's fixtures are indexed
once at configure time (signature -> the thinking texts it was scripted with).
docs/realistic-answers.md, "Strict request contract".
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from llmts.schema.config import ResponseFixture, SessionConfig
from llmts.schema.fixtures import ReasoningFixture

__all__ = ["UNSEEDED", "SignatureBook", "reasoning_thinking", "signature_book", "signing_key"]

_DIGEST = 32
_DOMAIN = b"llmts reasoning signature\x00"


def signing_key(seed: str | None) -> bytes:
    """The session's signing key: from its determinism seed, else one fixed key (unseeded sessions)."""
    return hashlib.sha256(_DOMAIN + (b"\x00" if seed is None else b"\x01" + seed.encode())).digest()


def reasoning_thinking(reasoning: ReasoningFixture) -> str:
    """The text a provider shows as the thinking (its text, else the summary parts joined)."""
    return reasoning.text or "\n\n".join(reasoning.summary or ())


def _b64decode(value: str) -> bytes | None:
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        try:  # a client may re-encode bytes URL-safe (Gemini's thoughtSignature is bytes)
            return base64.urlsafe_b64decode(value)
        except (binascii.Error, ValueError):
            return None


@dataclass(frozen=True, slots=True)
class SignatureBook:
    """Which reasoning signatures this session issued: the keyed default form, or a fixture's own."""

    key: bytes
    # A fixture's own signature -> the thinking texts it was scripted with.
    scripted: Mapping[str, frozenset[str]] = field(default_factory=dict)
    # The same signatures as the bytes a client holds after decoding them (Gemini ``thoughtSignature``).
    scripted_bytes: frozenset[bytes] = frozenset()

    def sign(self, thinking: str) -> str:
        digest = hashlib.sha256(thinking.encode()).digest()
        return base64.b64encode(digest + hmac.new(self.key, digest, hashlib.sha256).digest()).decode()

    def _keyed_digest(self, raw: bytes) -> bytes | None:
        """The thinking digest a keyed signature carries, when its MAC is this session's."""
        if len(raw) != 2 * _DIGEST:
            return None
        digest = raw[:_DIGEST]
        expected = hmac.new(self.key, digest, hashlib.sha256).digest()
        return digest if hmac.compare_digest(raw[_DIGEST:], expected) else None

    def issued(self, signature: object, thinking: object = None) -> bool:
        """Whether ``signature`` was issued here (for ``thinking``, when the block carries its text)."""
        if not isinstance(signature, str) or not signature:
            return False
        texts = self.scripted.get(signature)
        if texts is not None:
            return thinking is None or thinking in texts
        raw = _b64decode(signature)
        digest = self._keyed_digest(raw) if raw is not None else None
        if digest is None:
            return False
        return thinking is None or (
            isinstance(thinking, str) and hashlib.sha256(thinking.encode()).digest() == digest
        )

    def issued_bytes(self, encoded: object) -> bool:
        """Whether a base64 value decodes to signature bytes issued here (Gemini ``thoughtSignature``,
        Bedrock ``redactedContent``): the keyed form, or a fixture's signature as the client decoded it."""
        if not isinstance(encoded, str):
            return False
        raw = _b64decode(encoded)
        if raw is None:
            return False
        if raw in self.scripted_bytes or self._keyed_digest(raw) is not None:
            return True
        try:  # the keyed signature's own text, base64 inside base64 (Bedrock's redacted blob)
            return self.issued(raw.decode("ascii"))
        except UnicodeDecodeError:
            return False


UNSEEDED = SignatureBook(signing_key(None))


def _fixtures(config: SessionConfig) -> Iterator[ResponseFixture]:
    for scenario in config.scenarios:
        yield from scenario.responses
    for graph in config.conversations:
        for step in graph.steps:
            yield step.response


def _as_bytes(signature: str) -> tuple[bytes, ...]:
    """What a client may hold for a scripted signature: its base64 decoding, or its UTF-8 bytes (a
    signature that is not base64 is encoded before it is sent as bytes)."""
    raw = _b64decode(signature)
    return (signature.encode(),) if raw is None else (raw, signature.encode())


def signature_book(config: SessionConfig) -> SignatureBook:
    """Index a configuration's scripted signatures (configure time, once)."""
    key = signing_key(config.determinism.seed if config.determinism is not None else None)
    scripted: dict[str, set[str]] = {}
    for fixture in _fixtures(config):
        reasoning = fixture.reasoning
        if reasoning is not None and reasoning.signature is not None:
            scripted.setdefault(reasoning.signature, set()).add(reasoning_thinking(reasoning))
    if not scripted:
        return SignatureBook(key)
    return SignatureBook(
        key,
        {signature: frozenset(texts) for signature, texts in scripted.items()},
        frozenset(raw for signature in scripted for raw in _as_bytes(signature)),
    )
