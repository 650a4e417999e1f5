"""The kinds a scripted response is exactly one of come from the operations table
(llmts/schema/operations/): each is a field of the response fixture, the validation message names them
all, and docs/configuration.md says what the code does, so a new operation's row points at every place
of that document it must join."""

from __future__ import annotations

import json
import re

import pytest
from pydantic import ValidationError

from llmts.errors import ConfigurationInvalid
from llmts.schema.fixtures import _RESPONSE_KINDS, ResponseFixture
from llmts.schema.operations import OPERATIONS
from llmts.schema.validation import parse_session_config_json
from tests.support.docs import ROOT, doc_section

_CONFIGURATION = "docs/configuration.md"


def test_every_kind_an_operation_is_answered_by_is_a_fixture_field() -> None:
    fields = {field.alias or name for name, field in ResponseFixture.model_fields.items()}
    assert {kind for kinds in OPERATIONS.values() for kind in kinds} | {"error", "recorded"} == set(
        _RESPONSE_KINDS
    )
    assert set(_RESPONSE_KINDS) <= fields
    documented = (ROOT / _CONFIGURATION).read_text(encoding="utf-8")
    assert [kind for kind in _RESPONSE_KINDS if f"`{kind}`" not in documented] == []


def test_two_kinds_are_refused_naming_every_kind() -> None:
    with pytest.raises(ValidationError) as refused:
        ResponseFixture.model_validate({"text": "a", "json": {}})
    message = refused.value.errors()[0]["msg"]
    assert message == (
        "Value error, a response needs exactly one of " + ", ".join(_RESPONSE_KINDS) + " "
        "(or text with tool_calls) (found: text, json)"
    )


def test_the_configuration_reference_shows_the_real_validation_message_and_every_operation() -> None:
    example = doc_section(_CONFIGURATION, "## Validation")
    shown = json.loads(example.split("```json\n", 1)[1].split("```", 1)[0])
    invalid = {"scenarios": [{"responses": [{"text": "a"}, {"text": "a", "json": {}}]}]}
    with pytest.raises(ConfigurationInvalid) as refused:
        parse_session_config_json(json.dumps(invalid).encode())  # what POST /admin-api/configure runs
    [problem] = refused.value.details
    assert shown["error"]["details"] == [{"path": problem["path"], "message": problem["message"]}]
    assert shown["error"]["message"] == str(refused.value)

    scenarios = doc_section(_CONFIGURATION, "## Scenarios").splitlines()
    [operation_row] = [line for line in scenarios if line.startswith("| `operation`")]
    operations = doc_section(_CONFIGURATION, "### Operations")
    fixtures = doc_section(_CONFIGURATION, "## Response fixtures").split("\n\n", 2)[1]
    assert [name for name in OPERATIONS if f"`{name}`" not in operation_row] == []
    assert [name for name in OPERATIONS if f"`{name}`" not in operations] == []
    assert [kind for kind in _RESPONSE_KINDS if f"`{kind}`" not in fixtures] == []


def test_the_dashboard_shows_every_field_of_a_response_but_its_delivery_settings() -> None:
    """The dashboard's configuration view names a response by its keys, except the settings of how it is
    delivered: a new kind shows with no change there, and a new setting must join that list, or it would
    be shown as what the response answers with."""
    source = (ROOT / "llmts/dashboard/static/views/config.js").read_text(encoding="utf-8")
    listed = re.search(r"DELIVERY_SETTINGS = new Set\(\[(.*?)\]\)", source)
    assert listed is not None
    settings = set(re.findall(r'"(\w+)"', listed.group(1)))
    fields = {field.alias or name for name, field in ResponseFixture.model_fields.items()}
    assert settings == fields - set(_RESPONSE_KINDS) - {"reasoning"}  # reasoning is shown with its text
