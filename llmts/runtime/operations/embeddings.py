"""Generated embeddings: deterministic, L2-normalised, and semantically useful for tests.

Each text becomes a sparse feature-hashing projection of its words, word pairs and character trigrams
(every feature adds its weight at two seeded positions with seeded signs), plus a small dense component
derived from the whole text, then scaled to unit length. Texts that share words share positions, so
they are closer by cosine than texts that share none; the same text, seed and dimension always give
the same vector (docs/embeddings.md, "Generated vectors"). Pure Python: one keyed BLAKE2b per distinct
feature of a request, one SHAKE digest per text for the dense part.
"""

from __future__ import annotations

import hashlib
import math
import re
from array import array
from dataclasses import dataclass
from typing import ClassVar

from llmts.errors import FixtureMismatch, InvalidRequest
from llmts.runtime.operations.unit import OperationUnit, answer
from llmts.schema.fixtures import LIMITS
from llmts.schema.neutral import OperationInput, ScriptedOutput, build
from llmts.schema.operations.embeddings import EmbeddingsResult

__all__ = ["EMBEDDINGS", "STOP_WORDS", "EmbeddingsInput", "embed_texts"]

_WORD = re.compile(r"\w+")
# Feature weights: whole words dominate; pairs reward word order; trigrams relate word forms.
_WORD_WEIGHT = 1.0
_PAIR_WEIGHT = 0.5
_TRIGRAM_WEIGHT = 0.25
# The dense part's length relative to the sparse part's (so unrelated texts are near-orthogonal, yet no
# component is exactly zero, like a real model's).
_DENSE_SHARE = 0.15
# The expected length of d uniform int16 values is this times sqrt(d) (their root mean square).
_INT16_RMS = 32768.0 / math.sqrt(3.0)
# Function words carry little meaning: they count a fifth of a word, so "the" does not rank documents.
_STOP_WEIGHT = 0.2
STOP_WORDS = frozenset(
    (
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "so",
        "that",
        "the",
        "their",
        "there",
        "these",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
    )
)


def _features(text: str) -> dict[str, float]:
    words = _WORD.findall(text.lower())
    features: dict[str, float] = {}
    if not words:  # punctuation or nothing at all: the text itself is the one feature
        return {"r\x00" + text: _WORD_WEIGHT}
    for index, word in enumerate(words):
        key = "w\x00" + word
        features[key] = features.get(key, 0.0) + (_STOP_WEIGHT if word in STOP_WORDS else _WORD_WEIGHT)
        if index:
            pair = "p\x00" + words[index - 1] + "\x00" + word
            features[pair] = features.get(pair, 0.0) + _PAIR_WEIGHT
        if len(word) > 3:
            padded = "#" + word + "#"
            for start in range(len(padded) - 2):
                trigram = "t\x00" + padded[start : start + 3]
                features[trigram] = features.get(trigram, 0.0) + _TRIGRAM_WEIGHT
    return features


def embed_texts(texts: tuple[str, ...], dimensions: int, seed: str) -> tuple[tuple[float, ...], ...]:
    """One unit vector of ``dimensions`` values per text (the caller bounds count and dimension)."""
    key = hashlib.blake2b(seed.encode(), digest_size=32).digest()
    dense_norm = _INT16_RMS * math.sqrt(dimensions)
    hashed: dict[str, tuple[int, float, int, float]] = {}  # feature -> two (position, sign) pairs
    vectors = []
    for text in texts:
        sparse: dict[int, float] = {}
        for feature, weight in _features(text).items():
            slots = hashed.get(feature)
            if slots is None:
                digest = hashlib.blake2b(feature.encode(), key=key, digest_size=8).digest()
                first = int.from_bytes(digest[:4], "little")
                second = int.from_bytes(digest[4:], "little")
                slots = hashed[feature] = (
                    (first & 0x7FFFFFFF) % dimensions,
                    1.0 if first >> 31 else -1.0,
                    (second & 0x7FFFFFFF) % dimensions,
                    1.0 if second >> 31 else -1.0,
                )
            a, sign_a, b, sign_b = slots
            sparse[a] = sparse.get(a, 0.0) + sign_a * weight
            sparse[b] = sparse.get(b, 0.0) + sign_b * weight
        dense_digest = hashlib.shake_256(key + b"\x00" + text.encode()).digest(2 * dimensions)
        sparse_norm = math.sqrt(sum(value * value for value in sparse.values()))
        scale = (_DENSE_SHARE * sparse_norm or 1.0) / dense_norm
        vector = [value * scale for value in array("h", dense_digest)]
        for position, value in sparse.items():
            vector[position] += value
        inverse = 1.0 / (math.hypot(*vector) or 1.0)
        vectors.append(tuple([value * inverse for value in vector]))
    return tuple(vectors)


# --- the operation unit (docs/architecture.md, "Operations") ------------------------------------------


@dataclass(frozen=True, slots=True)
class EmbeddingsInput(OperationInput):
    """The texts to embed, the dimension the request names (None: it names none) and the model's."""

    inputs: tuple[str, ...]
    dimensions: int | None = None
    default_dimensions: int = 0

    recorded_options: ClassVar[tuple[str, ...]] = ("dimensions",)

    def texts(self) -> tuple[str, ...]:
        return self.inputs


_MAX_GENERATED = LIMITS["generated_embedding_values"]


def _compile(fixture: list[list[float]]) -> ScriptedOutput:
    return answer("embeddings", EmbeddingsResult(vectors=tuple(tuple(vector) for vector in fixture)))


def _fits(request: EmbeddingsInput, output: ScriptedOutput, where: str, stream: bool) -> None:
    """One vector per input, of the dimension the request names (the model's default is not checked)."""
    result = output.result
    if not isinstance(result, EmbeddingsResult):
        return
    count = len(request.inputs)
    if len(result.vectors) != count:
        raise FixtureMismatch(
            f"{where} scripts {len(result.vectors)} vector(s) but the request has {count} input(s)"
        )
    size = len(result.vectors[0])
    if request.dimensions is not None and size != request.dimensions:
        raise FixtureMismatch(
            f"{where} scripts vectors of {size} values but the request asks for "
            f"{request.dimensions} dimensions"
        )


def _generate(request: EmbeddingsInput, seed: str) -> ScriptedOutput:
    dimensions = request.dimensions or request.default_dimensions
    values = dimensions * len(request.inputs)
    if values > _MAX_GENERATED:
        raise InvalidRequest(
            f"{len(request.inputs)} inputs of {dimensions} dimensions are {values} values; llmts generates "
            f"at most {_MAX_GENERATED} per request (generated_embedding_values): send fewer inputs or "
            "script the vectors",
            code="invalid_value",
            param="input",
        )
    return answer(
        "embeddings", build(EmbeddingsResult, vectors=embed_texts(request.inputs, dimensions, seed))
    )


EMBEDDINGS = OperationUnit("embeddings", EmbeddingsInput, "embeddings", _compile, _fits, _generate)
