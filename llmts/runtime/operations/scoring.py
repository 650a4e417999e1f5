"""Generated moderation verdicts and rerank results (docs/moderation.md, docs/rerank.md).

Moderation without a fixture: nothing is flagged; every category gets a low score (below 0.001) that is
a pure function of the seed, the input and the category. Rerank without a fixture: documents are ranked
by the words they share with the query (the cosine of their word sets, stop words aside), ties in
document order.
"""

from __future__ import annotations

import hashlib
import math
import re

from llmts.runtime.operations.embeddings import STOP_WORDS
from llmts.schema.neutral import build
from llmts.schema.operations.moderation import MODERATION_CATEGORIES, ModerationVerdict
from llmts.schema.operations.rerank import RerankResult

__all__ = ["moderate_texts", "rank_documents"]

_WORD = re.compile(r"\w+")


def moderate_texts(texts: tuple[str, ...], seed: str) -> tuple[ModerationVerdict, ...]:
    verdicts = []
    for text in texts:
        digest = hashlib.shake_256(f"{seed}\x00moderation\x00{text}".encode()).digest(
            2 * len(MODERATION_CATEGORIES)
        )
        scores = {
            category: (1 + int.from_bytes(digest[2 * i : 2 * i + 2], "little")) / 100_000_000
            for i, category in enumerate(MODERATION_CATEGORIES)
        }
        verdicts.append(
            build(
                ModerationVerdict,
                flagged=False,
                categories=dict.fromkeys(MODERATION_CATEGORIES, False),
                category_scores=scores,
            )
        )
    return tuple(verdicts)


def _words(text: str) -> set[str]:
    return {word for word in _WORD.findall(text.lower()) if word not in STOP_WORDS}


def rank_documents(query: str, documents: tuple[str, ...], top_n: int | None) -> RerankResult:
    wanted = _words(query)
    scored = []
    for index, document in enumerate(documents):
        words = _words(document)
        shared = len(wanted & words)
        score = shared / math.sqrt(len(wanted) * len(words)) if shared else 0.0
        scored.append((index, round(score, 6)))
    scored.sort(key=lambda hit: -hit[1])  # stable: ties keep document order
    return build(RerankResult, hits=tuple(scored[:top_n] if top_n is not None else scored))
