"""The operation registry (docs/architecture.md, "Operations"): every row of ``OPERATIONS`` but chat has
a unit, each unit names a fixture field of its row, the import-time check refuses a unit and a table
that disagree, and a unit's parts work on their own, without a session."""

from __future__ import annotations

import dataclasses
import types
from typing import get_args

import pytest

from llmts.errors import FixtureMismatch
from llmts.runtime.operations import UNITS, compile_result, content_frames
from llmts.runtime.operations.embeddings import EMBEDDINGS, EmbeddingsInput
from llmts.runtime.operations.images import IMAGES, ImagesInput
from llmts.runtime.operations.rerank import RERANK, RerankInput
from llmts.runtime.operations.unit import OperationUnit, units_of
from llmts.schema.fixtures import ResponseFixture
from llmts.schema.neutral import OperationInput, OperationRequest, build
from llmts.schema.operations import CHAT_LIKE, OPERATIONS, EmbeddingsResult, Operation, RerankResult


def test_every_operation_but_chat_has_a_unit_answered_by_a_fixture_of_its_row() -> None:
    assert list(UNITS) == [name for name in OPERATIONS if name not in CHAT_LIKE]
    for name, unit in UNITS.items():
        assert unit.name == name
        assert unit.fixture in OPERATIONS[name] and unit.fixture in ResponseFixture.model_fields
        assert issubclass(unit.input_type, OperationInput)
        assert dataclasses.is_dataclass(unit.input_type) and unit.input_type.__dataclass_params__.frozen  # type: ignore[attr-defined]
        assert set(unit.input_type.recorded_options) <= {f.name for f in dataclasses.fields(unit.input_type)}


def test_the_operation_literal_is_the_table() -> None:
    """``Operation`` (the scenario filter's type) spells the table's names for type checkers."""
    assert get_args(Operation) == tuple(OPERATIONS)


def _module(name: str, *units: OperationUnit) -> types.ModuleType:  # type: ignore[type-arg]
    module = types.ModuleType(name)
    for index, unit in enumerate(units):
        setattr(module, f"UNIT_{index}", unit)
    return module


def test_the_import_check_refuses_units_and_a_table_that_disagree() -> None:
    fields = ResponseFixture.model_fields
    real = [_module(f"m.{name}", unit) for name, unit in UNITS.items()]
    assert units_of(real, OPERATIONS, fields) == UNITS
    stranger = dataclasses.replace(EMBEDDINGS, name="translate_sign_language")
    with pytest.raises(RuntimeError, match="'translate_sign_language', which the operation table"):
        units_of([*real, _module("m.sign", stranger)], OPERATIONS, fields)
    with pytest.raises(RuntimeError, match=r"declares the operation\(s\) rerank of"):
        units_of([m for m in real if m.__name__ != "m.rerank"], OPERATIONS, fields)
    wrong_fixture = dataclasses.replace(RERANK, fixture="embeddings")
    with pytest.raises(RuntimeError, match="operation 'rerank' is answered by fixture 'embeddings'"):
        others = [m for m in real if m.__name__ != "m.rerank"]
        units_of([*others, _module("m.rerank", wrong_fixture)], OPERATIONS, fields)
    with pytest.raises(RuntimeError, match="second unit of operation 'rerank'"):
        units_of([*real, _module("m.again", dataclasses.replace(RERANK))], OPERATIONS, fields)


def test_a_units_compile_fit_check_and_generator_work_on_their_own() -> None:
    output = EMBEDDINGS.compile([[1.0, 0.0]])
    assert output.result == EmbeddingsResult(vectors=((1.0, 0.0),))
    EMBEDDINGS.fits(EmbeddingsInput(("a",), None, 1536), output, "fixture", False)  # the model default
    with pytest.raises(FixtureMismatch, match=r"fixture scripts vectors of 2 values but .* 3 dimensions"):
        EMBEDDINGS.fits(EmbeddingsInput(("a",), 3), output, "fixture", False)
    with pytest.raises(FixtureMismatch, match="1 vector\\(s\\) but the request has 2"):
        EMBEDDINGS.fits(EmbeddingsInput(("a", "b")), output, "fixture", False)
    assert RERANK.generate is not None
    ranked = RERANK.generate(RerankInput("capital of France", ("Berlin", "Paris, capital of France"), 1), "s")
    assert isinstance(ranked.result, RerankResult) and [i for i, _ in ranked.result.hits] == [1]
    assert RERANK.input_tokens(RerankInput("two words", ("one",))) > EMBEDDINGS.input_tokens(
        EmbeddingsInput(("one",))
    )


def test_the_lookups_dispatch_on_the_fixture_and_the_request_operation() -> None:
    fixture = ResponseFixture.model_validate({"images": [{"b64_json": "iVBORw0KGgo="}]})
    output = compile_result(fixture)
    assert output is not None and output.kind == "images"
    assert compile_result(ResponseFixture.model_validate({"text": "hi"})) is None
    streamed = ImagesInput("a cat", count=1, partial_images=2)
    request = build(
        OperationRequest, provider="openai", operation="images", model="m", messages=(), input=streamed
    )
    assert content_frames(request, output) == 2
    with pytest.raises(FixtureMismatch, match="asks for 2 \\(n\\)"):
        IMAGES.fits(ImagesInput("a cat", count=2), output, "fixture", False)


def test_inputs_are_immutable() -> None:
    given = EmbeddingsInput(("a",), 3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        given.dimensions = 4  # type: ignore[misc]
