"""Per-identity conversation state, reservations (tickets) and the retained-size estimate.

Sizes are a documented estimate, not heap measurement (docs/conversations.md): a state costs
``STATE_BYTES`` plus its identity's characters, ``EXECUTED_STEP_BYTES`` plus the step id per execution
in the current run, and ``RETAINED_RESULT_BYTES`` plus the result's characters for the replayable result.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from llmts.runtime.conversations.graph import GraphPlan, StepPlan, output_size
from llmts.runtime.conversations.identity import ConversationKey
from llmts.runtime.conversations.machine import Action, Phase
from llmts.runtime.plans import ResponsePlan
from llmts.schema.neutral import Completion

__all__ = [
    "EXECUTED_STEP_BYTES",
    "RETAINED_RESULT_BYTES",
    "STATE_BYTES",
    "ConversationState",
    "Ticket",
]

STATE_BYTES = 512
EXECUTED_STEP_BYTES = 32
RETAINED_RESULT_BYTES = 256


@dataclass(slots=True)
class ConversationState:
    key: ConversationKey
    graph: GraphPlan
    created: int  # creation order, for listings
    phase: Phase = Phase.AWAITING
    active: tuple[str, ...] = ()
    run: int = 1
    executions: int = 0
    executed: list[str] = field(default_factory=list)
    visited: set[str] = field(default_factory=set)
    last_step: str | None = None
    last_turn: int | None = None
    last_success_turn: int | None = None
    last_success_step: StepPlan | None = None
    retained: Completion | None = None
    retained_fingerprint: bytes | None = None
    retained_step: str | None = None
    retained_turn: int | None = None
    replays: int = 0
    reservation: Ticket | None = None
    bytes: int = 0

    @property
    def conversation_id(self) -> str:
        return self.key[2]

    def identity_bytes(self) -> int:
        graph_id, provider, conversation_id, credential = self.key
        return STATE_BYTES + len(graph_id) + len(provider) + len(conversation_id) + len(credential or "")

    def size(self) -> int:
        executed = sum(EXECUTED_STEP_BYTES + len(step) for step in self.executed)
        retained = (
            RETAINED_RESULT_BYTES + output_size(self.retained.output) if self.retained is not None else 0
        )
        return self.identity_bytes() + executed + retained

    def projected_size(self, action: Action, step: StepPlan) -> int:
        """The size after this step commits successfully (the most a reservation can grow to)."""
        executed = [] if action is Action.RESTART else self.executed
        executed_bytes = sum(EXECUTED_STEP_BYTES + len(s) for s in executed)
        if action is not Action.REPEAT_LAST:
            executed_bytes += EXECUTED_STEP_BYTES + len(step.id)
        if step.response.output is not None:
            retained = RETAINED_RESULT_BYTES + step.retained_chars
        elif self.retained is not None and action is not Action.RESTART:
            retained = RETAINED_RESULT_BYTES + output_size(self.retained.output)
        else:
            retained = 0
        return self.identity_bytes() + executed_bytes + retained


@dataclass(slots=True)
class Ticket:
    """An admitted conversation request: a reservation to commit or roll back, or a replay."""

    owner: object  # the book that issued it (a reconfigured session has a new one)
    epoch: int  # the book's epoch at admission (reset clears the book and bumps it)
    state: ConversationState
    action: Action
    step: StepPlan | None
    step_id: str | None
    turn: int
    fingerprint: bytes
    replay: Completion | None = None
    resume: Phase = Phase.AWAITING
    created: bool = False
    delta_bytes: int = 0
    settled: bool = False

    @property
    def graph_id(self) -> str:
        return self.state.graph.id

    @property
    def response(self) -> ResponsePlan | None:
        """The fixture to run (None for a replay, which returns the retained result)."""
        return self.step.response if self.step is not None and self.replay is None else None

    @property
    def delay_ms(self) -> int:
        return self.step.response.delay_ms if self.step is not None and self.replay is None else 0

    @property
    def conversation_id(self) -> str:
        return self.state.key[2]
