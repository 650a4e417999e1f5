"""The operation registry (docs/architecture.md, "Operations"): every row of ``OPERATIONS`` but chat has
a unit, each unit names a fixture field of its row, the import-time check refuses a unit and a table
that disagree, and a unit's parts work on their own, without a session."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import types
from typing import get_args

import pytest
from pydantic import ValidationError

from llmts.errors import FixtureMismatch
from llmts.runtime.operations import UNITS, compile_result, content_frames
from llmts.runtime.operations.embeddings import EMBEDDINGS, EmbeddingsInput
from llmts.runtime.operations.images import IMAGES, ImagesInput
from llmts.runtime.operations.rerank import RERANK, RerankInput
from llmts.runtime.operations.unit import OperationUnit, units_of
from llmts.schema.config import SessionConfig
from llmts.schema.fixtures import ResponseFixture
from llmts.schema.neutral import OperationInput, OperationRequest, ScriptedOutput, build
from llmts.schema.operation_row import OperationRow
from llmts.schema.operations import CHAT_LIKE, OPERATION_LIMITS, OPERATIONS, Operation, rows_of
from llmts.schema.operations.embeddings import EmbeddingsResult
from llmts.schema.operations.rerank import RerankResult

_SCHEMA_MODULES = [
    info.name for info in pkgutil.iter_modules(importlib.import_module("llmts.schema.operations").__path__)
]


def test_every_operation_but_chat_has_a_unit_answered_by_a_fixture_of_its_row() -> None:
    assert list(UNITS) == [name for name in OPERATIONS if name not in CHAT_LIKE]
    for name, unit in UNITS.items():
        assert unit.name == name
        assert unit.fixture in OPERATIONS[name] and unit.fixture in ResponseFixture.model_fields
        assert issubclass(unit.input_type, OperationInput)
        assert dataclasses.is_dataclass(unit.input_type) and unit.input_type.__dataclass_params__.frozen  # type: ignore[attr-defined]
        assert set(unit.input_type.recorded_options) <= {f.name for f in dataclasses.fields(unit.input_type)}


def test_the_operation_literal_is_the_table() -> None:
    """``Operation`` (the scenario filter's type) is derived from the table: validation and the JSON
    schema name exactly its values."""
    assert get_args(Operation) == tuple(OPERATIONS)
    assert SessionConfig.model_json_schema()["$defs"]["Scenario"]["properties"]["operation"]["anyOf"][0] == {
        "enum": list(OPERATIONS),
        "type": "string",
    }


def _schema_module(name: str, *rows: OperationRow) -> types.ModuleType:
    module = types.ModuleType(name)
    for index, row in enumerate(rows):
        setattr(module, f"ROW_{index}", row)
    return module


def test_the_table_is_collected_from_the_rows_the_schema_modules_declare() -> None:
    """Each operation's schema module (llmts/schema/operations/) declares its row; the package collects
    them (chat first, realtime last) and refuses a name or a limit declared twice."""
    modules = [importlib.import_module(f"llmts.schema.operations.{name}") for name in _SCHEMA_MODULES]
    assert {row.name: row.kinds for row in rows_of(modules)} == dict(OPERATIONS)
    assert {name for row in rows_of(modules) for name in row.limits} < set(OPERATION_LIMITS)
    sentiments = OperationRow("sentiment", ("sentiments",), {"sentiments_per_response": 2048})
    rows = rows_of([*modules, _schema_module("m.sentiment", sentiments)])
    assert rows[-2:] == (sentiments, rows_of(modules)[-1]) and rows[-1].name == "realtime"
    with pytest.raises(RuntimeError, match=r"m\.again declares operation 'rerank' a second time"):
        rows_of([*modules, _schema_module("m.again", OperationRow("rerank", ("rerank",)))])
    with pytest.raises(RuntimeError, match=r"m\.voice declares operation 'realtime' a second time"):
        rows_of([_schema_module("m.voice", OperationRow("realtime", ("audio",)))])
    clash = OperationRow("sentiment", ("sentiments",), {"embedding_dimensions": 8})
    with pytest.raises(
        RuntimeError, match="limit 'embedding_dimensions', which operation 'embeddings' already"
    ):
        rows_of([*modules, _schema_module("m.sentiment", clash)])
    reused = next(row for row in rows_of(modules) if row.name == "rerank")
    # A row another module imports is the same row, not a second declaration.
    assert rows_of([*modules, _schema_module("m.reuses", reused)]) == rows_of(modules)
    assert len(set(rows_of(modules))) == len(OPERATIONS)  # rows hash (their limits are left out)
    shared = OperationRow("sentiment", ("sentiments",), {"operation_inputs": 8})
    with pytest.raises(RuntimeError, match="which the shared input limits already has"):
        rows_of([_schema_module("m.sentiment", shared)])


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
    with pytest.raises(
        RuntimeError, match="'rerank' is answered by fixture 'rerank', which is not a field of"
    ):
        units_of(real, OPERATIONS, set(fields) - {"rerank"})
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


def test_a_compiled_answer_dumps_its_result_whole_and_loads_only_a_result() -> None:
    """``ScriptedOutput.result`` is typed by the base every result model subclasses: dumped as its own
    model (not as the empty base), and a mapping that is no result is refused, not emptied."""
    output = EMBEDDINGS.compile([[1.0, 0.5]])
    assert output.model_dump()["result"] == {"vectors": ((1.0, 0.5),)}
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        ScriptedOutput.model_validate({"kind": "embeddings", "result": {"vectors": [[1.0]]}})
