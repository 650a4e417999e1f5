"""The runtime side of the operations other than chat (docs/architecture.md, "Operations"): compiling
their fixtures, checking a fixture fits the request, generating an answer when no fixture owns the
request, and counting their input tokens. Neutral: adapters parse the wire into an ``OperationRequest``
and render the ``ScriptedOutput.result`` this package produces.

``GENERATORS`` is the one table of operations that answer without a fixture; an operation of the
``OPERATIONS`` table without a row here needs a scripted response (409 otherwise).
"""

from __future__ import annotations

from collections.abc import Callable

from llmts.errors import FixtureMismatch, InvalidRequest, NoMatchingScenario
from llmts.runtime.media.answers import (
    check_media_fits,
    compile_audio,
    compile_images,
    compile_transcript,
    generate_images,
    generate_speech,
    generate_transcript,
)
from llmts.runtime.operations.embeddings import embed_texts
from llmts.runtime.operations.scoring import moderate_texts, rank_documents
from llmts.runtime.tokens import estimate_text_tokens
from llmts.schema.fixtures import LIMITS, ResponseFixture
from llmts.schema.media import AudioResult, ImagesResult, TranscriptResult
from llmts.schema.neutral import NeutralRequest, OperationRequest, ScriptedOutput, build
from llmts.schema.operation_fixtures import ModerationFixture
from llmts.schema.operations import (
    MODERATION_CATEGORIES,
    EmbeddingsResult,
    ModerationResult,
    ModerationVerdict,
    RerankResult,
)

__all__ = [
    "DEFAULT_SEED",
    "GENERATORS",
    "check_result_fits",
    "compile_result",
    "generate",
    "operation_input_tokens",
]

# Generated answers of a session without ``determinism.seed`` use this seed, so they are stable too.
DEFAULT_SEED = "llmts"
# A category a fixture says applies scores this unless the fixture gives its score.
_APPLIES_SCORE = 0.9
_CLEAN_SCORE = 0.0001
_MAX_GENERATED = LIMITS["generated_embedding_values"]


def _output(kind: str, result: EmbeddingsResult | ModerationResult | RerankResult) -> ScriptedOutput:
    return build(ScriptedOutput, kind=kind, result=result)


def _verdict(fixture: ModerationFixture) -> ModerationVerdict:
    categories = {name: fixture.categories.get(name, False) for name in MODERATION_CATEGORIES}
    scores = {
        name: fixture.category_scores.get(name, _APPLIES_SCORE if categories[name] else _CLEAN_SCORE)
        for name in MODERATION_CATEGORIES
    }
    flagged = fixture.flagged if fixture.flagged is not None else any(categories.values())
    return ModerationVerdict(flagged=flagged, categories=categories, category_scores=scores)


def compile_result(fixture: ResponseFixture) -> ScriptedOutput | None:
    """The compiled answer of an operation fixture (None: the fixture is not one)."""
    if fixture.embeddings is not None:
        vectors = tuple(tuple(vector) for vector in fixture.embeddings)
        return _output("embeddings", EmbeddingsResult(vectors=vectors))
    if fixture.moderation is not None:
        given = fixture.moderation if isinstance(fixture.moderation, list) else [fixture.moderation]
        return _output("moderation", ModerationResult(verdicts=tuple(_verdict(v) for v in given)))
    if fixture.rerank is not None:
        hits = tuple((hit.index, hit.relevance_score) for hit in fixture.rerank)
        return _output("rerank", RerankResult(hits=hits))
    if fixture.images is not None:
        return compile_images(fixture.images)
    if fixture.transcript is not None:
        return compile_transcript(fixture.transcript)
    if fixture.audio is not None:
        return compile_audio(fixture.audio)
    return None


def _embeddings(request: OperationRequest, seed: str) -> ScriptedOutput:
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
    return _output(
        "embeddings", build(EmbeddingsResult, vectors=embed_texts(request.inputs, dimensions, seed))
    )


def _moderation(request: OperationRequest, seed: str) -> ScriptedOutput:
    return _output("moderation", build(ModerationResult, verdicts=moderate_texts(request.inputs, seed)))


def _rerank(request: OperationRequest, seed: str) -> ScriptedOutput:
    return _output("rerank", rank_documents(request.query, request.inputs, request.top_n))


# Operation -> its generator (the request, the session's determinism seed or DEFAULT_SEED).
GENERATORS: dict[str, Callable[[OperationRequest, str], ScriptedOutput]] = {
    "embeddings": _embeddings,
    "moderation": _moderation,
    "rerank": _rerank,
    "images": generate_images,
    "transcription": generate_transcript,
    "translation": generate_transcript,
    "speech": generate_speech,
}


def generate(request: NeutralRequest, seed: str | None) -> ScriptedOutput:
    """The generated answer to an operation request no fixture owns."""
    generator = GENERATORS.get(request.operation)
    if generator is None or not isinstance(request, OperationRequest):
        raise NoMatchingScenario(
            f"no scenario of this session answers {request.operation} requests, and llmts generates "
            f"no {request.operation} answers; script one in a scenario with operation {request.operation!r}"
        )
    return generator(request, seed or DEFAULT_SEED)


def check_result_fits(request: NeutralRequest, output: ScriptedOutput, where: str) -> None:
    """An operation fixture answers the request's inputs: one vector per text (of the dimension the
    request names), one moderation verdict or one per input, rerank indexes within the documents."""
    result = output.result
    if not isinstance(request, OperationRequest):
        return  # an explained request (POST /admin-api/match/explain) carries no inputs
    count = len(request.inputs)
    if isinstance(result, EmbeddingsResult):
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
    elif isinstance(result, ModerationResult):
        if len(result.verdicts) not in (1, count):
            raise FixtureMismatch(
                f"{where} scripts {len(result.verdicts)} moderation results but the request has "
                f"{count} input(s)"
            )
    elif isinstance(result, (ImagesResult, TranscriptResult, AudioResult)):
        check_media_fits(request, output, where)
    elif isinstance(result, RerankResult):
        for index, _score in result.hits:
            if index >= count:
                raise FixtureMismatch(
                    f"{where} ranks document {index} but the request has {count} document(s)"
                )


def operation_input_tokens(request: OperationRequest) -> int:
    """Input tokens of an operation request: its texts (and query) by the chat estimate, no framing."""
    return sum(estimate_text_tokens(text) for text in request.inputs) + estimate_text_tokens(request.query)
