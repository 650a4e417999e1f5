"""The ``rerank`` operation (docs/rerank.md): its input, its fixture's ranked documents, the fit check
and the generated ranking (``scoring.rank_documents``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from llmts.errors import FixtureMismatch
from llmts.runtime.operations.scoring import rank_documents
from llmts.runtime.operations.unit import OperationUnit, answer
from llmts.schema.neutral import OperationInput, ScriptedOutput
from llmts.schema.operations.rerank import RerankHitFixture, RerankResult

__all__ = ["RERANK", "RerankInput"]


@dataclass(frozen=True, slots=True)
class RerankInput(OperationInput):
    """The query, the documents to rank against it, and how many results to return (None: all)."""

    query: str
    documents: tuple[str, ...]
    top_n: int | None = None

    recorded_options: ClassVar[tuple[str, ...]] = ("top_n",)

    def texts(self) -> tuple[str, ...]:
        return self.documents

    def query_text(self) -> str:
        return self.query


def _compile(fixture: list[RerankHitFixture]) -> ScriptedOutput:
    return answer("rerank", RerankResult(hits=tuple((hit.index, hit.relevance_score) for hit in fixture)))


def _fits(request: RerankInput, output: ScriptedOutput, where: str, stream: bool) -> None:
    """Every ranked index is one of the request's documents."""
    result = output.result
    if not isinstance(result, RerankResult):
        return
    count = len(request.documents)
    for index, _score in result.hits:
        if index >= count:
            raise FixtureMismatch(f"{where} ranks document {index} but the request has {count} document(s)")


def _generate(request: RerankInput, seed: str) -> ScriptedOutput:
    del seed  # the ranking is a pure function of the query and the documents
    return answer("rerank", rank_documents(request.query, request.documents, request.top_n))


RERANK = OperationUnit("rerank", RerankInput, "rerank", _compile, _fits, _generate)
