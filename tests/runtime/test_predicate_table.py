"""The predicate table (``llmts.schema.predicates``) is the one list of ``when`` keys: the schema model,
the runtime compiler and the builder are pinned to it (docs/contributing.md, "Adding a conversation
predicate")."""

from __future__ import annotations

import inspect

from llmts.runtime.conversations.predicates import COMPILERS
from llmts.schema.builder import StepBuilder
from llmts.schema.conversations import StepWhen
from llmts.schema.predicates import PREDICATES, PREDICATES_BY_NAME

NAMES = [spec.name for spec in PREDICATES]


def test_names_are_unique() -> None:
    assert len(NAMES) == len(set(NAMES)) == len(PREDICATES_BY_NAME)


def test_the_model_has_one_field_per_predicate_in_table_order() -> None:
    assert list(StepWhen.model_fields) == NAMES
    assert all(not field.is_required() for field in StepWhen.model_fields.values())


def test_the_compiler_has_one_check_per_predicate_in_table_order() -> None:
    assert list(COMPILERS) == NAMES


def test_requirements_name_predicates_of_the_table() -> None:
    for spec in PREDICATES:
        if spec.requires is not None:
            assert spec.requires[0] in PREDICATES_BY_NAME


def test_the_builder_takes_every_predicate_through_when() -> None:
    parameters = inspect.signature(StepBuilder.when).parameters
    assert any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    assert set(parameters) - {"self"} == {"call_id", "predicates"}  # no hand-written list of names


def test_the_contracted_names_are_all_there() -> None:
    assert set(NAMES) == {
        "latest_role",
        "latest_text_contains",
        "latest_user_contains",
        "latest_user_equals",
        "turn",
        "tool_result",
        "tool_arguments_json",
        "latest_json",
        "latest_json_value",
        "system_contains",
        "latest_text_matches",
        "declares_tool",
    }
