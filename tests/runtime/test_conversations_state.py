"""Unit tests of the conversation state machine, reservations and capacity accounting (on top of the HTTP
tests)."""

from __future__ import annotations

from typing import Any

import pytest

from llmts.errors import (
    ConversationBusy,
    ConversationCapacityExceeded,
    ConversationStepMismatch,
    InvalidConversationId,
    RequestSuperseded,
    ScriptedError,
)
from llmts.runtime import Session, SessionRegistry
from llmts.runtime.conversations import Caller, Event, Phase, conversation_id_from, transition
from llmts.runtime.conversations.machine import TRANSITIONS, IllegalTransition
from llmts.runtime.journal import JournalRecord
from llmts.schema import ConfigBuilder, NeutralMessage, NeutralRequest
from llmts.schema.validation import parse_session_config
from tests.runtime.doubles import CountingIds, FixedClock


def chat(*texts: str) -> NeutralRequest:
    """user, assistant, user... alternating."""
    roles = ["user", "assistant"]
    messages = tuple(NeutralMessage(role=roles[i % 2], text=t) for i, t in enumerate(texts))  # type: ignore[misc]
    return NeutralRequest(
        provider="openai", operation="chat.completions", model="gpt-4.1-mini", messages=messages
    )


def session_with(builder: Any) -> Session:
    session = SessionRegistry(clock=FixedClock(), ids=CountingIds()).create()
    session.configure(parse_session_config(builder.config.to_dict()))
    return session


def two_steps(delay_ms: int = 0, **capacity: int) -> Session:
    builder = (
        ConfigBuilder()
        .conversation("g")
        .step("a")
        .when(turn=1)
        .text("A")
        .then("b")
        .step("b")
        .when(turn=2)
        .text("B" * 100, delay_ms=delay_ms)
        .complete()
    )
    if capacity:
        builder.config.conversation_capacity(**capacity)
    return session_with(builder)


def total_bytes(session: Session) -> int:
    return sum(status.retained_bytes for status in session.conversations.status())


def test_transition_table() -> None:
    assert transition(Phase.AWAITING, Event.RESERVE) is Phase.IN_FLIGHT
    assert transition(Phase.IN_FLIGHT, Event.COMMIT_COMPLETE) is Phase.COMPLETED
    assert transition(Phase.IN_FLIGHT, Event.ROLLBACK, Phase.COMPLETED) is Phase.COMPLETED
    for phase in Phase:
        for event in Event:
            if (phase, event) not in TRANSITIONS:
                with pytest.raises(IllegalTransition, match=f"{phase.value}.*{event.value}"):
                    transition(phase, event)
    with pytest.raises(IllegalTransition):
        transition(Phase.IN_FLIGHT, Event.ROLLBACK)  # no phase to resume


def test_conversation_ids() -> None:
    assert conversation_id_from(None) == "default"
    assert conversation_id_from("x" * 128) == "x" * 128
    for bad in ("", " ", "x" * 129, "a,b"):
        with pytest.raises(InvalidConversationId):
            conversation_id_from(bad)


def test_commit_rollback_and_accounting() -> None:
    session = two_steps(delay_ms=10)
    record = JournalRecord("req_1", 1, "openai", 0.0, 0.0)
    first = session.admit(chat("hi"), Caller("c", "key"), record)
    assert (record.conversation, record.step, record.turn, record.scenario) == ("c", "a", 1, "g")
    assert session.conversations.status()[0].busy
    with pytest.raises(ConversationBusy):
        session.admit(chat("hi"), Caller("c", "key"))
    session.complete(first, chat("hi"))
    after_a = total_bytes(session)

    second = session.admit(chat("hi", "A", "more"), Caller("c", "key"))
    reserved = total_bytes(session)
    assert reserved > after_a and second.delay_ms == 10
    session.release(second)  # the client left during the delay
    session.release(second)  # idempotent
    state = session.conversations.status()[0]
    assert (state.state, state.executed_steps, total_bytes(session)) == ("awaiting", ["a"], after_a)
    # A released admission can no longer commit.
    session.complete(second, chat("hi", "A", "more"))
    assert session.conversations.status()[0].executed_steps == ["a"]

    third = session.admit(chat("hi", "A", "more"), Caller("c", "key"))
    assert session.complete(third, chat("hi", "A", "more")).output.text == "B" * 100
    state = session.conversations.status()[0]
    assert (state.state, state.executed_steps, state.retained_bytes) == ("completed", ["a", "b"], reserved)


def test_rolling_back_a_start_removes_the_state() -> None:
    session = two_steps()
    admission = session.admit(chat("hi"), Caller("c", None))
    session.release(admission)
    assert session.conversations.status() == []


def test_reset_supersedes_and_clears() -> None:
    session = two_steps()
    admission = session.admit(chat("hi"), Caller("c", None))
    session.reset()
    with pytest.raises(RequestSuperseded):
        session.complete(admission, chat("hi"))
    session.release(admission)
    assert session.conversations.status() == []
    fresh = session.admit(chat("hi"), Caller("c", None))
    assert session.complete(fresh, chat("hi")).output.text == "A"


def test_capacity_counts_reservations() -> None:
    session = two_steps(max_conversations=1)
    pending = session.admit(chat("hi"), Caller("a", None))
    with pytest.raises(ConversationCapacityExceeded):
        session.admit(chat("hi"), Caller("b", None))
    session.release(pending)
    session.complete(session.admit(chat("hi"), Caller("b", None)), chat("hi"))
    assert [s.conversation_id for s in session.conversations.status()] == ["b"]


def test_error_steps_commit_and_recover() -> None:
    session = session_with(
        ConfigBuilder()
        .conversation("g")
        .step("boom")
        .error(500, "boom", "Boom")
        .then("ok")
        .step("ok")
        .text("fine")
        .complete()
    )
    admission = session.admit(chat("x"), Caller())
    with pytest.raises(ScriptedError):
        session.complete(admission, chat("x"))
    state = session.conversations.status()[0]
    assert (state.executed_steps, state.last_successful_turn, state.replayable) == (["boom"], None, False)
    assert session.complete(session.admit(chat("x"), Caller()), chat("x")).output.text == "fine"


def test_unclaimed_requests_explain_the_start_step() -> None:
    session = two_steps()
    with pytest.raises(ConversationStepMismatch, match="turn"):
        session.admit(chat("hi", "A", "b"), Caller())
    assert session.conversations.status() == []
