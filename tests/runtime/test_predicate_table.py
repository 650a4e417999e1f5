"""The predicate table (``llmts.schema.predicates``) is the one list of ``when`` keys: the schema model,
the runtime compiler and the builder are pinned to it, and the compilers, which declare themselves by
name, fail the runtime's import unless they match it (docs/contributing.md, "Adding a conversation
predicate")."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
import textwrap
from typing import Any, get_args

import annotated_types
import pytest

from llmts.runtime.conversations.predicates import COMPILERS, Check, compilers_of, compiles
from llmts.schema import LIMITS
from llmts.schema.builder import StepBuilder
from llmts.schema.conversations import StepWhen
from llmts.schema.predicates import PREDICATES, PREDICATES_BY_NAME
from tests.support.docs import doc_section

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
    """None is renamed or dropped; a new predicate's row comes on top."""
    assert set(NAMES) >= {
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


def _max_length(annotation: Any) -> int | None:
    for field in get_args(annotation)[1:]:
        for bound in getattr(field, "metadata", ()):
            if isinstance(bound, annotated_types.MaxLen):
                return bound.max_length
    return None


def test_the_docs_show_every_predicate_in_evaluation_order_and_the_text_limits_users() -> None:
    predicates = doc_section("docs/conversations.md", "### Predicates")
    rows = re.findall(r"^\| `(\w+)[`:]", predicates.split("| --- |", 1)[1], re.MULTILINE)
    assert sorted(rows) == sorted(NAMES)  # the predicates table
    order = predicates.split("evaluated, and failures listed, in the order ", 1)[1].split(".\n", 1)[0]
    assert re.findall(r"`(\w+)`", order) == NAMES
    limits = doc_section("docs/configuration.md", "## Limits").splitlines()
    [row] = [line for line in limits if line.startswith("| `predicate_chars` |")]
    bounded = [spec.name for spec in PREDICATES if _max_length(spec.annotation) == LIMITS["predicate_chars"]]
    assert sorted(re.findall(r"`(\w+)`", row.split("|")[3])) == sorted(bounded)


# --- the compilers declare themselves; a mismatch with the table fails loudly -----------------------------


@compiles("latest_text_contain")  # misnamed: the table says latest_text_contains
def _misnamed(needle: str, when: StepWhen) -> Check:
    return lambda view: False


def _undeclared(value: Any, when: StepWhen) -> Check:
    return lambda view: False


@compiles("turn")
def _second_turn(expected: int, when: StepWhen) -> Check:
    return lambda view: False


def test_the_compilers_are_the_declared_functions_in_table_order() -> None:
    assert compilers_of(reversed(list(COMPILERS.values())), PREDICATES) == COMPILERS
    assert list(compilers_of(reversed(list(COMPILERS.values())), PREDICATES)) == NAMES
    # Functions without ``@compiles`` and other values are not compilers.
    assert compilers_of([*COMPILERS.values(), _undeclared, len, "turn"], PREDICATES) == COMPILERS


def test_a_misnamed_compiler_fails() -> None:
    with pytest.raises(
        RuntimeError, match="_misnamed compiles the predicate 'latest_text_contain', which the"
    ):
        compilers_of([*COMPILERS.values(), _misnamed], PREDICATES)


def test_a_predicate_without_a_compiler_fails() -> None:
    without = [compiler for name, compiler in COMPILERS.items() if name != "system_contains"]
    with pytest.raises(RuntimeError, match=r"the predicate\(s\) system_contains of the predicate table"):
        compilers_of(without, PREDICATES)


def test_a_second_compiler_of_a_predicate_fails() -> None:
    with pytest.raises(RuntimeError, match="_turn and _second_turn both compile 'turn'"):
        compilers_of([*COMPILERS.values(), _second_turn], PREDICATES)


def test_importing_the_runtime_fails_when_a_compiler_has_no_row() -> None:
    """The check runs when the runtime is imported (the server's start), not only in tests."""
    code = textwrap.dedent(
        """
        from llmts.schema import predicates
        predicates.PREDICATES = tuple(s for s in predicates.PREDICATES if s.name != "declares_tool")
        import llmts.runtime.conversations.predicates
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "RuntimeError: _declares_tool compiles the predicate 'declares_tool', which the" in result.stderr
