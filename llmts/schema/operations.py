"""Operations: what a provider request asks for (chat, embeddings, moderation, rerank, ...), the fixture
kinds that answer each, and the neutral results of the operations other than chat.

Theory of operation (docs/architecture.md, "Operations"): ``OPERATIONS`` is the one table of operation
names. A scenario serves one operation (its ``operation``, else the one its fixtures imply, else
``chat``), so a chat scenario's queue is never consumed by an embeddings call and vice versa. The
journal's ``operation`` is the wire operation a route records: chat-like routes keep their own names
(``chat.completions``, ``responses``, ``messages``, ``generate_content``...), which all belong to the
``chat`` family; every other route records its family's name itself (``embeddings``...).
``operation_family`` maps the one to the other.

This module imports nothing of llmts but ``media.py`` (images, transcripts and speech, which imports
nothing of llmts): ``fixtures.py`` and ``neutral.py`` both read it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from llmts.schema.media import AudioResult, ImagesResult, TranscriptResult

__all__ = [
    "CHAT",
    "CHAT_LIKE",
    "FIXTURE_KINDS",
    "MODERATION_CATEGORIES",
    "OPERATIONS",
    "OPERATION_LIMITS",
    "REALTIME",
    "EmbeddingsResult",
    "ModerationResult",
    "ModerationVerdict",
    "Operation",
    "OperationResult",
    "RerankResult",
    "operation_family",
]

Operation = Literal[
    "chat",
    "embeddings",
    "images",
    "transcription",
    "translation",
    "speech",
    "moderation",
    "rerank",
    "realtime",
]
CHAT = "chat"
# A model turn of a Realtime or Live WebSocket session (docs/realtime.md): answered like chat (text, tool
# calls, reasoning) plus spoken audio, but by its own scenarios, so a chat queue never answers a voice turn.
REALTIME = "realtime"
# Operations whose answers compile like chat's (no operation unit in llmts/runtime/operations/) and that a
# session without configuration answers by echoing the latest user text.
CHAT_LIKE = frozenset({CHAT, REALTIME})

# Operation -> the response fixture kinds that answer it (an ``error`` answers any operation). Row order
# is the order validation messages list them.
OPERATIONS: dict[str, tuple[str, ...]] = {
    "chat": ("text", "json", "tool_calls", "items", "refusal"),
    "embeddings": ("embeddings",),
    "images": ("images",),
    "transcription": ("transcript",),
    "translation": ("transcript",),
    "speech": ("audio",),
    "moderation": ("moderation",),
    "rerank": ("rerank",),
    "realtime": ("text", "tool_calls", "audio"),
}

# Every fixture kind some operation is answered by, once each, in the table's order.
FIXTURE_KINDS: tuple[str, ...] = tuple(dict.fromkeys(kind for kinds in OPERATIONS.values() for kind in kinds))

_FAMILIES = frozenset(OPERATIONS) - {CHAT}

# Documented in docs/configuration.md and docs/embeddings.md; merged into ``LIMITS``.
OPERATION_LIMITS: dict[str, int] = {
    # Scripted vectors: per response, and their values in total (a fixture is held in memory as floats).
    "embeddings_per_response": 2048,
    "embedding_dimensions": 4096,
    "embedding_values_per_response": 262_144,
    # Inputs of one request (texts to embed or moderate, documents to rerank) and their characters.
    "operation_inputs": 2048,
    "operation_input_chars": 1_048_576,
    # Generated vectors of one request: inputs x dimensions.
    "generated_embedding_values": 524_288,
    "rerank_results_per_response": 1000,
    "moderation_results_per_response": 2048,
}

# The moderation categories a fixture may flag or score (the omni-moderation set).
MODERATION_CATEGORIES: tuple[str, ...] = (
    "harassment",
    "harassment/threatening",
    "hate",
    "hate/threatening",
    "illicit",
    "illicit/violent",
    "self-harm",
    "self-harm/instructions",
    "self-harm/intent",
    "sexual",
    "sexual/minors",
    "violence",
    "violence/graphic",
)


def operation_family(wire_operation: str | None) -> str:
    """The ``OPERATIONS`` name a wire operation belongs to: its own name for every family but chat,
    ``chat`` for every chat-like wire operation (``chat.completions``, ``messages``...)."""
    if wire_operation is not None and wire_operation in _FAMILIES:
        return wire_operation
    return CHAT


_FROZEN = ConfigDict(defer_build=True, frozen=True)


class EmbeddingsResult(BaseModel):
    """One vector per input, in input order."""

    model_config = _FROZEN

    vectors: tuple[tuple[float, ...], ...]


class ModerationVerdict(BaseModel):
    """The verdict on one input: flagged, the categories that apply and every category's score."""

    model_config = _FROZEN

    flagged: bool
    categories: dict[str, bool]
    category_scores: dict[str, float]


class ModerationResult(BaseModel):
    """One verdict per input; a single verdict answers every input."""

    model_config = _FROZEN

    verdicts: tuple[ModerationVerdict, ...]


class RerankResult(BaseModel):
    """(document index, relevance score) pairs, most relevant first."""

    model_config = _FROZEN

    hits: tuple[tuple[int, float], ...]


# The compiled answer of an operation other than chat (``ScriptedOutput.result``).
OperationResult = (
    EmbeddingsResult | ModerationResult | RerankResult | ImagesResult | TranscriptResult | AudioResult
)
