"""The conversation state machine as data: phases, events, the transition table, terminal policies.

An illegal move raises ``IllegalTransition`` naming the phase and the event; nothing changes.
"""

from __future__ import annotations

from enum import Enum

from llmts.errors import LlmtsError

__all__ = [
    "TERMINAL_ACTIONS",
    "TRANSITIONS",
    "Action",
    "Event",
    "IllegalTransition",
    "Phase",
    "TerminalAction",
    "transition",
]


class Phase(str, Enum):
    AWAITING = "awaiting"  # the next request may execute one of the active steps
    IN_FLIGHT = "in_flight"  # a step is reserved and not yet committed (one per identity)
    COMPLETED = "completed"  # a ``complete`` step was committed; the terminal policy decides what follows
    EXHAUSTED = "exhausted"  # ``max_steps`` executions were committed in this run


class Event(str, Enum):
    RESERVE = "reserve"
    COMMIT_CONTINUE = "commit_continue"
    COMMIT_COMPLETE = "commit_complete"
    COMMIT_EXHAUST = "commit_exhaust"
    ROLLBACK = "rollback"


# (phase, event) -> next phase. ``None``: back to the phase the reservation started from.
TRANSITIONS: dict[tuple[Phase, Event], Phase | None] = {
    (Phase.AWAITING, Event.RESERVE): Phase.IN_FLIGHT,
    (Phase.COMPLETED, Event.RESERVE): Phase.IN_FLIGHT,  # repeat_last_response, restart
    (Phase.IN_FLIGHT, Event.COMMIT_CONTINUE): Phase.AWAITING,
    (Phase.IN_FLIGHT, Event.COMMIT_COMPLETE): Phase.COMPLETED,
    (Phase.IN_FLIGHT, Event.COMMIT_EXHAUST): Phase.EXHAUSTED,
    (Phase.IN_FLIGHT, Event.ROLLBACK): None,
}


class IllegalTransition(LlmtsError):
    code = "llm_test_server_illegal_transition"
    http_status = 500


def transition(phase: Phase, event: Event, resume: Phase | None = None) -> Phase:
    if (phase, event) not in TRANSITIONS:
        raise IllegalTransition(f"conversation state {phase.value} does not accept event {event.value}")
    target = TRANSITIONS[phase, event]
    if target is None:
        if resume is None:
            raise IllegalTransition(
                f"conversation state {phase.value}: {event.value} needs the state to resume"
            )
        return resume
    return target


class TerminalAction(str, Enum):
    REJECT = "reject"
    REPEAT_LAST = "repeat_last_response"
    RESTART = "restart"


# The configuration's ``terminal_policy`` -> what a request to a completed graph does.
TERMINAL_ACTIONS: dict[str, TerminalAction] = {action.value: action for action in TerminalAction}


class Action(str, Enum):
    """What an admitted request does to its conversation."""

    START = "start"  # first step of a new identity
    EXECUTE = "execute"  # one of the active next steps
    RESTART = "restart"  # a completed ``restart`` graph begins a new run at its start step
    REPEAT_LAST = "repeat_last_response"  # a completed graph answers its final successful fixture again
    REPLAY = "replay"  # the identical last successful request: its retained result, nothing advances
