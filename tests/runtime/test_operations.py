"""The operation infrastructure in memory (docs/architecture.md, "Operations"): scenario operation
filters, generated answers, fixture fit checks, input tokens, and the generators' properties."""

from __future__ import annotations

import math

import pytest

from llmts.errors import FixtureMismatch, InvalidRequest, NoMatchingScenario, ScenarioExhausted
from llmts.runtime import SessionRegistry
from llmts.runtime.conversations import DEFAULT_CALLER
from llmts.runtime.operations import generate
from llmts.runtime.operations.embeddings import EmbeddingsInput, embed_texts
from llmts.runtime.operations.moderation import ModerationInput
from llmts.runtime.operations.rerank import RerankInput
from llmts.runtime.operations.scoring import moderate_texts, rank_documents
from llmts.schema import NeutralMessage, NeutralRequest, SessionConfig
from llmts.schema.neutral import OperationInput, OperationRequest, build
from llmts.schema.operations import OPERATIONS, operation_family
from llmts.schema.operations.embeddings import EmbeddingsResult
from llmts.schema.operations.moderation import ModerationResult
from llmts.schema.operations.rerank import RerankResult
from tests.runtime.doubles import CountingIds, FixedClock


def _chat(text: str = "hi") -> NeutralRequest:
    return NeutralRequest(
        provider="openai",
        operation="chat.completions",
        model="m",
        messages=(NeutralMessage(role="user", text=text),),
    )


def _operation(operation: str, given: OperationInput) -> OperationRequest:
    return build(
        OperationRequest, provider="openai", operation=operation, model="m", messages=(), input=given
    )


def _embed(*inputs: str, dimensions: int | None = None, default: int = 8) -> OperationRequest:
    return _operation("embeddings", EmbeddingsInput(inputs, dimensions, default))


def _session(config: dict[str, object] | None = None):  # type: ignore[no-untyped-def]
    session = SessionRegistry(clock=FixedClock(1_700_000_000.0), ids=CountingIds()).create()
    if config is not None:
        session.configure(SessionConfig.model_validate(config))
    return session


def _answer(session, request):  # type: ignore[no-untyped-def]
    return session.complete(session.admit(request), request)


def test_operation_names_are_the_contract_names() -> None:
    """Users' scenarios name these (the contract): none may be renamed or dropped; a new operation adds
    its row to the table without touching this list. Chat comes first and realtime last; the rows
    between are in their modules' order (llmts/schema/operations/)."""
    contract = {"chat", "embeddings", "images", "transcription", "translation", "speech", "moderation"}
    contract |= {"rerank", "realtime"}
    assert contract <= set(OPERATIONS)
    assert next(iter(OPERATIONS)) == "chat" and list(OPERATIONS)[-1] == "realtime"
    assert operation_family("embeddings") == "embeddings"
    for wire in ("chat.completions", "responses", "messages", "generate_content", "chat", None):
        assert operation_family(wire) == "chat"


def test_a_chat_queue_is_never_consumed_by_an_embeddings_call_and_vice_versa() -> None:
    session = _session(
        {
            "scenarios": [
                {"id": "chat", "responses": [{"text": "one"}]},
                {"id": "vec", "responses": [{"embeddings": [[1.0, 0.0]]}]},
            ]
        }
    )
    vectors = _answer(session, _embed("a"))
    assert vectors.scenario_id == "vec" and vectors.output.result == EmbeddingsResult(vectors=((1.0, 0.0),))
    assert _answer(session, _chat()).output.text == "one"  # the chat queue is still whole
    with pytest.raises(ScenarioExhausted, match="'vec'"):
        session.admit(_embed("a"))
    with pytest.raises(ScenarioExhausted, match="'chat'"):
        session.admit(_chat())


def test_a_non_chat_request_no_scenario_serves_is_generated_and_consumes_nothing() -> None:
    session = _session({"scenarios": [{"id": "chat", "responses": [{"text": "one"}]}]})
    first = _answer(session, _embed("hello world"))
    assert first.scenario_id is None and first.response_index is None
    assert first.output.kind == "embeddings"
    assert first.usage.input_tokens == 3 and first.usage.output_tokens == 0
    assert _answer(session, _chat()).output.text == "one"
    # Unconfigured sessions generate too, and a chat request with no owner is still a 409.
    assert _answer(_session(), _embed("x")).output.kind == "embeddings"
    with pytest.raises(NoMatchingScenario):
        _session({"scenarios": [{"operation": "embeddings", "responses": [{"embeddings": [[1.0]]}]}]}).admit(
            _chat()
        )


def test_conversation_graphs_never_claim_other_operations() -> None:
    session = _session(
        {
            "conversations": [
                {
                    "id": "g",
                    "start_at": "a",
                    "steps": [{"id": "a", "when": {"turn": 1}, "response": {"text": "x"}, "complete": True}],
                }
            ]
        }
    )
    assert _answer(session, _embed("x")).output.kind == "embeddings"
    assert session.explain(_embed("x"), DEFAULT_CALLER).outcome == "generate"


def test_fixture_fit_counts_inputs_and_requested_dimensions() -> None:
    session = _session(
        {
            "scenarios": [
                {"terminal_policy": "repeat_last_response", "responses": [{"embeddings": [[1.0, 0.0]]}]}
            ]
        }
    )
    with pytest.raises(FixtureMismatch, match="1 vector\\(s\\) but the request has 2"):
        session.admit(_embed("a", "b"))
    with pytest.raises(FixtureMismatch, match="asks for 3 dimensions"):
        session.admit(_embed("a", dimensions=3))
    assert _answer(session, _embed("a", default=1536)).output.result is not None  # default: not checked
    rerank = _session({"scenarios": [{"responses": [{"rerank": [{"index": 2, "relevance_score": 0.5}]}]}]})
    with pytest.raises(FixtureMismatch, match="ranks document 2"):
        rerank.admit(_operation("rerank", RerankInput("", ("a", "b"))))


def test_moderation_fixture_compiles_defaults_for_every_category() -> None:
    session = _session({"scenarios": [{"responses": [{"moderation": {"categories": {"violence": True}}}]}]})
    result = _answer(session, _operation("moderation", ModerationInput(("a",)))).output.result
    assert isinstance(result, ModerationResult)
    (verdict,) = result.verdicts
    assert verdict.flagged and verdict.categories["violence"] and not verdict.categories["hate"]
    assert verdict.category_scores["violence"] == 0.9 and verdict.category_scores["hate"] < 0.001
    assert len(verdict.categories) == 13


def test_generated_vectors_are_unit_length_deterministic_and_seeded() -> None:
    texts = ("the cat sat on the mat", "a cat on a mat", "stock markets fell sharply")
    vectors = embed_texts(texts, 256, "seed")
    assert all(len(v) == 256 and math.isclose(math.hypot(*v), 1.0) for v in vectors)
    assert embed_texts(texts, 256, "seed") == vectors
    assert embed_texts(texts, 256, "other") != vectors

    def cosine(a: tuple[float, ...], b: tuple[float, ...]) -> float:
        return sum(x * y for x, y in zip(a, b, strict=True))

    assert cosine(vectors[0], vectors[1]) > 0.3 > 0.1 > abs(cosine(vectors[0], vectors[2]))
    assert all(len(v) == 1 and abs(v[0]) == pytest.approx(1.0) for v in embed_texts(("", "!!"), 1, "s"))


def test_generation_is_bounded() -> None:
    with pytest.raises(InvalidRequest, match="generated_embedding_values"):
        generate(_embed(*["x"] * 200, dimensions=4096), None)
    # An operation without a generator (every non-chat operation has one since images and audio landed).
    with pytest.raises(NoMatchingScenario, match="generates no chat"):
        generate(_chat(), None)


def test_generated_moderation_and_rerank() -> None:
    (verdict,) = moderate_texts(("hello",), "s")
    assert not verdict.flagged and not any(verdict.categories.values())
    assert all(0 < score < 0.001 for score in verdict.category_scores.values())
    assert moderate_texts(("hello",), "s") == (verdict,)
    ranked = rank_documents(
        "capital of France", ("Berlin is big", "Paris is the capital of France", "France exports wine"), 2
    )
    assert isinstance(ranked, RerankResult)
    assert [index for index, _ in ranked.hits] == [1, 2]
    assert ranked.hits[0][1] > ranked.hits[1][1] > 0
