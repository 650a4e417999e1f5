"""All conversation state of one session: selection, reservation, commit, rollback, capacity, status.

The owning session calls every method under its lock. ``judge`` (what one graph would do) and
``obstacle`` (why an owning verdict cannot run) are pure; ``selection.select`` uses them for
admission and ``POST /admin-api/match/explain`` alike, so an explanation says exactly what a request would
do. Only ``reserve`` / ``commit`` / ``rollback`` change state.

Order of checks for an identity that already has state in a graph (the graph owns the request):
busy -> identical replay -> terminal policy (completed) -> exhausted -> turn not advanced -> the active
steps in their ``then`` order -> fixture fit -> capacity.
"""

from __future__ import annotations

from dataclasses import dataclass

from llmts.errors import (
    ConversationBusy,
    ConversationCapacityExceeded,
    ConversationCompleted,
    ConversationExhausted,
    ConversationStepMismatch,
    ConversationTurnNotAdvanced,
    FixtureMismatch,
    LlmtsError,
)
from llmts.runtime.compat import check_delivery_fits, check_output_fits
from llmts.runtime.conversations.fingerprint import fingerprint
from llmts.runtime.conversations.graph import GraphPlan, GraphsPlan, StepCheck, StepPlan
from llmts.runtime.conversations.identity import Caller, ConversationKey, credential_hash
from llmts.runtime.conversations.machine import Action, Event, Phase, TerminalAction, transition
from llmts.runtime.conversations.predicates import RequestView
from llmts.runtime.conversations.state import ConversationState, Ticket
from llmts.schema.conversations import ConversationStatus
from llmts.schema.neutral import Completion, NeutralRequest, ScriptedOutput

__all__ = ["ConversationBook", "Inputs", "Verdict"]


class Inputs:
    """One request's identity inputs and derived values, computed at most once."""

    __slots__ = ("_fingerprint", "conversation_id", "credential_hash", "provider", "request", "view")

    def __init__(self, request: NeutralRequest, caller: Caller) -> None:
        self.request = request
        self.view = RequestView(request)
        self.provider = request.provider
        self.conversation_id = caller.conversation_id
        self.credential_hash = credential_hash(caller.credential)
        self._fingerprint: bytes | None = None

    @property
    def fingerprint(self) -> bytes:
        if self._fingerprint is None:
            self._fingerprint = fingerprint(self.request)
        return self._fingerprint

    def key(self, graph: GraphPlan) -> ConversationKey:
        return (graph.id, self.provider, self.conversation_id, self.credential_hash)


@dataclass(slots=True)
class Verdict:
    """What one graph would do with one request."""

    graph: GraphPlan
    key: ConversationKey
    state: ConversationState | None
    claims: bool  # the graph owns the request (it has state for the identity, or its start step matches)
    action: Action | None = None
    step: StepPlan | None = None
    error: LlmtsError | None = None
    checks: tuple[StepCheck, ...] = ()  # the candidate steps evaluated, in order


@dataclass(frozen=True, slots=True)
class _Owned:
    """A graph that owns the request (it has state for the identity): verdict shorthands."""

    graph: GraphPlan
    key: ConversationKey
    state: ConversationState
    where: str

    def run(self, action: Action, step: StepPlan | None, checks: tuple[StepCheck, ...] = ()) -> Verdict:
        return Verdict(self.graph, self.key, self.state, True, action, step, checks=checks)

    def reject(self, error: LlmtsError, checks: tuple[StepCheck, ...] = ()) -> Verdict:
        return Verdict(self.graph, self.key, self.state, True, error=error, checks=checks)


def _failures(checks: tuple[StepCheck, ...]) -> str:
    return "; ".join(f"{c.step} (failed: {', '.join(c.failed)})" for c in checks)


class ConversationBook:
    def __init__(self, plan: GraphsPlan) -> None:
        self.plan = plan
        self.graphs = plan.graphs
        self._states: dict[ConversationKey, ConversationState] = {}
        self._bytes = 0
        self._epoch = 0
        self._created = 0

    @property
    def retained_bytes(self) -> int:
        return self._bytes

    @property
    def count(self) -> int:
        return len(self._states)

    def clear(self) -> None:
        """Reset/configure: every state goes; tickets still out become no-ops."""
        self._states.clear()
        self._bytes = 0
        self._epoch += 1

    # --- judgement (pure) ---------------------------------------------------------------------------

    def judge(self, graph: GraphPlan, inputs: Inputs, *, explain: bool = False) -> Verdict:
        """What ``graph`` would do with the request: claim it (and how) or not; no state changes."""
        key = inputs.key(graph)
        state = self._states.get(key)
        view = inputs.view
        if state is None:  # the graph starts only on a matching start step
            start = graph.steps[graph.start]
            check = start.check(view)
            action = Action.START if check.matched else None
            return Verdict(graph, key, None, check.matched, action, start, checks=(check,))
        owned = _Owned(graph, key, state, f"conversation {inputs.conversation_id!r} of graph {graph.id!r}")
        if state.phase is Phase.IN_FLIGHT:
            reserved = state.reservation.step_id if state.reservation is not None else None
            return owned.reject(
                ConversationBusy(f"{owned.where} already has step {reserved!r} in flight; one at a time")
            )
        if graph.replay and state.retained is not None and state.retained_fingerprint == inputs.fingerprint:
            return owned.run(Action.REPLAY, graph.steps.get(state.retained_step or ""))
        if state.phase is Phase.COMPLETED:
            return self._terminal(owned, view)
        if state.phase is Phase.EXHAUSTED:
            return owned.reject(
                ConversationExhausted(
                    f"{owned.where} has executed max_steps ({graph.max_steps}) steps in this run"
                )
            )
        if state.last_success_turn is not None and view.turn <= state.last_success_turn:
            return owned.reject(
                ConversationTurnNotAdvanced(
                    f"{owned.where} already answered turn {state.last_success_turn}; this request is at turn "
                    f"{view.turn}. Send the assistant's answer in the history to advance, or repeat the "
                    "identical request to replay it"
                )
            )
        checks: list[StepCheck] = []
        chosen: StepPlan | None = None
        for target in state.active:  # ordered alternatives: the first match wins
            step = graph.steps[target]
            check = step.check(view)
            checks.append(check)
            if check.matched and chosen is None:
                chosen = step
                if not explain:
                    break
        if chosen is not None:
            return owned.run(Action.EXECUTE, chosen, tuple(checks))
        message = f"no next step of {owned.where} matches this request at turn {view.turn}: "
        return owned.reject(ConversationStepMismatch(message + _failures(tuple(checks))), tuple(checks))

    def _terminal(self, owned: _Owned, view: RequestView) -> Verdict:
        graph, state = owned.graph, owned.state
        action = graph.terminal_action
        if action is TerminalAction.REPEAT_LAST and state.last_success_step is not None:
            return owned.run(Action.REPEAT_LAST, state.last_success_step)
        if action is TerminalAction.RESTART:
            start = graph.steps[graph.start]
            check = start.check(view)
            if check.matched:
                return owned.run(Action.RESTART, start, (check,))
            message = f"{owned.where} is complete and restarts at {graph.start!r}, which does not match: "
            return owned.reject(ConversationStepMismatch(message + _failures((check,))), (check,))
        return owned.reject(
            ConversationCompleted(f"{owned.where} is complete (terminal_policy {action.value})")
        )

    def obstacle(self, verdict: Verdict, request: NeutralRequest, *, in_stream: bool) -> LlmtsError | None:
        """Why an owning verdict cannot be admitted (its error, a fixture misfit, capacity), or None;
        ``in_stream``: the request's route lets in-stream plans act on its stream."""
        if verdict.error is not None:
            return verdict.error
        step = verdict.step
        assert step is not None and verdict.action is not None
        where = f"conversation graph {verdict.graph.id!r} step {step.id!r}"
        output: ScriptedOutput | None = step.response.output
        delivery = step.response.stream_delivery
        if verdict.action is Action.REPLAY:
            assert verdict.state is not None and verdict.state.retained is not None
            output, delivery = verdict.state.retained.output, verdict.state.retained.stream_delivery
        try:
            if output is not None:
                check_output_fits(request, output, where)
            if delivery is not None:
                check_delivery_fits(request, delivery, where, in_stream=in_stream)
        except FixtureMismatch as mismatch:
            return mismatch
        if verdict.action is Action.REPLAY:
            return None
        return self._capacity(verdict, step)

    def _capacity(self, verdict: Verdict, step: StepPlan) -> LlmtsError | None:
        plan = self.plan
        state = verdict.state
        if state is None:
            if len(self._states) + 1 > plan.max_conversations:
                return ConversationCapacityExceeded(
                    f"this session already holds {len(self._states)} conversation states "
                    f"(conversation_capacity.max_conversations is {plan.max_conversations})"
                )
            state = ConversationState(verdict.key, verdict.graph, -1)
        assert verdict.action is not None
        growth = state.projected_size(verdict.action, step) - state.bytes
        if growth > 0 and self._bytes + growth > plan.max_bytes:
            return ConversationCapacityExceeded(
                f"step {step.id!r} would grow retained conversation state to {self._bytes + growth} bytes "
                f"(conversation_capacity.max_bytes is {plan.max_bytes})"
            )
        return None

    # --- admission and settlement ---------------------------------------------------------------------

    def unclaimed(self, verdict: Verdict) -> LlmtsError:
        """When nothing serves a request, the first graph whose filters matched (``verdict``) explains
        why it did not start."""
        return ConversationStepMismatch(
            f"conversation graph {verdict.graph.id!r} does not start on this request and no scenario serves "
            f"it: start step {_failures(verdict.checks)}"
        )

    def reserve(self, verdict: Verdict, inputs: Inputs) -> Ticket:
        """Commit an owning verdict that has no obstacle (``selection.select`` chose it): a
        reservation of its step, or a replay count. The only admission step that changes state."""
        action, step, graph, state = verdict.action, verdict.step, verdict.graph, verdict.state
        assert action is not None and step is not None
        turn = inputs.view.turn
        if action is Action.REPLAY:  # nothing to reserve: the retained result is answered again
            assert state is not None
            state.replays += 1
            return Ticket(
                owner=self, epoch=self._epoch, state=state, action=action, step=step,
                step_id=state.retained_step, turn=turn, fingerprint=b"", replay=state.retained,
                resume=state.phase,
            )  # fmt: skip
        created = state is None
        if state is None:
            state = ConversationState(verdict.key, graph, self._created, active=(graph.start,))
            self._created += 1
            self._states[verdict.key] = state
        ticket = Ticket(
            owner=self, epoch=self._epoch, state=state, action=action, step=step, step_id=step.id,
            turn=turn, fingerprint=inputs.fingerprint if graph.replay else b"", resume=state.phase,
            created=created, delta_bytes=state.projected_size(action, step) - state.bytes,
        )  # fmt: skip
        state.phase = transition(state.phase, Event.RESERVE)
        state.reservation = ticket
        self._bytes += ticket.delta_bytes
        return ticket

    def _live(self, ticket: Ticket) -> bool:
        if ticket.settled or ticket.owner is not self or ticket.epoch != self._epoch:
            return False
        return ticket.replay is None and ticket.state.reservation is ticket

    def commit(self, ticket: Ticket, completion: Completion | None) -> None:
        """The step ran: ``completion`` is its successful result, None for a scripted error."""
        if not self._live(ticket):
            return
        ticket.settled = True
        state = ticket.state
        graph = state.graph
        step = ticket.step
        assert step is not None
        state.reservation = None
        if ticket.action is Action.REPEAT_LAST:
            event = Event.COMMIT_COMPLETE
        else:
            if ticket.action is Action.RESTART:
                state.run += 1
                state.executions = 0
                state.executed.clear()
                state.visited.clear()
                state.last_success_turn = None
                state.last_success_step = None
                state.retained = None
                state.retained_fingerprint = None
                state.retained_step = None
            state.executions += 1
            state.executed.append(step.id)
            state.visited.add(step.id)
            state.last_step = step.id
            state.last_turn = ticket.turn
            state.active = step.then
            if step.complete:
                event = Event.COMMIT_COMPLETE
            elif state.executions >= graph.max_steps:
                event = Event.COMMIT_EXHAUST
            else:
                event = Event.COMMIT_CONTINUE
        if completion is not None:
            state.last_success_turn = ticket.turn
            state.last_success_step = step
            if graph.replay:
                state.retained = completion
                state.retained_fingerprint = ticket.fingerprint
                state.retained_step = step.id
                state.retained_turn = ticket.turn
        state.phase = transition(state.phase, event)
        size = state.size()
        self._bytes += size - state.bytes - ticket.delta_bytes
        state.bytes = size

    def rollback(self, ticket: Ticket) -> None:
        """Cancelled or superseded before commit: the reservation goes, nothing advanced."""
        if not self._live(ticket):
            return
        ticket.settled = True
        state = ticket.state
        state.reservation = None
        state.phase = transition(state.phase, Event.ROLLBACK, ticket.resume)
        self._bytes -= ticket.delta_bytes
        if ticket.created:
            del self._states[state.key]

    # --- diagnostics ------------------------------------------------------------------------------------

    def states(self, conversation_id: str | None = None) -> list[ConversationState]:
        return [
            s
            for s in self._states.values()
            if conversation_id is None or s.conversation_id == conversation_id
        ]

    def status(self, conversation_id: str | None = None) -> list[ConversationStatus]:
        return [_status(state) for state in self.states(conversation_id)]


def _status(state: ConversationState) -> ConversationStatus:
    graph = state.graph
    graph_id, provider, conversation_id, credential = state.key
    phase = state.phase
    terminal = phase in (Phase.COMPLETED, Phase.EXHAUSTED)
    if phase is Phase.COMPLETED and graph.terminal_action is TerminalAction.RESTART:
        next_steps = [graph.start]
    elif terminal:
        next_steps = []
    else:
        next_steps = list(state.active)
    reservation = state.reservation
    return ConversationStatus(
        scenario=graph_id,
        provider=provider,
        conversation_id=conversation_id,
        credential_hash=credential,
        state=phase.value,
        busy=phase is Phase.IN_FLIGHT,
        terminal=terminal,
        terminal_policy=graph.terminal_action.value,
        run=state.run,
        executions=state.executions,
        max_steps=graph.max_steps,
        executed_steps=list(state.executed),
        last_step=state.last_step,
        last_turn=state.last_turn,
        last_successful_turn=state.last_success_turn,
        in_flight_step=reservation.step_id if reservation is not None else None,
        next_steps=next_steps,
        unvisited_steps=[step for step in graph.order if step not in state.visited],
        replays=state.replays,
        replayable=state.retained is not None,
        retained_bytes=state.bytes + (reservation.delta_bytes if reservation is not None else 0),
    )
