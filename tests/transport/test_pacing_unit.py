"""The pacing writer in memory (llmts/transport/pacing.py): the schedule, what each write carries, the
waits it asks for, and how a reset or a departed client ends it."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from llmts.schema.faults import FrameKind
from llmts.transport.evidence import DeliveryEvidence
from llmts.transport.pacing import StreamPacing, deliver_paced, jittered, schedule
from llmts.transport.waiting import WaitOutcome
from llmts.transport.writer import deliver_stream

FRAMES = [b"head", b"a" * 10, b"b" * 30, b"c" * 60, b"[DONE]"]
KINDS = [FrameKind.OTHER, FrameKind.CONTENT, FrameKind.CONTENT, FrameKind.CONTENT, FrameKind.TERMINAL]


class Clock:
    """A clock that only moves when a wait elapses (writes take no time)."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Wait:
    def __init__(self, clock: Clock, outcomes: list[WaitOutcome] | None = None) -> None:
        self.clock, self.asked = clock, []  # type: list[float]
        self.outcomes = outcomes or []

    def __call__(self, seconds: float, sock: Any, cancelled: Callable[[], bool]) -> WaitOutcome:
        self.asked.append(seconds)
        if self.outcomes:
            return self.outcomes.pop(0)
        self.clock.now += seconds
        return WaitOutcome.ELAPSED


def _pacing(
    tps: float | None = 100.0, tokens: int = 20, jitter: float = 0.0, seed: int | None = None
) -> StreamPacing:
    rng = random.Random(seed) if seed is not None else None
    return StreamPacing(1 / tps if tps else None, jitter, tokens, rng, lambda: False, 0.25)


def test_schedule_spreads_the_tokens_by_each_frames_share_of_bytes() -> None:
    waits = schedule([len(f) for f in FRAMES], 20, 0.01, 0.0, None)
    total = sum(len(f) for f in FRAMES[1:])
    assert waits == pytest.approx([0.2 * len(f) / total for f in FRAMES[1:]])
    assert sum(waits) == pytest.approx(0.2)  # 20 tokens at 100 per second
    assert schedule([5, 5], 20, None, 0.0, None) == [0.0]  # ttft only
    assert schedule([5], 20, 0.01, 0.0, None) == []


def test_jitter_stays_within_its_fraction_and_repeats_with_the_seed() -> None:
    values = [jittered(1.0, 0.3, rng) for rng in [random.Random(1)] * 50]
    assert all(0.7 <= value <= 1.3 for value in values) and len(set(values)) > 1
    first = schedule([len(f) for f in FRAMES], 20, 0.01, 0.5, random.Random("seed"))
    again = schedule([len(f) for f in FRAMES], 20, 0.01, 0.5, random.Random("seed"))
    assert first == again != schedule([len(f) for f in FRAMES], 20, 0.01, 0.0, None)
    assert jittered(1.0, 0.0, random.Random(1)) == 1.0


def test_frames_leave_on_schedule_with_evidence_after_each_write() -> None:
    clock = Clock()
    wait = Wait(clock)
    evidence = DeliveryEvidence()
    pacing = _pacing()
    writes = []
    for chunk in deliver_paced(FRAMES, KINDS, pacing, object(), evidence, wait=wait, clock=clock):
        writes.append((chunk, clock.now))
    assert b"".join(chunk for chunk, _ in writes) == b"".join(FRAMES)
    planned = schedule([len(f) for f in FRAMES], 20, 0.01, 0.0, None)
    # Each frame is its own write here (every wait is above the 10 ms floor).
    assert [chunk for chunk, _ in writes] == FRAMES
    assert [at - 100.0 for _, at in writes] == pytest.approx([0.0, *[sum(planned[:i]) for i in range(1, 5)]])
    assert evidence.transport_outcome == "completed" and evidence.terminal_marker_observed
    assert (evidence.emitted_frames, evidence.emitted_content_frames) == (5, 3)
    assert evidence.emitted_bytes == sum(len(f) for f in FRAMES)
    assert evidence.first_frame_at == 100.0 and evidence.last_frame_at == pytest.approx(100.2)
    assert evidence.pacing_planned_ms == pytest.approx(250 + 200)


def test_frames_due_within_the_floor_share_one_write() -> None:
    clock = Clock()
    evidence = DeliveryEvidence()
    # 20 tokens at 10,000 per second: 2 ms for the whole stream, below the floor: one write, no wait.
    wait = Wait(clock)
    writes = list(deliver_paced(FRAMES, KINDS, _pacing(tps=10_000), None, evidence, wait=wait, clock=clock))
    assert writes == [b"".join(FRAMES)] and wait.asked == []
    assert evidence.emitted_frames == 5 and evidence.transport_outcome == "completed"


@pytest.mark.parametrize(
    ("outcome", "transport_outcome", "ended_by"),
    [(WaitOutcome.CANCELLED, "early_end", "superseded"), (WaitOutcome.CLIENT_GONE, "client_gone", None)],
)
def test_a_reset_or_a_departed_client_ends_the_stream_between_frames(
    outcome: WaitOutcome, transport_outcome: str, ended_by: str | None
) -> None:
    clock = Clock()
    evidence = DeliveryEvidence()
    wait = Wait(clock, [WaitOutcome.ELAPSED, outcome])
    writes = list(deliver_paced(FRAMES, KINDS, _pacing(), None, evidence, wait=wait, clock=clock))
    assert writes == FRAMES[:2]
    assert (evidence.transport_outcome, evidence.ended_by) == (transport_outcome, ended_by)
    assert evidence.emitted_frames == 2 and not evidence.terminal_marker_observed


def test_the_writer_keeps_one_coalesced_write_without_pacing_and_paces_with_it() -> None:
    finished: list[DeliveryEvidence] = []
    evidence = DeliveryEvidence()
    assert list(deliver_stream(FRAMES, KINDS, None, None, evidence, finished.append)) == [b"".join(FRAMES)]
    assert evidence.first_frame_at == evidence.last_frame_at is not None
    assert evidence.pacing_planned_ms is None
    paced = DeliveryEvidence()
    pacing = _pacing(tps=1_000_000)  # due at once: still the pacing path, one write
    writes = list(deliver_stream(FRAMES, KINDS, None, None, paced, finished.append, pacing=pacing))
    assert writes == [b"".join(FRAMES)] and paced.pacing_planned_ms is not None
    assert [e.transport_outcome for e in finished] == ["completed", "completed"]
