"""Conversation graphs compiled once at configure time: predicates, response plans, next steps."""

from __future__ import annotations

from dataclasses import dataclass

from llmts.runtime.conversations.machine import TERMINAL_ACTIONS, TerminalAction
from llmts.runtime.conversations.predicates import Predicate, RequestView, compile_when
from llmts.runtime.plans import ResponsePlan, compile_response
from llmts.runtime.signatures import SignatureBook, signing_key
from llmts.schema.config import SessionConfig
from llmts.schema.conversations import DEFAULT_MAX_CONVERSATION_BYTES, DEFAULT_MAX_CONVERSATIONS
from llmts.schema.neutral import ScriptedOutput

__all__ = ["GraphPlan", "GraphsPlan", "StepCheck", "StepPlan", "compile_graphs", "output_size"]


def output_size(output: ScriptedOutput | None) -> int:
    """Characters a retained result keeps (its text, or its tool calls' ids, names and arguments)."""
    if output is None:
        return 0
    return len(output.text) + sum(len(c.id) + len(c.name) + len(c.arguments) for c in output.tool_calls)


@dataclass(frozen=True, slots=True)
class StepCheck:
    """How one step's predicates fared against one request (explanations and mismatch errors)."""

    step: str
    passed: tuple[str, ...]
    failed: tuple[str, ...]

    @property
    def matched(self) -> bool:
        return not self.failed


@dataclass(frozen=True, slots=True)
class StepPlan:
    id: str
    index: int
    predicates: tuple[Predicate, ...]
    response: ResponsePlan
    then: tuple[str, ...]
    complete: bool
    # Size of the result this step retains for replay when it succeeds (0 for an error step).
    retained_chars: int

    def matches(self, view: RequestView) -> bool:
        return all(predicate.test(view) for predicate in self.predicates)

    def check(self, view: RequestView) -> StepCheck:
        passed: list[str] = []
        failed: list[str] = []
        for predicate in self.predicates:
            (passed if predicate.test(view) else failed).append(predicate.field)
        return StepCheck(self.id, tuple(passed), tuple(failed))


@dataclass(frozen=True, slots=True)
class GraphPlan:
    id: str
    precedence: int
    model: str | None
    provider: str | None
    start: str
    terminal_action: TerminalAction
    max_steps: int
    replay: bool
    steps: dict[str, StepPlan]
    order: tuple[str, ...]
    conversation_id: str | None = None

    def matches(self, provider: str, model: str, conversation_id: str | None = None) -> bool:
        return (
            (self.model is None or self.model == model)
            and (self.provider is None or self.provider == provider)
            and (self.conversation_id is None or self.conversation_id == conversation_id)
        )


@dataclass(frozen=True, slots=True)
class GraphsPlan:
    graphs: tuple[GraphPlan, ...]
    max_conversations: int
    max_bytes: int


def compile_graphs(config: SessionConfig) -> GraphsPlan:
    book = SignatureBook(signing_key(config.determinism.seed if config.determinism is not None else None))
    graphs = []
    for g_index, graph in enumerate(config.conversations):
        graph_id = graph.id or f"conversation_{g_index}"
        steps = {}
        for s_index, step in enumerate(graph.steps):
            response = compile_response(step.response, f"{graph_id}\x00{step.id}", s_index, book=book)
            steps[step.id] = StepPlan(
                id=step.id,
                index=s_index,
                predicates=compile_when(step.when),
                response=response,
                then=tuple(step.then or ()),
                complete=step.complete,
                retained_chars=output_size(response.output),
            )
        graphs.append(
            GraphPlan(
                id=graph_id,
                precedence=g_index,
                model=graph.model,
                provider=graph.provider,
                start=graph.start,
                terminal_action=TERMINAL_ACTIONS[graph.terminal_policy],
                max_steps=graph.max_steps,
                replay=graph.replay_successful_requests,
                steps=steps,
                order=tuple(step.id for step in graph.steps),
                conversation_id=graph.conversation_id,
            )
        )
    capacity = config.conversation_capacity
    return GraphsPlan(
        graphs=tuple(graphs),
        max_conversations=capacity.max_conversations if capacity is not None else DEFAULT_MAX_CONVERSATIONS,
        max_bytes=capacity.max_bytes if capacity is not None else DEFAULT_MAX_CONVERSATION_BYTES,
    )
