"""The conversation predicate table: every ``when`` key of a graph step, as one entry each.

Theory of operation (docs/architecture.md, "Conversation predicates"): a predicate is one row of
``PREDICATES``. The row says what the configuration accepts under that key (a pydantic annotation with
its bounds), which other key it needs beside it, and how the fluent builder's short forms map onto the
configuration value. Everything else derives from the table:

* ``StepWhen`` (``conversations.py``) is built from it with ``pydantic.create_model``: one optional field
  per row, in table order;
* the fluent builder (``StepBuilder.when`` in ``builder.py``) accepts every row's name and validates by
  building ``StepWhen``;
* the runtime's ``COMPILERS`` (``llmts/runtime/conversations/predicates.py``), built from the functions
  that declare themselves a row's compiler (``@compiles("turn")``), in table order, so cheap rows are
  evaluated first; importing the runtime fails unless every row has exactly one compiler and every
  compiler a row.

The schema layer never imports the runtime, so the checks themselves live there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, Field, field_validator, model_serializer

from llmts.schema.fixtures import LIMITS
from llmts.schema.json_path import JSON_PATH_CHARS, parse_json_path
from llmts.schema.model_base import STRICT, without_none

__all__ = [
    "PATTERN_CHARS",
    "PATTERN_TIMEOUT_SECONDS",
    "PREDICATES",
    "PREDICATES_BY_NAME",
    "JsonPathMatch",
    "JsonPathValueMatch",
    "PredicateSpec",
    "Role",
    "ToolResultMatch",
]

Role = Literal["system", "developer", "user", "assistant", "tool"]

_ID = LIMITS["identifier_chars"]
_TEXT = LIMITS["predicate_chars"]

# ``latest_text_matches``: the pattern's length, and how long one search may run before the predicate
# fails (the ``regex`` package checks the timeout inside its matching loop, so a catastrophic pattern
# cannot hold the single gevent worker). Documented in docs/conversations.md.
PATTERN_CHARS = LIMITS["pattern_chars"]
PATTERN_TIMEOUT_SECONDS = 0.05


def _compilable(pattern: str) -> str:
    import regex  # on first use: only configurations with patterns need it (~1.5 MB resident)

    try:
        regex.compile(pattern)
    except regex.error as exc:
        raise ValueError(f"not a valid regular expression: {exc}") from None
    return pattern


class ToolResultMatch(BaseModel):
    """The latest message is a tool result for a call of tool ``name`` (and id ``call_id``, if given)."""

    model_config = STRICT

    name: str = Field(min_length=1, max_length=_ID)
    call_id: str | None = Field(default=None, min_length=1, max_length=_ID)

    @model_serializer(mode="wrap")
    def _serialize(self, handler: Any) -> dict[str, Any]:
        return without_none(handler(self))


class _PathMatch(BaseModel):
    model_config = STRICT

    path: str = Field(min_length=1, max_length=JSON_PATH_CHARS)

    @field_validator("path")
    @classmethod
    def _supported_path(cls, value: str) -> str:
        parse_json_path(value)
        return value


class JsonPathMatch(_PathMatch):
    """The field at ``path`` of the latest message's JSON equals ``expected_json`` structurally. A string
    ``expected_json`` that holds JSON text also matches the value it encodes."""

    expected_json: Any


class JsonPathValueMatch(_PathMatch):
    """The field at ``path`` of the latest message's JSON equals ``value`` structurally."""

    value: Any


@dataclass(frozen=True, slots=True)
class PredicateSpec:
    """One ``when`` key: what it accepts, what it needs beside it, and the builder's short forms."""

    name: str
    # The configuration value's type, bounds and validators (``Annotated[..., Field(...)]``).
    annotation: Any
    # One line for docs and errors: the predicate passes when ...
    passes_when: str
    # Another key this one needs in the same ``when`` (and why, for the error message).
    requires: tuple[str, str] | None = None
    # The value may be JSON ``null``: presence, not ``None``, says the key is set.
    nullable: bool = False
    # Object-valued keys: their field names, in the order the builder's tuple form lists them; a bare
    # scalar is the first field (``tool_result="get_weather"``).
    fields: tuple[str, ...] = ()

    def from_builder(self, value: Any) -> Any:
        """The configuration value of the builder's argument (tuple and scalar short forms expanded)."""
        if not self.fields or isinstance(value, dict):
            return value
        if isinstance(value, tuple):
            return dict(zip(self.fields, value, strict=False))
        return {self.fields[0]: value}


def _text(min_length: int = 1) -> Any:
    return Annotated[str, Field(min_length=min_length, max_length=_TEXT)]


# Evaluation order: cheap checks first.
PREDICATES: tuple[PredicateSpec, ...] = (
    PredicateSpec("turn", Annotated[int, Field(ge=1)], "the request's logical turn is this number"),
    PredicateSpec("latest_role", Role, "the final normalized message has this role"),
    PredicateSpec(
        "declares_tool",
        Annotated[str, Field(min_length=1, max_length=_ID)],
        "the request declares a tool of this name",
    ),
    PredicateSpec(
        "latest_user_equals",
        _text(min_length=0),
        "the final message is a user message whose text is exactly this string",
    ),
    PredicateSpec(
        "latest_user_contains",
        _text(),
        "the final message is a user message whose text contains this string",
    ),
    PredicateSpec("latest_text_contains", _text(), "the final message's text contains this string"),
    PredicateSpec(
        "system_contains",
        _text(),
        "a system prompt or instructions of the request contain this string",
    ),
    PredicateSpec(
        "tool_result",
        ToolResultMatch,
        "the request ends with tool results, one answering a call of this tool (and call id)",
        fields=("name", "call_id"),
    ),
    PredicateSpec(
        "tool_arguments_json",
        Any,
        "the call tool_result names has these arguments (structural JSON equality)",
        requires=("tool_result", "the call it checks"),
        nullable=True,
    ),
    PredicateSpec(
        "latest_json",
        JsonPathMatch,
        "the final message's JSON has this value at path (JSON text also matches what it encodes)",
        fields=("path", "expected_json"),
    ),
    PredicateSpec(
        "latest_json_value",
        JsonPathValueMatch,
        "the final message's JSON has this value at path",
        fields=("path", "value"),
    ),
    PredicateSpec(
        "latest_text_matches",
        Annotated[str, Field(min_length=1, max_length=PATTERN_CHARS), AfterValidator(_compilable)],
        "a regular expression search finds a match in the final message's text",
    ),
)

PREDICATES_BY_NAME: dict[str, PredicateSpec] = {spec.name: spec for spec in PREDICATES}
