"""Conversation graphs in the session configuration, and the diagnostics models of their runtime state.

A graph is a set of steps. Each step has predicates on the request (``when``), exactly one response
fixture, and either ordered alternative next steps (``then``) or ``complete: true``. Structure is checked
here, once, at configure time; the runtime compiles graphs into plans.

Cross-step problems are raised as ``PydanticCustomError("llmts_at", ...)`` whose ``at`` context names the
path inside the graph (``steps[1].then[0]``), so the 400's ``details`` point at the offending field.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    create_model,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic_core import PydanticCustomError

from llmts.catalog import registry as catalog
from llmts.schema.fixtures import LIMITS, ProviderNamespace, ResponseFixture, TerminalPolicy
from llmts.schema.model_base import STRICT, without_none
from llmts.schema.predicates import (
    PREDICATES,
    PREDICATES_BY_NAME,
    JsonPathMatch,
    JsonPathValueMatch,
    Role,
    ToolResultMatch,
)

__all__ = [
    "DEFAULT_MAX_CONVERSATIONS",
    "DEFAULT_MAX_CONVERSATION_BYTES",
    "DEFAULT_MAX_STEPS",
    "ConversationCapacity",
    "ConversationGraph",
    "ConversationStatus",
    "ConversationStep",
    "ExplainMessage",
    "ExplainRequest",
    "ExplainToolCall",
    "ExplainedCandidate",
    "ExplainedRequest",
    "ExplainedStep",
    "JsonPathMatch",
    "JsonPathValueMatch",
    "MatchExplanation",
    "StepWhen",
    "ToolResultMatch",
    "check_conversation_references",
    "nested_error",
]

DEFAULT_MAX_STEPS = 64
DEFAULT_MAX_CONVERSATIONS = 256
DEFAULT_MAX_CONVERSATION_BYTES = 16 * 1024 * 1024

_ID = LIMITS["identifier_chars"]


def nested_error(at: str, message: str) -> PydanticCustomError:
    """A validation error about ``at`` (a path relative to the model that raises it)."""
    return PydanticCustomError("llmts_at", "{message}", {"at": at, "message": message})


class _WhenRules(BaseModel):
    """What every ``StepWhen`` shares; its fields come from the predicate table (``predicates.py``)."""

    model_config = STRICT

    def is_set(self, name: str) -> bool:
        """Whether predicate ``name`` is configured (a nullable one is set even when its value is null)."""
        if PREDICATES_BY_NAME[name].nullable:
            return name in self.model_fields_set
        return getattr(self, name) is not None

    def value_of(self, name: str) -> Any:
        """The configured value of predicate ``name`` (None when unset)."""
        return getattr(self, name)

    def predicates(self) -> list[tuple[str, Any]]:
        """The configured predicates, ``(name, value)`` in table (evaluation) order."""
        return [(spec.name, getattr(self, spec.name)) for spec in PREDICATES if self.is_set(spec.name)]

    @property
    def has_tool_arguments(self) -> bool:
        return self.is_set("tool_arguments_json")

    @model_validator(mode="after")
    def _requirements(self) -> _WhenRules:
        for spec in PREDICATES:
            if spec.requires is not None and self.is_set(spec.name) and not self.is_set(spec.requires[0]):
                needed, why = spec.requires
                raise nested_error(spec.name, f"{spec.name} needs {needed} beside it ({why})")
        return self

    @model_serializer(mode="wrap")
    def _serialize(self, handler: Any) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        return {key: value for key, value in data.items() if self.is_set(key)}


if TYPE_CHECKING:
    StepWhen = _WhenRules
else:
    StepWhen = create_model(
        "StepWhen",
        __base__=_WhenRules,
        __module__=__name__,
        __doc__="Predicates on the request; all present ones must pass (an empty ``when`` always passes).",
        **{spec.name: (spec.annotation | None, None) for spec in PREDICATES},
    )


class ConversationStep(BaseModel):
    """One step: predicates, one response, then ordered alternatives or ``complete``."""

    model_config = STRICT

    id: str = Field(min_length=1, max_length=_ID)
    when: StepWhen = Field(default_factory=StepWhen)
    response: ResponseFixture
    then: list[str] | None = Field(default=None, min_length=1, max_length=LIMITS["steps_per_conversation"])
    complete: bool = False

    @model_validator(mode="after")
    def _one_way_on(self) -> ConversationStep:
        if self.complete and self.then is not None:
            raise nested_error("then", "a step has either then (next steps) or complete: true, not both")
        if not self.complete and self.then is None:
            raise nested_error("then", "a step needs then (one or more next steps) or complete: true")
        seen: set[str] = set()
        for index, target in enumerate(self.then or ()):
            if not target or len(target) > _ID:
                raise nested_error(f"then[{index}]", f"step ids are 1..{_ID} characters")
            if target in seen:
                raise nested_error(f"then[{index}]", f"next step {target!r} is listed twice")
            seen.add(target)
        return self

    @model_serializer(mode="wrap")
    def _serialize(self, handler: Any) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if not data.get("when"):
            data.pop("when", None)
        if data.get("then") is None:
            data.pop("then", None)
        if not data.get("complete"):
            data.pop("complete", None)
        return data


class ConversationGraph(BaseModel):
    """A branching, multi-turn script. Selected like a scenario (``model``/``provider`` filters), with its
    own state per conversation identity."""

    model_config = STRICT

    id: str | None = Field(default=None, min_length=1, max_length=_ID)
    model: str | None = Field(default=None, min_length=1, max_length=LIMITS["model_id_chars"])
    provider: ProviderNamespace | None = None
    # Only requests of this conversation id (``X-Llm-Test-Server-Conversation``) are this graph's (a
    # recording keys its graphs so: docs/recording.md).
    conversation_id: str | None = Field(default=None, min_length=1, max_length=128)
    start_at: str | None = Field(default=None, min_length=1, max_length=_ID)
    terminal_policy: TerminalPolicy = "reject"
    max_steps: int = Field(default=DEFAULT_MAX_STEPS, ge=1, le=LIMITS["max_steps"])
    replay_successful_requests: bool = True
    steps: list[ConversationStep] = Field(min_length=1, max_length=LIMITS["steps_per_conversation"])

    @model_validator(mode="before")
    @classmethod
    def _no_linear_queue(cls, data: Any) -> Any:
        if isinstance(data, dict) and "responses" in data:
            raise nested_error(
                "responses", "a conversation graph cannot also have a linear responses queue (use steps)"
            )
        return data

    @model_validator(mode="after")
    def _structure(self) -> ConversationGraph:
        index_of: dict[str, int] = {}
        for index, step in enumerate(self.steps):
            if step.id in index_of:
                raise nested_error(
                    f"steps[{index}].id", f"duplicate step id {step.id!r} (also steps[{index_of[step.id]}])"
                )
            index_of[step.id] = index
        if self.start_at is not None and self.start_at not in index_of:
            raise nested_error("start_at", f"start_at names no step of this graph: {self.start_at!r}")
        for index, step in enumerate(self.steps):
            for t_index, target in enumerate(step.then or ()):
                if target not in index_of:
                    raise nested_error(f"steps[{index}].then[{t_index}]", f"unknown next step {target!r}")
        reached = {self.start}
        frontier = [self.start]
        while frontier:
            for target in self.steps[index_of[frontier.pop()]].then or ():
                if target not in reached:
                    reached.add(target)
                    frontier.append(target)
        for index, step in enumerate(self.steps):
            if step.id not in reached:
                raise nested_error(
                    f"steps[{index}]",
                    f"step {step.id!r} is unreachable: no then-path leads to it from {self.start!r}",
                )
        return self

    @property
    def start(self) -> str:
        return self.start_at if self.start_at is not None else self.steps[0].id

    @model_serializer(mode="wrap")
    def _serialize(self, handler: Any) -> dict[str, Any]:
        return without_none(handler(self))


class ConversationCapacity(BaseModel):
    """Runtime admission budgets for conversation state (per session); zero rejects any new state."""

    model_config = STRICT

    max_conversations: int = Field(
        default=DEFAULT_MAX_CONVERSATIONS, ge=0, le=LIMITS["conversation_capacity_conversations"]
    )
    max_bytes: int = Field(
        default=DEFAULT_MAX_CONVERSATION_BYTES, ge=0, le=LIMITS["conversation_capacity_bytes"]
    )


class _Identified(Protocol):
    @property
    def id(self) -> str | None: ...


def check_conversation_references(
    scenarios: Sequence[_Identified],
    conversations: Sequence[ConversationGraph],
    models: Sequence[str] | None,
) -> None:
    """Graph ids are unique among graphs and scenarios (both are "scenario identities"), and a graph's
    ``model`` filter names one of the session's models (``models`` None: the session serves any model)."""
    taken = {scenario.id or f"scenario_{index}" for index, scenario in enumerate(scenarios)}
    for index, graph in enumerate(conversations):
        graph_id = graph.id or f"conversation_{index}"
        if graph_id in taken:
            raise nested_error(
                f"conversations[{index}].id", f"id {graph_id!r} is already used by a scenario or graph"
            )
        taken.add(graph_id)
        if graph.model is not None and models is not None and graph.model not in models:
            raise nested_error(
                f"conversations[{index}].model", f"{graph.model!r} is not one of the session's models"
            )


# --- diagnostics ---------------------------------------------------------------------------------------


class ConversationStatus(BaseModel):
    """``GET /admin-api/conversations``: one conversation identity's state in one graph."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    scenario: str
    provider: str
    conversation_id: str
    credential_hash: str | None
    state: Literal["awaiting", "in_flight", "completed", "exhausted"]
    busy: bool
    terminal: bool
    terminal_policy: TerminalPolicy
    run: int
    executions: int
    max_steps: int
    executed_steps: list[str]
    last_step: str | None
    last_turn: int | None
    last_successful_turn: int | None
    in_flight_step: str | None
    next_steps: list[str]
    unvisited_steps: list[str]
    replays: int
    replayable: bool
    retained_bytes: int


class ExplainToolCall(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid")

    id: str = Field(min_length=1, max_length=_ID)
    name: str = Field(min_length=1, max_length=_ID)
    # A JSON string as providers send it, or any JSON value (serialized compactly).
    arguments: Any = Field(default_factory=dict)


class ExplainMessage(BaseModel):
    """A normalized message; ``content`` (a string) is accepted as an alias of ``text``."""

    model_config = ConfigDict(defer_build=True, extra="forbid", populate_by_name=True)

    role: Role
    text: str = Field(default="", alias="content")
    tool_calls: list[ExplainToolCall] = Field(
        default_factory=list, max_length=LIMITS["tool_calls_per_response"]
    )
    tool_call_id: str | None = None


class ExplainedRequest(BaseModel):
    """The normalized request to explain (what a provider adapter would have produced)."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    model: str | None = Field(default=None, min_length=1, max_length=LIMITS["model_id_chars"])
    operation: str = "explain"
    messages: list[ExplainMessage] = Field(min_length=1)
    tool_names: list[str] = Field(default_factory=list)
    # A system prompt / instructions sent outside ``messages`` (Anthropic ``system``, Gemini
    # ``systemInstruction``); system and developer messages go in ``messages``.
    system: str = ""
    tool_choice: Any = "auto"
    response_format: Literal["text", "json_object", "json_schema"] = "text"
    stream: bool = False
    # How many answers the request asks for (a wire's ``n``): a scenario takes its next ``n`` responses.
    n: int = Field(default=1, ge=1, le=LIMITS["choices_per_request"])


class ExplainedWire(BaseModel):
    """The provider request as a client would send it: the route (``/anthropic/v1/messages``, a query
    string allowed) and its JSON body. Explained like the real request: parsed by the route, checked
    by its strict rules, then selected without commit."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    path: str = Field(min_length=2, max_length=2048, pattern=r"^/[^/]")
    body: dict[str, Any]


class ExplainRequest(BaseModel):
    """``POST /admin-api/match/explain`` body: a normalized ``request``, or the provider's ``wire``
    request (then the namespace is the route's)."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    provider_namespace: ProviderNamespace = catalog.CATALOG.default.namespace
    # The provider credential the request would present (its hash is part of the identity); absent: the
    # session's configured credential for the provider, else none.
    credential: str | None = Field(default=None, max_length=LIMITS["credential_chars"])
    # Declared before ``request``, whose check reads it.
    wire: ExplainedWire | None = None
    request: ExplainedRequest | None = Field(default=None, validate_default=True)

    @field_validator("request")
    @classmethod
    def _one_form(cls, request: ExplainedRequest | None, info: ValidationInfo) -> ExplainedRequest | None:
        wire = info.data.get("wire")
        if request is None and wire is None:
            raise ValueError("Field required (or give wire: the provider's {path, body})")
        if request is not None and wire is not None:
            raise ValueError("give request (normalized) or wire ({path, body}), not both")
        return request


class ExplainedStep(BaseModel):
    """One candidate step of a graph, evaluated against the explained request."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    step: str
    matched: bool
    # The first matching candidate in ``then`` order; later matching ones are shadowed by it.
    selected: bool
    shadowed: bool
    passed: list[str]
    failed: list[str]


class ExplainedCandidate(BaseModel):
    """A graph or scenario, in the order the runtime considers them (graphs first, then scenarios)."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    kind: Literal["conversation", "scenario"]
    scenario: str
    precedence: int
    filters_match: bool
    # Would own the request: a graph with state for the identity or whose start step matches; a
    # scenario whose filters match.
    claims: bool
    selected: bool
    # Claims the request, but an earlier candidate owns it.
    shadowed: bool
    state: str | None = None
    action: str | None = None
    step: str | None = None
    error_code: str | None = None
    error_message: str | None = None
    steps: list[ExplainedStep] = Field(default_factory=list)
    next_response_index: int | None = None


class MatchExplanation(BaseModel):
    """``POST /admin-api/match/explain``: what the request would do, computed without changing anything."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    conversation_id: str
    provider_namespace: str
    credential_hash: str | None
    model: str
    logical_turn: int
    latest_role: str | None
    outcome: Literal[
        "start",
        "execute",
        "restart",
        "repeat_last_response",
        "replay",
        "scenario",
        "echo",
        "generate",
        "rejected",
    ]
    selected_scenario: str | None
    selected_step: str | None
    error_code: str | None
    error_message: str | None
    matched_candidates: list[str]
    shadowed_candidates: list[str]
    candidates: list[ExplainedCandidate]
    # The strict rule (``strict_requests``) that rejects a ``wire`` request before any selection.
    strict_rule: str | None = None
