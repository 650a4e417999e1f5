"""Each delivery mode's unit in memory: a fake socket, a fake wait and clock, the writer's bytes as the wire.

The end-to-end tests beside this file prove the same modes through gunicorn and the official SDKs; these
pin what each unit writes and records without a server (the shape of Toxiproxy's channel-fed toxic tests).
"""

from __future__ import annotations

import socket
import struct
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from llmts.schema.faults import FrameKind, StreamDelivery
from llmts.transport.abort import ConnectionAborted
from llmts.transport.evidence import DeliveryEvidence
from llmts.transport.modes import (
    REGISTRY,
    Boundary,
    abort_connection,
    delay_then_continue,
    early_clean_end,
    empty_response,
    http_error_page,
    malformed_frame,
    reset_before_headers,
    slow_drip,
    stall,
    truncate_bytes,
)
from llmts.transport.waiting import WaitOutcome
from llmts.transport.writer import MALFORMED_SSE_FRAME, deliver_stream

START = b'data: {"start": true}\n\n'
FIRST = b'data: {"text": "First "}\n\n'
SECOND = b'data: {"text": "second."}\n\n'
DONE = b"data: [DONE]\n\n"
FRAMES = [START, FIRST, SECOND, DONE]
KINDS = [FrameKind.OTHER, FrameKind.CONTENT, FrameKind.CONTENT, FrameKind.TERMINAL]


class FakeSocket:
    """Records what the transport did to the connection."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def setsockopt(self, level: int, option: int, value: bytes) -> None:
        self.calls.append(("setsockopt", level, option, value))

    def shutdown(self, how: int) -> None:
        self.calls.append(("shutdown", how))

    def close(self) -> None:
        self.calls.append(("close",))


class FakeWait:
    """Answers every wait with ``outcome`` at once and records what was asked."""

    def __init__(self, outcome: WaitOutcome = WaitOutcome.ELAPSED) -> None:
        self.outcome = outcome
        self.asked: list[tuple[float, Any, bool]] = []

    def __call__(self, seconds: float, sock: Any, cancelled: Callable[[], bool]) -> WaitOutcome:
        self.asked.append((seconds, sock, cancelled()))
        return self.outcome


class Finish:
    def __init__(self) -> None:
        self.calls: list[DeliveryEvidence] = []

    def __call__(self, evidence: DeliveryEvidence) -> None:
        self.calls.append(evidence)


def _plan(**fields: Any) -> StreamDelivery:
    return StreamDelivery.model_validate(fields)


def _deliver(
    plan: StreamDelivery | None, sock: Any = None, malformed: bytes = MALFORMED_SSE_FRAME
) -> tuple[list[bytes], DeliveryEvidence, Finish]:
    evidence, finish = DeliveryEvidence(plan), Finish()
    wire = list(deliver_stream(FRAMES, KINDS, plan, sock, evidence, finish, malformed))
    assert finish.calls == [evidence]  # the journal hears of the response exactly once
    return wire, evidence, finish


def _act(unit: Callable[[Boundary], Iterator[bytes]], boundary: Boundary) -> tuple[list[bytes], bool]:
    """Run an in-stream unit's ``act`` to its end: (what it wrote, whether the writer continues)."""
    written: list[bytes] = []
    generator: Any = unit(boundary)
    try:
        while True:
            written.append(next(generator))
    except StopIteration as stop:
        return written, bool(stop.value)


def _boundary(plan: StreamDelivery, wait: FakeWait | None = None, sock: Any = None) -> Boundary:
    evidence = DeliveryEvidence(plan)
    if wait is None:
        return Boundary(plan, sock, evidence, SECOND, MALFORMED_SSE_FRAME)
    return Boundary(plan, sock, evidence, SECOND, MALFORMED_SSE_FRAME, wait)


# --- without a plan -----------------------------------------------------------------------------------


def test_no_plan_is_one_coalesced_write() -> None:
    wire, evidence, _ = _deliver(None)
    assert wire == [b"".join(FRAMES)]
    assert (evidence.emitted_frames, evidence.emitted_content_frames) == (4, 2)
    assert evidence.terminal_marker_observed and evidence.transport_outcome == "completed"
    assert not evidence.stream_delivery_applied


def test_a_connection_plan_never_splits_the_stream() -> None:
    wire, evidence, _ = _deliver(_plan(mode="reset_before_headers"))
    assert wire == [b"".join(FRAMES)] and evidence.transport_outcome == "completed"


def test_a_client_gone_at_a_write_is_recorded_once() -> None:
    evidence, finish = DeliveryEvidence(None), Finish()
    stream: Any = deliver_stream(FRAMES, KINDS, _plan(mode="malformed_frame"), None, evidence, finish)
    assert next(stream) == START
    stream.close()  # what the WSGI server does when sendall raised
    assert evidence.transport_outcome == "client_gone" and finish.calls == [evidence]


# --- in-stream units ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("after", "sent"), [(1, [START, FIRST]), (2, [START, FIRST, SECOND])])
def test_early_clean_end_stops_after_the_boundary_frame(after: int, sent: list[bytes]) -> None:
    wire, evidence, _ = _deliver(_plan(mode="early_clean_end", after_content_frames=after))
    assert wire == sent
    assert evidence.stream_delivery_applied and evidence.transport_outcome == "early_end"
    assert (evidence.emitted_content_frames, evidence.terminal_marker_observed) == (after, False)
    written, go_on = _act(early_clean_end.act, _boundary(_plan(mode="early_clean_end")))
    assert (written, go_on) == ([], False)


def test_abort_connection_resets_after_the_boundary_frame() -> None:
    sock, evidence, finish = FakeSocket(), DeliveryEvidence(None), Finish()
    wire: list[bytes] = []
    with pytest.raises(ConnectionAborted) as caught:
        for piece in deliver_stream(FRAMES, KINDS, _plan(mode="abort_connection"), sock, evidence, finish):
            wire.append(piece)
    assert isinstance(caught.value, ConnectionResetError)  # gunicorn treats it as benign
    assert wire == [START, FIRST]
    assert sock.calls == [
        ("setsockopt", socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)),
        ("shutdown", socket.SHUT_RD),
        ("close",),
    ]
    assert evidence.transport_outcome == "aborted" and finish.calls == [evidence]
    assert not evidence.terminal_marker_observed and evidence.emitted_content_frames == 1


def test_abort_connection_without_a_socket_still_aborts() -> None:
    with pytest.raises(ConnectionAborted):
        _act(abort_connection.act, _boundary(_plan(mode="abort_connection")))


def test_truncate_bytes_cuts_the_next_frame_and_ends_cleanly() -> None:
    wire, evidence, _ = _deliver(_plan(mode="truncate_bytes", cut_bytes=7))
    assert wire == [START, FIRST, SECOND[:7]]
    assert evidence.transport_outcome == "early_end"
    # The piece counts as bytes, not as a frame.
    assert evidence.emitted_frames == 2 and evidence.emitted_bytes == len(START) + len(FIRST) + 7
    plan = _plan(mode="truncate_bytes", cut_bytes=1000)
    at = Boundary(plan, None, DeliveryEvidence(plan), None, MALFORMED_SSE_FRAME)  # boundary was last
    assert _act(truncate_bytes.act, at) == ([], False) and at.evidence.emitted_bytes == 0


def test_malformed_frame_inserts_one_broken_frame_then_continues() -> None:
    wire, evidence, _ = _deliver(_plan(mode="malformed_frame"))
    assert wire == [START, FIRST, MALFORMED_SSE_FRAME, SECOND, DONE]
    assert evidence.transport_outcome == "completed" and evidence.terminal_marker_observed
    assert (evidence.emitted_frames, evidence.emitted_content_frames) == (5, 2)
    assert evidence.emitted_bytes == sum(map(len, wire))
    own = b"event: content_block_delta\ndata: {broken\n\n"  # a provider's own broken frame
    wire, _, _ = _deliver(_plan(mode="malformed_frame", after_content_frames=2), malformed=own)
    assert wire == [START, FIRST, SECOND, own, DONE]
    assert _act(malformed_frame.act, _boundary(_plan(mode="malformed_frame")))[1] is True


def test_delay_then_continue_holds_then_lets_the_writer_go_on() -> None:
    wait, sock = FakeWait(), object()
    at = _boundary(_plan(mode="delay_then_continue", delay_ms=1500), wait, sock)
    assert _act(delay_then_continue.act, at) == ([], True)
    assert wait.asked == [(1.5, sock, False)]  # only the client can cut the pause short
    assert at.evidence.transport_outcome is None


def test_delay_then_continue_stops_when_the_client_left() -> None:
    wait = FakeWait(WaitOutcome.CLIENT_GONE)
    at = _boundary(_plan(mode="delay_then_continue", delay_ms=10), wait)
    assert _act(delay_then_continue.act, at) == ([], False)
    assert at.evidence.transport_outcome == "client_gone"


def test_delay_then_continue_through_the_writer_on_a_socket_pair() -> None:
    ours, theirs = socket.socketpair()
    try:
        wire, evidence, _ = _deliver(_plan(mode="delay_then_continue", delay_ms=20), ours)
        assert wire == FRAMES and evidence.transport_outcome == "completed"
        assert evidence.stream_delivery_applied and evidence.terminal_marker_observed
        theirs.close()  # the client leaves: the pause notices it
        wire, evidence, _ = _deliver(_plan(mode="delay_then_continue", delay_ms=5000), ours)
        assert wire == [START, FIRST] and evidence.transport_outcome == "client_gone"
    finally:
        ours.close()
        theirs.close()


@pytest.mark.parametrize(
    ("outcome", "recorded"), [(WaitOutcome.ELAPSED, "early_end"), (WaitOutcome.CLIENT_GONE, "client_gone")]
)
def test_stall_holds_then_ends_without_the_terminal_sequence(outcome: WaitOutcome, recorded: str) -> None:
    wait = FakeWait(outcome)
    at = _boundary(_plan(mode="stall", delay_ms=30_000), wait)
    assert _act(stall.act, at) == ([], False)
    assert [seconds for seconds, _, _ in wait.asked] == [30.0]
    assert at.evidence.transport_outcome == recorded


def test_stall_through_the_writer_on_a_socket_pair() -> None:
    ours, theirs = socket.socketpair()
    try:
        wire, evidence, _ = _deliver(_plan(mode="stall", delay_ms=20), ours)
        assert wire == [START, FIRST] and evidence.transport_outcome == "early_end"
        assert not evidence.terminal_marker_observed
    finally:
        ours.close()
        theirs.close()


# --- pacing -------------------------------------------------------------------------------------------


class FakeClock:
    """Each reading advances ``step`` seconds: a write that took ``step``."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def test_slow_drip_paces_pieces_at_the_rate() -> None:
    plan, wait, clock = _plan(mode="slow_drip", bytes_per_second=100), FakeWait(), FakeClock(0.01)
    evidence = DeliveryEvidence(plan)
    sock = object()
    wire = list(slow_drip.deliver(FRAMES, KINDS, plan, sock, evidence, wait=wait, clock=clock))
    assert b"".join(wire) == b"".join(FRAMES)
    # 100 B/s at most 20 writes per second: 5-byte pieces that never straddle two frames.
    expected = [frame[i : i + 5] for frame in FRAMES for i in range(0, len(frame), 5)]
    assert wire == expected
    # Before each piece but the first: what the previous one cost at the rate, less its write time (none
    # when the write took all of it: a 1-byte piece costs 0.01 s).
    owed = [len(previous) / 100 - 0.01 for previous in wire[:-1]]
    assert [seconds for seconds, _, _ in wait.asked] == pytest.approx([o for o in owed if o > 0])
    assert len(wait.asked) > len(wire) / 2
    assert all(asked_sock is sock and not cancelled for _, asked_sock, cancelled in wait.asked)
    assert evidence.stream_delivery_applied and evidence.transport_outcome == "completed"
    assert (evidence.emitted_frames, evidence.emitted_content_frames) == (4, 2)
    assert evidence.terminal_marker_observed and evidence.emitted_bytes == len(b"".join(FRAMES))


def test_slow_drip_does_not_wait_when_the_write_took_longer_than_its_share() -> None:
    plan, wait = _plan(mode="slow_drip", bytes_per_second=10_000_000), FakeWait()
    clock = FakeClock(1.0)  # every write takes a second, far more than its share at this rate
    wire = list(slow_drip.deliver(FRAMES, KINDS, plan, None, DeliveryEvidence(plan), wait=wait, clock=clock))
    assert wire == FRAMES and wait.asked == []  # 500 kB pieces: each frame is one piece


def test_slow_drip_stops_when_the_client_left() -> None:
    plan, wait = _plan(mode="slow_drip", bytes_per_second=100), FakeWait(WaitOutcome.CLIENT_GONE)
    evidence = DeliveryEvidence(plan)
    wire = list(slow_drip.deliver(FRAMES, KINDS, plan, None, evidence, wait=wait, clock=FakeClock(0)))
    assert wire == [START[:5]]
    assert evidence.transport_outcome == "client_gone" and evidence.emitted_frames == 0


def test_slow_drip_through_the_writer_is_the_whole_stream() -> None:
    wire, evidence, _ = _deliver(_plan(mode="slow_drip", bytes_per_second=10_000_000))
    assert wire == FRAMES and evidence.transport_outcome == "completed"


# --- connection units ---------------------------------------------------------------------------------


def test_reset_before_headers_sends_a_reset() -> None:
    sock = FakeSocket()
    error = reset_before_headers.drop(sock)
    assert isinstance(error, ConnectionAborted) and isinstance(error, ConnectionResetError)
    assert sock.calls[0] == ("setsockopt", socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    assert sock.calls[1:] == [("shutdown", socket.SHUT_RD), ("close",)]
    assert isinstance(reset_before_headers.drop(None), ConnectionAborted)


def test_empty_response_closes_without_a_reset() -> None:
    sock = FakeSocket()
    error = empty_response.drop(sock)
    assert isinstance(error, ConnectionAborted)
    assert sock.calls == [("shutdown", socket.SHUT_RDWR), ("close",)]  # no SO_LINGER: a FIN, not a RST


@pytest.mark.parametrize(
    ("status", "title"),
    [(502, "502 Bad Gateway"), (503, "503 Service Temporarily Unavailable"), (504, "504 Gateway Time-out")],
)
def test_http_error_page_is_a_whole_proxy_page(status: int, title: str) -> None:
    page = http_error_page.page(_plan(mode="http_error_page", status=status))
    assert (page.status, page.status_line) == (status, title)
    assert page.body.startswith(b"<html>") and f"<h1>{title}</h1>".encode() in page.body
    assert dict(page.headers) == {
        "Content-Type": "text/html",
        "Content-Length": str(len(page.body)),
        "Connection": "close",
    }


def test_every_registered_unit_is_covered_here() -> None:
    covered = {
        "early_clean_end",
        "delay_then_continue",
        "abort_connection",
        "truncate_bytes",
        "malformed_frame",
        "stall",
        "slow_drip",
        "reset_before_headers",
        "empty_response",
        "http_error_page",
    }
    assert set(REGISTRY) == covered  # a new mode gets its unit test in this file
