"""``POST /admin-api/match/explain``: the selection a request would get, computed read-only.

The selection admission makes (``selection.select``), without the commit, rendered with every
candidate's own verdict. Nothing is reserved, consumed, counted or cached.
"""

from __future__ import annotations

from typing import Any

import orjson

from llmts.runtime.conversations.book import ConversationBook, Verdict
from llmts.runtime.conversations.identity import Caller, credential_hash
from llmts.runtime.conversations.predicates import logical_turn
from llmts.runtime.conversations.selection import Selection, select
from llmts.runtime.plans import SessionPlan
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
        system=explained.system,
        tool_choice=_tool_choice(explained.tool_choice),
        response_format=explained.response_format,
        stream=explained.stream,
        choices=explained.n,
    )


def _graph_candidate(
    book: ConversationBook,
    verdict: Verdict,
    request: NeutralRequest,
    selection: Selection,
    shadowed: bool,
    in_stream: bool,
) -> ExplainedCandidate:
    selected = verdict is selection.graph
    # The owner's error is the selection's own; another claiming graph's is what it would answer alone.
    error = (
        selection.error
        if selected
        else book.obstacle(verdict, request, in_stream=in_stream)
        if verdict.claims
        else None
    )
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
    return ExplainedCandidate(
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


def explain_match(
    plan: SessionPlan | None,
    cursors: list[int],
    book: ConversationBook | None,
    request: NeutralRequest,
    caller: Caller,
    *,
    in_stream: bool,
) -> MatchExplanation:
    """``select`` without the commit, with every candidate's own verdict."""
    selection = select(plan, cursors, book, request, caller, in_stream=in_stream, explain=True)
    candidates: list[ExplainedCandidate] = []
    owner_seen = False
    for graph, verdict in selection.graphs:
        if verdict is None:
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
        candidates.append(
            _graph_candidate(book, verdict, request, selection, verdict.claims and owner_seen, in_stream)
        )
        owner_seen = owner_seen or verdict.claims
    offset = len(book.graphs) if book is not None else 0
    for scenario in selection.scenarios:
        selected = scenario is selection.scenario
        candidates.append(
            ExplainedCandidate(
                kind="scenario",
                scenario=scenario.scenario.id,
                precedence=offset + scenario.index,
                filters_match=scenario.matches,
                claims=scenario.matches,
                selected=selected,
                shadowed=scenario.matches and not selected,
                error_code=scenario.error.code if scenario.error is not None else None,
                error_message=scenario.error.message if scenario.error is not None else None,
                next_response_index=scenario.position,
            )
        )
    latest = request.messages[-1] if request.messages else None
    error = selection.error
    return MatchExplanation(
        conversation_id=caller.conversation_id,
        provider_namespace=request.provider,
        credential_hash=credential_hash(caller.credential),
        model=request.model,
        logical_turn=logical_turn(request.messages),
        latest_role=latest.role if latest is not None else None,
        outcome=selection.outcome,
        selected_scenario=selection.owner,
        selected_step=selection.step,
        error_code=error.code if error is not None else None,
        error_message=error.message if error is not None else None,
        matched_candidates=[c.scenario for c in candidates if c.claims],
        shadowed_candidates=[c.scenario for c in candidates if c.shadowed],
        candidates=candidates,
    )
