"""``POST /admin-api/match/explain``: the selection a request would get, computed read-only.

The same judgement admission uses (``ConversationBook.judge`` and ``obstacle``), plus a read-only walk of
the scenario queues. Nothing is reserved, consumed, counted or cached.
"""

from __future__ import annotations

from typing import Any

import orjson

from llmts.errors import FixtureMismatch, LlmtsError, ModelNotFound, NoMatchingScenario, ScenarioExhausted
from llmts.runtime.compat import check_delivery_fits, check_output_fits
from llmts.runtime.conversations.book import ConversationBook, Inputs, Verdict
from llmts.runtime.conversations.identity import Caller, credential_hash
from llmts.runtime.conversations.predicates import logical_turn
from llmts.runtime.plans import ScenarioPlan, SessionPlan
from llmts.schema.conversations import (
    ExplainedCandidate,
    ExplainedRequest,
    ExplainedStep,
    MatchExplanation,
)
from llmts.schema.neutral import NeutralMessage, NeutralRequest, NeutralToolCall, ToolChoice

__all__ = ["explain_match", "neutral_from_explained"]


def _tool_choice(raw: Any) -> ToolChoice:
    if isinstance(raw, str) and raw in ("auto", "none", "required"):
        return ToolChoice(mode=raw)  # type: ignore[arg-type]
    if isinstance(raw, dict):
        name = raw.get("name") or (raw.get("function") or {}).get("name")
        if isinstance(name, str) and name:
            return ToolChoice(mode="function", name=name)
    raise ValueError("tool_choice must be auto, none, required or {'type': 'function', 'name': ...}")


def neutral_from_explained(explained: ExplainedRequest, provider: str, default_model: str) -> NeutralRequest:
    messages = tuple(
        NeutralMessage(
            role=message.role,
            text=message.text,
            tool_calls=tuple(
                NeutralToolCall(
                    id=call.id,
                    name=call.name,
                    arguments=call.arguments
                    if isinstance(call.arguments, str)
                    else orjson.dumps(call.arguments).decode(),
                )
                for call in message.tool_calls
            ),
            tool_call_id=message.tool_call_id,
        )
        for message in explained.messages
    )
    return NeutralRequest(
        provider=provider,
        operation=explained.operation,
        model=explained.model or default_model,
        messages=messages,
        tool_names=tuple(explained.tool_names),
        tool_choice=_tool_choice(explained.tool_choice),
        response_format=explained.response_format,
        stream=explained.stream,
    )


def _graph_candidate(
    book: ConversationBook, verdict: Verdict, request: NeutralRequest, selected: bool, shadowed: bool
) -> tuple[ExplainedCandidate, LlmtsError | None]:
    error = book.obstacle(verdict, request) if verdict.claims else None
    first_match = next((check.step for check in verdict.checks if check.matched), None)
    steps = [
        ExplainedStep(
            step=check.step,
            matched=check.matched,
            selected=check.step == first_match and verdict.claims and verdict.error is None,
            shadowed=check.matched and check.step != first_match,
            passed=list(check.passed),
            failed=list(check.failed),
        )
        for check in verdict.checks
    ]
    candidate = ExplainedCandidate(
        kind="conversation",
        scenario=verdict.graph.id,
        precedence=verdict.graph.precedence,
        filters_match=True,
        claims=verdict.claims,
        selected=selected,
        shadowed=shadowed,
        state=verdict.state.phase.value if verdict.state is not None else None,
        action=verdict.action.value if verdict.action is not None and verdict.claims else None,
        step=verdict.step.id if verdict.step is not None and verdict.claims else None,
        error_code=error.code if error is not None else None,
        error_message=error.message if error is not None else None,
        steps=steps,
    )
    return candidate, error


def _scenario_outcome(
    scenario: ScenarioPlan, position: int, request: NeutralRequest
) -> tuple[int | None, LlmtsError | None]:
    """Session._take, read-only: the response index the scenario would answer with, or its error."""
    count = len(scenario.responses)
    if position >= count:
        if scenario.terminal_policy == "repeat_last_response":
            position = count - 1
        elif scenario.terminal_policy == "restart":
            position = 0
        else:
            return None, ScenarioExhausted(f"scenario {scenario.id!r} has no responses left")
    response = scenario.responses[position]
    where = f"scenario {scenario.id!r} response {position}"
    try:
        if response.output is not None:
            check_output_fits(request, response.output, where)
        if response.stream_delivery is not None:
            check_delivery_fits(request, response.stream_delivery, where)
    except FixtureMismatch as mismatch:
        return position, mismatch
    return position, None


def explain_match(
    plan: SessionPlan | None,
    cursors: list[int],
    book: ConversationBook | None,
    request: NeutralRequest,
    caller: Caller,
) -> MatchExplanation:
    latest = request.messages[-1] if request.messages else None
    candidates: list[ExplainedCandidate] = []
    outcome = "rejected"
    selected: tuple[str, str | None] | None = None
    error: LlmtsError | None = None
    if plan is None:
        outcome = "echo"
    elif plan.models is not None and request.model not in plan.models:
        error = ModelNotFound(f"the model {request.model!r} is not one of the session's models")
    else:
        owner_found = False
        first_unclaimed: Verdict | None = None
        inputs = Inputs(request, caller)
        for graph in book.graphs if book is not None else ():
            if not graph.matches(request.provider, request.model):
                candidates.append(
                    ExplainedCandidate(
                        kind="conversation",
                        scenario=graph.id,
                        precedence=graph.precedence,
                        filters_match=False,
                        claims=False,
                        selected=False,
                        shadowed=False,
                    )
                )
                continue
            assert book is not None
            verdict = book.judge(graph, inputs, explain=True)
            is_owner = verdict.claims and not owner_found
            candidate, graph_error = _graph_candidate(
                book, verdict, request, is_owner, verdict.claims and owner_found
            )
            candidates.append(candidate)
            if is_owner:
                owner_found = True
                selected = (graph.id, candidate.step)
                error = graph_error
                outcome = "rejected" if graph_error is not None else str(candidate.action)
            elif not verdict.claims and first_unclaimed is None:
                first_unclaimed = verdict
        offset = len(book.graphs) if book is not None else 0
        for index, scenario in enumerate(plan.scenarios):
            matches = scenario.matches(request.provider, request.model)
            is_owner = matches and not owner_found
            position, scenario_error = (
                _scenario_outcome(scenario, cursors[index], request) if matches else (None, None)
            )
            candidates.append(
                ExplainedCandidate(
                    kind="scenario",
                    scenario=scenario.id,
                    precedence=offset + index,
                    filters_match=matches,
                    claims=matches,
                    selected=is_owner,
                    shadowed=matches and owner_found,
                    error_code=scenario_error.code if scenario_error is not None else None,
                    error_message=scenario_error.message if scenario_error is not None else None,
                    next_response_index=position,
                )
            )
            if is_owner:
                owner_found = True
                selected = (scenario.id, None)
                error = scenario_error
                outcome = "rejected" if scenario_error is not None else "scenario"
        if not owner_found:
            error = (
                book.unclaimed(request, caller)
                if book is not None and first_unclaimed is not None
                else NoMatchingScenario("no scenario of this session serves this request")
            )
    return MatchExplanation(
        conversation_id=caller.conversation_id,
        provider_namespace=request.provider,
        credential_hash=credential_hash(caller.credential),
        model=request.model,
        logical_turn=logical_turn(request.messages),
        latest_role=latest.role if latest is not None else None,
        outcome=outcome,  # type: ignore[arg-type]
        selected_scenario=selected[0] if selected is not None else None,
        selected_step=selected[1] if selected is not None else None,
        error_code=error.code if error is not None else None,
        error_message=error.message if error is not None else None,
        matched_candidates=[c.scenario for c in candidates if c.claims],
        shadowed_candidates=[c.scenario for c in candidates if c.shadowed],
        candidates=candidates,
    )
