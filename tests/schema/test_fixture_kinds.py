"""The kinds a scripted response is exactly one of come from the operations table
(llmts/schema/operations.py): each is a field of the response fixture, and the validation message names
them all."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from llmts.schema.fixtures import _RESPONSE_KINDS, ResponseFixture
from llmts.schema.operations import OPERATIONS


def test_every_kind_an_operation_is_answered_by_is_a_fixture_field() -> None:
    fields = {field.alias or name for name, field in ResponseFixture.model_fields.items()}
    assert {kind for kinds in OPERATIONS.values() for kind in kinds} | {"error", "recorded"} == set(
        _RESPONSE_KINDS
    )
    assert set(_RESPONSE_KINDS) <= fields
    documented = (Path(__file__).resolve().parents[2] / "docs" / "configuration.md").read_text()
    assert [kind for kind in _RESPONSE_KINDS if f"`{kind}`" not in documented] == []


def test_two_kinds_are_refused_naming_every_kind() -> None:
    with pytest.raises(ValidationError) as refused:
        ResponseFixture.model_validate({"text": "a", "json": {}})
    message = refused.value.errors()[0]["msg"]
    assert message == (
        "Value error, a response needs exactly one of " + ", ".join(_RESPONSE_KINDS) + " "
        "(or text with tool_calls) (found: text, json)"
    )
