"""A realtime turn's events on a WebSocket, with each fault plan, against a recording fake channel.

These pin the transport's sequencing and evidence (``llmts/transport/websocket_delivery.py`` and the units
in ``llmts/transport/websocket_modes/``) without a server: what goes out in which order, where the plan
acts, what each mode does to the channel, and what the evidence says. What the official clients make of
each mode is proven end to end through the server (docs/stream-delivery.md, "On a WebSocket").
"""

from __future__ import annotations

import time
from typing import Any

import orjson
import pytest

from llmts.schema.faults import WEBSOCKET_MODES, FrameKind, StreamDelivery
from llmts.transport.evidence import DeliveryEvidence
from llmts.transport.waiting import WaitOutcome
from llmts.transport.websocket_delivery import MALFORMED_EVENT, EventChannel, deliver_events
from llmts.transport.websocket_modes import REGISTRY

CREATED = b'{"type": "response.created"}'
DELTAS = [b'{"type": "response.output_text.delta", "delta": "%d "}' % index for index in range(1, 4)]
PART = b'{"type": "response.content_part.done"}'
DONE = b'{"type": "response.done"}'
# A turn: one start event, three content events with a non-content event between the second and third,
# then the terminal event.
EVENTS: list[tuple[bytes, FrameKind]] = [
    (CREATED, FrameKind.OTHER),
    (DELTAS[0], FrameKind.CONTENT),
    (DELTAS[1], FrameKind.CONTENT),
    (PART, FrameKind.OTHER),
    (DELTAS[2], FrameKind.CONTENT),
    (DONE, FrameKind.TERMINAL),
]
CONTENT_EVENTS = 3
# How many of EVENTS went out once the n-th content event did.
PREFIX = {1: 2, 2: 3, 3: 5}


class FakeChannel:
    """Records every call in ``log`` (shared with the hold, so the order of sends and waits shows).
    ``fail_at``: the send (1-based, counting ``send`` and ``send_raw``) that returns False, as when the
    client is gone; ``gone_after``: the channel reports itself closed after that many sends (the reader
    saw the client's close)."""

    def __init__(self, log: list[tuple[Any, ...]], fail_at: int | None = None, gone_after: int | None = None):
        self.log = log
        self.fail_at = fail_at
        self.gone_after = gone_after
        self.sends = 0
        self.closed = False
        self.sent_at: list[float] = []

    @property
    def open(self) -> bool:
        return not self.closed and (self.gone_after is None or self.sends < self.gone_after)

    def _write(self, what: str, data: bytes) -> bool:
        self.sends += 1
        if self.sends == self.fail_at:
            self.log.append((f"{what} failed", data))
            self.closed = True
            return False
        self.log.append((what, data))
        self.sent_at.append(time.monotonic())
        return True

    def send(self, data: bytes) -> bool:
        return self._write("send", data)

    def send_raw(self, data: bytes) -> bool:
        return self._write("raw", data)

    def close(self, code: int, reason: str) -> None:
        self.log.append(("close", code, reason))
        self.closed = True

    def abort(self) -> None:
        self.log.append(("abort",))
        self.closed = True


class FakeHold:
    """Answers every hold with ``outcome`` at once; ``interrupts`` makes the turn interrupted meanwhile."""

    def __init__(self, log: list[tuple[Any, ...]], outcome: WaitOutcome = WaitOutcome.ELAPSED) -> None:
        self.log = log
        self.outcome = outcome
        self.interrupts = False
        self.interrupted = False

    def __call__(self, seconds: float) -> WaitOutcome:
        self.log.append(("hold", seconds))
        if self.interrupts:
            self.interrupted = True
        return self.outcome


class Turn:
    """One ``deliver_events`` call's fakes and results."""

    def __init__(
        self,
        outcome: WaitOutcome = WaitOutcome.ELAPSED,
        fail_at: int | None = None,
        gone_after: int | None = None,
    ) -> None:
        self.log: list[tuple[Any, ...]] = []
        self.channel = FakeChannel(self.log, fail_at, gone_after)
        self.hold = FakeHold(self.log, outcome)
        self.evidence = DeliveryEvidence()
        self.interrupt_before: int | None = None  # interrupted() is true from this many sends on
        self.asked = 0  # how often interrupted() was asked

    def interrupted(self) -> bool:
        self.asked += 1
        if self.hold.interrupted:
            return True
        return self.interrupt_before is not None and self.channel.sends >= self.interrupt_before

    def run(self, plan: StreamDelivery | None, **options: Any) -> int:
        self.evidence.stream_delivery = plan
        channel: EventChannel = self.channel  # the fake satisfies the protocol (mypy checks this line)
        return deliver_events(
            channel, EVENTS, plan, self.evidence, hold=self.hold, interrupted=self.interrupted, **options
        )


def _plan(mode: str, after: int = 1, **fields: Any) -> StreamDelivery:
    return StreamDelivery.model_validate({"mode": mode, "after_content_frames": after, **fields})


def _sent(count: int) -> list[tuple[Any, ...]]:
    return [("send", data) for data, _ in EVENTS[:count]]


def _size(count: int) -> int:
    return sum(len(data) for data, _ in EVENTS[:count])


# --- no plan, and a plan whose boundary the turn never reaches ---------------------------------------------


def test_without_a_plan_every_event_goes_out_in_order_and_is_counted() -> None:
    turn = Turn()
    before = time.monotonic()
    assert turn.run(None) == len(EVENTS)
    assert turn.log == _sent(len(EVENTS))
    evidence = turn.evidence
    assert (evidence.emitted_frames, evidence.emitted_content_frames) == (len(EVENTS), CONTENT_EVENTS)
    assert evidence.emitted_bytes == _size(len(EVENTS))
    assert evidence.terminal_marker_observed and evidence.transport_outcome == "completed"
    assert not evidence.stream_delivery_applied and evidence.ended_by is None
    assert (evidence.close_code, evidence.close_reason) == (None, None)
    # Right after the write returned: never before the first send, at or after the last one.
    assert evidence.first_frame_at is not None and evidence.last_frame_at is not None
    assert before <= turn.channel.sent_at[0] <= evidence.first_frame_at <= evidence.last_frame_at
    assert turn.channel.sent_at[-1] <= evidence.last_frame_at
    assert turn.asked == len(EVENTS)  # interrupted() is asked before each event


def test_a_boundary_the_turn_never_reaches_sends_everything_and_applies_nothing() -> None:
    turn = Turn()
    assert turn.run(_plan("close", CONTENT_EVENTS + 1, code=1011)) == len(EVENTS)
    assert turn.log == _sent(len(EVENTS))
    assert not turn.evidence.stream_delivery_applied and turn.evidence.transport_outcome == "completed"
    assert turn.evidence.close_code is None


def test_an_empty_turn_completes_with_nothing_sent() -> None:
    turn = Turn()
    evidence = turn.evidence
    assert deliver_events(turn.channel, [], None, evidence, hold=turn.hold, interrupted=turn.interrupted) == 0
    assert turn.log == [] and evidence.transport_outcome == "completed" and evidence.first_frame_at is None


def test_a_plan_of_a_mode_that_does_not_act_on_a_websocket_is_refused_before_any_send() -> None:
    turn = Turn()
    with pytest.raises(ValueError, match="stream_delivery mode truncate_bytes does not act on a WebSocket"):
        turn.run(_plan("truncate_bytes", cut_bytes=3))
    assert turn.log == [] and turn.evidence.transport_outcome is None


# --- every mode at the first and the last content event ---------------------------------------------------

BOUNDARIES = [1, CONTENT_EVENTS]


@pytest.mark.parametrize("after", BOUNDARIES)
def test_early_clean_end_sends_nothing_after_the_boundary(after: int) -> None:
    turn = Turn()
    assert turn.run(_plan("early_clean_end", after)) == PREFIX[after]
    assert turn.log == _sent(PREFIX[after])  # no terminal event, no close, no abort
    evidence = turn.evidence
    assert evidence.stream_delivery_applied and evidence.transport_outcome == "early_end"
    assert (evidence.emitted_frames, evidence.emitted_content_frames) == (PREFIX[after], after)
    assert evidence.emitted_bytes == _size(PREFIX[after]) and not evidence.terminal_marker_observed
    assert not turn.channel.closed  # the connection stays open for the next turn


@pytest.mark.parametrize("after", BOUNDARIES)
def test_delay_then_continue_waits_once_after_the_boundary_then_sends_the_rest(after: int) -> None:
    turn = Turn()
    assert turn.run(_plan("delay_then_continue", after, delay_ms=1500)) == len(EVENTS)
    rest = [("send", data) for data, _ in EVENTS[PREFIX[after] :]]
    assert turn.log == [*_sent(PREFIX[after]), ("hold", 1.5), *rest]
    evidence = turn.evidence
    assert evidence.stream_delivery_applied and evidence.transport_outcome == "completed"
    assert (evidence.emitted_frames, evidence.emitted_content_frames) == (len(EVENTS), CONTENT_EVENTS)
    assert evidence.terminal_marker_observed and evidence.ended_by is None


@pytest.mark.parametrize("after", BOUNDARIES)
def test_abort_connection_drops_the_connection_without_a_close_frame(after: int) -> None:
    turn = Turn()
    assert turn.run(_plan("abort_connection", after)) == PREFIX[after]
    assert turn.log == [*_sent(PREFIX[after]), ("abort",)]
    evidence = turn.evidence
    assert evidence.stream_delivery_applied and evidence.transport_outcome == "aborted"
    assert evidence.emitted_content_frames == after and not evidence.terminal_marker_observed
    assert evidence.close_code is None


@pytest.mark.parametrize("after", BOUNDARIES)
def test_stall_holds_the_open_connection_then_ends_the_turn(after: int) -> None:
    turn = Turn()
    assert turn.run(_plan("stall", after, delay_ms=250_000)) == PREFIX[after]
    assert turn.log == [*_sent(PREFIX[after]), ("hold", 250.0)]
    evidence = turn.evidence
    assert evidence.stream_delivery_applied and evidence.transport_outcome == "early_end"
    assert evidence.emitted_content_frames == after and not evidence.terminal_marker_observed
    assert evidence.ended_by is None and not turn.channel.closed


@pytest.mark.parametrize("after", BOUNDARIES)
def test_malformed_event_sends_one_frame_that_is_not_json_then_ends_the_turn(after: int) -> None:
    turn = Turn()
    assert turn.run(_plan("malformed_event", after)) == PREFIX[after]  # events of the turn only
    assert turn.log == [*_sent(PREFIX[after]), ("raw", MALFORMED_EVENT)]
    evidence = turn.evidence
    assert evidence.stream_delivery_applied and evidence.transport_outcome == "early_end"
    # The broken frame counts as a frame written (as an HTTP malformed_frame does), not as content.
    assert (evidence.emitted_frames, evidence.emitted_content_frames) == (PREFIX[after] + 1, after)
    assert evidence.emitted_bytes == _size(PREFIX[after]) + len(MALFORMED_EVENT)
    assert not evidence.terminal_marker_observed and not turn.channel.closed
    assert turn.channel.sent_at[-1] <= (evidence.last_frame_at or 0)


def test_the_default_malformed_event_is_a_cut_off_json_object_and_a_protocol_may_bring_its_own() -> None:
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(MALFORMED_EVENT)
    MALFORMED_EVENT.decode()  # valid UTF-8: it goes out as a text frame
    turn = Turn()
    own = b'{"serverContent": {"modelTurn": '
    turn.run(_plan("malformed_event"), malformed_event=own)
    assert turn.log[-1] == ("raw", own)


@pytest.mark.parametrize("after", BOUNDARIES)
@pytest.mark.parametrize(("code", "reason"), [(1011, "server error"), (1000, None), (4000, "é" * 61)])
def test_close_sends_a_close_frame_with_the_plans_code_and_reason(
    after: int, code: int, reason: str | None
) -> None:
    turn = Turn()
    assert turn.run(_plan("close", after, code=code, reason=reason)) == PREFIX[after]
    assert turn.log == [*_sent(PREFIX[after]), ("close", code, reason or "")]
    evidence = turn.evidence
    assert evidence.stream_delivery_applied and evidence.transport_outcome == "early_end"
    assert (evidence.close_code, evidence.close_reason) == (code, reason or "")
    assert evidence.emitted_content_frames == after and not evidence.terminal_marker_observed


def test_every_websocket_unit_is_covered_here() -> None:
    covered = {
        "early_clean_end",
        "delay_then_continue",
        "abort_connection",
        "stall",
        "malformed_event",
        "close",
    }
    assert covered == set(REGISTRY) == WEBSOCKET_MODES


# --- the client leaves ------------------------------------------------------------------------------------


@pytest.mark.parametrize("fail_at", [1, 2, len(EVENTS)])
def test_a_failed_send_ends_the_turn_as_client_gone(fail_at: int) -> None:
    turn = Turn(fail_at=fail_at)
    assert turn.run(None) == fail_at - 1
    assert turn.log == [*_sent(fail_at - 1), ("send failed", EVENTS[fail_at - 1][0])]
    evidence = turn.evidence
    assert evidence.transport_outcome == "client_gone" and evidence.emitted_frames == fail_at - 1
    assert evidence.emitted_bytes == _size(fail_at - 1) and not evidence.terminal_marker_observed
    assert evidence.ended_by is None  # the driver says why (a write timeout) when it knows


def test_a_send_that_fails_before_the_boundary_never_applies_the_plan() -> None:
    turn = Turn(fail_at=2)
    assert turn.run(_plan("close", 1, code=1011)) == 1
    assert not turn.evidence.stream_delivery_applied and turn.evidence.close_code is None
    assert turn.evidence.transport_outcome == "client_gone"


def test_a_channel_the_client_closed_gets_no_more_sends() -> None:
    turn = Turn(gone_after=2)
    assert turn.run(None) == 2
    assert turn.log == _sent(2) and turn.evidence.transport_outcome == "client_gone"


def test_a_failed_malformed_event_is_not_counted() -> None:
    turn = Turn(fail_at=PREFIX[1] + 1)
    assert turn.run(_plan("malformed_event")) == PREFIX[1]
    assert turn.log == [*_sent(PREFIX[1]), ("raw failed", MALFORMED_EVENT)]
    assert turn.evidence.emitted_frames == PREFIX[1] and turn.evidence.transport_outcome == "client_gone"


def test_close_after_the_client_closed_sends_no_close_frame() -> None:
    turn = Turn(gone_after=PREFIX[1])  # the reader saw the client's close right after the boundary event
    assert turn.run(_plan("close", 1, code=1011, reason="bye")) == PREFIX[1]
    assert turn.log == _sent(PREFIX[1])
    assert turn.evidence.transport_outcome == "client_gone"
    assert (turn.evidence.close_code, turn.evidence.close_reason) == (None, None)


@pytest.mark.parametrize(("mode", "delay_ms"), [("delay_then_continue", 60_000), ("stall", 300_000)])
def test_a_client_that_leaves_during_a_hold_ends_the_turn_as_client_gone(mode: str, delay_ms: int) -> None:
    turn = Turn(WaitOutcome.CLIENT_GONE)
    assert turn.run(_plan(mode, 1, delay_ms=delay_ms)) == PREFIX[1]
    assert turn.log == [*_sent(PREFIX[1]), ("hold", delay_ms / 1000)]  # nothing after the hold
    assert turn.evidence.transport_outcome == "client_gone" and turn.evidence.ended_by is None
    assert turn.evidence.stream_delivery_applied


# --- the turn is interrupted, or the session superseded ---------------------------------------------------


@pytest.mark.parametrize("before", [0, 1, 3, len(EVENTS) - 1])
def test_an_interrupted_turn_stops_before_the_next_event(before: int) -> None:
    turn = Turn()
    turn.interrupt_before = before
    assert turn.run(None) == before
    assert turn.log == _sent(before)
    evidence = turn.evidence
    assert evidence.transport_outcome == "early_end" and evidence.emitted_frames == before
    assert not evidence.terminal_marker_observed and evidence.ended_by is None  # the driver knows why


def test_an_interruption_after_the_boundary_stops_a_delayed_turn() -> None:
    turn = Turn()
    turn.interrupt_before = PREFIX[1] + 1  # one more event goes out after the pause, then the turn stops
    assert turn.run(_plan("delay_then_continue", 1, delay_ms=10)) == PREFIX[1] + 1
    assert turn.log == [*_sent(PREFIX[1]), ("hold", 0.01), ("send", EVENTS[PREFIX[1]][0])]
    assert turn.evidence.transport_outcome == "early_end"


@pytest.mark.parametrize(("mode", "delay_ms"), [("delay_then_continue", 60_000), ("stall", 300_000)])
def test_a_hold_cut_short_by_an_interruption_ends_the_turn_early(mode: str, delay_ms: int) -> None:
    turn = Turn(WaitOutcome.CANCELLED)
    turn.hold.interrupts = True
    assert turn.run(_plan(mode, 1, delay_ms=delay_ms)) == PREFIX[1]
    assert turn.log == [*_sent(PREFIX[1]), ("hold", delay_ms / 1000)]
    assert turn.evidence.transport_outcome == "early_end" and turn.evidence.ended_by is None


@pytest.mark.parametrize(("mode", "delay_ms"), [("delay_then_continue", 60_000), ("stall", 300_000)])
def test_a_hold_cut_short_by_a_superseded_session_ends_the_turn_as_superseded(
    mode: str, delay_ms: int
) -> None:
    turn = Turn(WaitOutcome.CANCELLED)
    assert turn.run(_plan(mode, CONTENT_EVENTS, delay_ms=delay_ms)) == PREFIX[CONTENT_EVENTS]
    assert turn.log == [*_sent(PREFIX[CONTENT_EVENTS]), ("hold", delay_ms / 1000)]  # no terminal event
    assert turn.evidence.transport_outcome == "early_end" and turn.evidence.ended_by == "superseded"
    assert not turn.evidence.terminal_marker_observed


def test_a_superseded_hold_keeps_why_the_driver_already_ended_the_delivery() -> None:
    turn = Turn(WaitOutcome.CANCELLED)
    turn.evidence.ended_by = "shutdown"
    turn.run(_plan("stall", 1, delay_ms=5))
    assert turn.evidence.ended_by == "shutdown"


def test_hold_and_interrupted_are_the_callers_own() -> None:
    """The units wait only through the driver's ``hold`` (which the reader greenlet outlives), never by
    sleeping themselves: a 300 s stall with a hold that returns at once takes no time."""
    turn = Turn()
    started = time.monotonic()
    turn.run(_plan("stall", 1, delay_ms=300_000))
    assert time.monotonic() - started < 5
