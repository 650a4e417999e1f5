"""Which graph or scenario owns a request, and why: the one selection function.

Theory of operation (docs/architecture.md, "Selection"): admission (``Session.admit``) and
``POST /admin-api/match/explain`` both call ``select``; explanation is selection without the commit.
``select`` is pure: it reads the plan, the scenario cursors and the conversation book and changes
nothing. Admission then commits what it chose (a graph reservation, or a scenario cursor step) or raises
its error; explanation renders it, plus every candidate's own verdict (``explain=True`` keeps evaluating
after the owner is found, where admission stops).

Order: an unconfigured session echoes (a request of an operation other than chat: ``generate``); a model
the session does not serve (when it lists its models) is a 404; graphs come before scenarios, each list
in declared order (graphs answer chat only; a scenario only its own operation); the first graph that
claims the request (state for the identity, or a matching start step) or the first scenario whose filters
match owns it, with its error (a 409) if it cannot answer (a scenario answering several choices checks
all it would take).
Nothing owning it: a non-chat request is generated; otherwise the first filter-matching graph says why
its start step did not match, else no scenario serves the request.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from llmts.errors import (
    ConversationCompleted,
    ConversationExhausted,
    ConversationStepMismatch,
    FixtureMismatch,
    LlmtsError,
    ModelNotFound,
    NoMatchingScenario,
    NoRecordedMatch,
    ScenarioExhausted,
)
from llmts.runtime.compat import check_delivery_fits, check_output_fits
from llmts.runtime.conversations.book import ConversationBook, Inputs, Verdict
from llmts.runtime.conversations.graph import GraphPlan
from llmts.runtime.conversations.identity import Caller
from llmts.runtime.plans import ScenarioPlan, SessionPlan
from llmts.runtime.recording.match import no_recorded_match
from llmts.schema.neutral import NeutralRequest
from llmts.schema.operations import CHAT, CHAT_LIKE, operation_family

__all__ = ["MISSES", "Outcome", "ScenarioVerdict", "Selection", "judge_scenario", "queue_position", "select"]

# What "the session's own fixtures cannot answer this request" means: in a session replaying a
# recording these become ``llm_test_server_no_recorded_match`` (naming the closest recorded request), and
# a session with an upstream for the provider forwards them (docs/recording.md).
MISSES: tuple[type[LlmtsError], ...] = (
    NoMatchingScenario,
    ScenarioExhausted,
    ConversationStepMismatch,
    ConversationCompleted,
    ConversationExhausted,
    NoRecordedMatch,
)

Outcome = Literal[
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


# Not frozen (nothing changes it after construction): one is built per request, and a frozen
# dataclass costs about four times as much to construct (docs/architecture.md, "The server's hot path").
@dataclass(slots=True)
class ScenarioVerdict:
    """What one scenario would do with the request: the response it would answer with, or its error."""

    index: int
    scenario: ScenarioPlan
    matches: bool
    position: int | None = None  # the response index it would answer with
    error: LlmtsError | None = None
    # The response indexes of choices 2..n when the request asks for several answers (a wire's ``n``).
    more: tuple[int, ...] = ()

    @property
    def next_cursor(self) -> int:
        """Where the scenario's cursor goes once admission commits this verdict."""
        last = self.more[-1] if self.more else self.position
        assert last is not None
        return last + 1


@dataclass(slots=True)
class Selection:
    """The owner of a request (a graph verdict or a scenario verdict), the outcome and its error."""

    outcome: Outcome
    error: LlmtsError | None = None
    inputs: Inputs | None = None
    graph: Verdict | None = None
    scenario: ScenarioVerdict | None = None
    # With ``explain=True`` only: every candidate in precedence order (a graph whose filters do not match
    # has no verdict).
    graphs: list[tuple[GraphPlan, Verdict | None]] = field(default_factory=list)
    scenarios: list[ScenarioVerdict] = field(default_factory=list)

    @property
    def owner(self) -> str | None:
        if self.graph is not None:
            return self.graph.graph.id
        return self.scenario.scenario.id if self.scenario is not None else None

    @property
    def step(self) -> str | None:
        verdict = self.graph
        return verdict.step.id if verdict is not None and verdict.step is not None else None


def judge_scenario(
    index: int, scenario: ScenarioPlan, cursor: int, request: NeutralRequest, *, in_stream: bool
) -> ScenarioVerdict:
    """The scenario's next response (after its terminal policy) and whether it fits the request; for a
    request asking ``request.choices`` > 1 answers (a wire's ``n``), the next that many responses, all
    checked before the cursor may move. A scripted error answers the whole request alone, so only a
    first one is taken; an error among choices 2..n is a mismatch."""
    positions: list[int] = []
    while len(positions) < request.choices:
        position = queue_position(scenario, cursor)
        first = positions[0] if positions else None
        if position is None:
            count = len(scenario.responses)
            return ScenarioVerdict(
                index,
                scenario,
                True,
                first,
                ScenarioExhausted(
                    f"scenario {scenario.id!r} has no responses left ({count} configured, all consumed)"
                ),
            )
        response = scenario.responses[position]
        where = f"scenario {scenario.id!r} response {position}"
        try:
            if response.error is not None and positions:
                raise FixtureMismatch(
                    f"{where} is an error, but the request asks for {request.choices} choices (n) and an "
                    "error can only answer a request as its first response"
                )
            if response.output is not None:
                check_output_fits(request, response.output, where)
            if response.stream_delivery is not None and not positions:
                check_delivery_fits(
                    request, response.stream_delivery, where, response.output, in_stream=in_stream
                )
        except FixtureMismatch as mismatch:
            return ScenarioVerdict(index, scenario, True, first if first is not None else position, mismatch)
        positions.append(position)
        cursor = position + 1
        if response.error is not None:
            break
    return ScenarioVerdict(index, scenario, True, positions[0], more=tuple(positions[1:]))


def queue_position(scenario: ScenarioPlan, cursor: int) -> int | None:
    """The queue position a cursor points at under the scenario's terminal policy (None: exhausted)."""
    count = len(scenario.responses)
    if cursor < count:
        return cursor
    if scenario.terminal_policy == "repeat_last_response":
        return count - 1
    if scenario.terminal_policy == "restart":
        return 0
    return None


def select(
    plan: SessionPlan | None,
    cursors: Sequence[int],
    book: ConversationBook | None,
    request: NeutralRequest,
    caller: Caller,
    *,
    in_stream: bool,
    explain: bool = False,
) -> Selection:
    """Who owns ``request`` and why; changes nothing. ``explain`` also judges the candidates after the
    owner (for ``/admin-api/match/explain``); admission stops at the owner. In a session that holds
    recorded answers, a miss is explained against the closest recorded request."""
    selection = _select(plan, cursors, book, request, caller, in_stream=in_stream, explain=explain)
    error = selection.error
    if plan is not None and plan.recordings and isinstance(error, MISSES):
        selection.error = no_recorded_match(plan.recordings, request, error.message)
    return selection


def _select(
    plan: SessionPlan | None,
    cursors: Sequence[int],
    book: ConversationBook | None,
    request: NeutralRequest,
    caller: Caller,
    *,
    in_stream: bool,
    explain: bool = False,
) -> Selection:
    operation = operation_family(request.operation)
    if plan is None:
        return Selection("echo" if operation in CHAT_LIKE else "generate")
    if plan.models is not None and request.model not in plan.models:
        error = ModelNotFound(
            f"The model `{request.model}` does not exist or you do not have access to it.", param="model"
        )
        return Selection("rejected", error)
    selection = Selection("rejected")
    first_unclaimed: Verdict | None = None
    # Conversation graphs answer chat requests only; other operations are scenarios' or generated.
    for graph in book.graphs if book is not None and operation == CHAT else ():
        if not graph.matches(request.provider, request.model, caller.conversation_id):
            if explain:
                selection.graphs.append((graph, None))
            continue
        assert book is not None
        if selection.inputs is None:
            selection.inputs = Inputs(request, caller)
        verdict = book.judge(graph, selection.inputs, explain=explain)
        if explain:
            selection.graphs.append((graph, verdict))
        if verdict.claims and selection.graph is None:
            selection.graph = verdict
            selection.error = book.obstacle(verdict, request, in_stream=in_stream)
            if verdict.action is not None and selection.error is None:
                selection.outcome = verdict.action.value  # type: ignore[assignment]
            if not explain:
                return selection
        elif not verdict.claims and first_unclaimed is None:
            first_unclaimed = verdict
    owned = selection.graph is not None
    for index, scenario in enumerate(plan.scenarios):
        if not scenario.matches(request.provider, request.model, operation):
            if explain:
                selection.scenarios.append(ScenarioVerdict(index, scenario, False))
            continue
        scenario_verdict = judge_scenario(index, scenario, cursors[index], request, in_stream=in_stream)
        if explain:
            selection.scenarios.append(scenario_verdict)
        if not owned:
            owned = True
            selection.scenario = scenario_verdict
            selection.error = scenario_verdict.error
            selection.outcome = "scenario" if scenario_verdict.error is None else "rejected"
            if not explain:
                return selection
    if not owned and operation not in CHAT_LIKE:
        selection.outcome = "generate"  # no scenario scripts this operation: the runtime generates it
    elif not owned:
        unclaimed = book.unclaimed(first_unclaimed) if book is not None and first_unclaimed else None
        selection.error = unclaimed or NoMatchingScenario(
            f"no scenario of this session serves {request.provider} requests for model {request.model!r}"
        )
    return selection
