"""In-memory tests of the write guard and of how the journal records deliveries llmts ended itself."""

from __future__ import annotations

from typing import Any

from llmts.providers.base import Reply
from llmts.runtime import SessionRegistry
from llmts.schema.faults import FrameKind, StreamDelivery
from llmts.server.respond import respond
from llmts.transport import DeliveryEvidence
from llmts.transport.deadline import ActiveDelivery, end_delivery, guard_writes


def _start_response(status: str, headers: list[tuple[str, str]]) -> None:
    return None


def _stream_reply() -> Reply:
    frames = [b"data: 1\n\n", b"data: 2\n\n", b"data: [DONE]\n\n"]
    kinds = [FrameKind.CONTENT, FrameKind.CONTENT, FrameKind.TERMINAL]
    return Reply(200, [("Content-Type", "text/event-stream")], frames=frames, frame_kinds=kinds)


# A plan makes the writer send frame by frame (without one, frames are coalesced into one write).
_PLAN = StreamDelivery(mode="delay_then_continue", after_content_frames=1, delay_ms=1)


def _journaled(active: set[ActiveDelivery]) -> tuple[Any, Any, Any]:
    session = SessionRegistry().default
    entry = session.journal.start("req_1", "openai", "POST", "/openai/v1/chat/completions")
    body = respond(
        _start_response, _stream_reply(), {}, session, entry, plan=_PLAN, write_timeout=None, active=active
    )
    return session, entry, iter(body)


def test_guard_registers_the_delivery_and_forgets_it_when_done() -> None:
    active: set[ActiveDelivery] = set()
    _, entry, body = _journaled(active)

    assert next(body) == b"data: 1\n\n"
    assert len(active) == 1
    assert list(body) == [b"data: 2\n\n", b"data: [DONE]\n\n"]
    assert active == set()
    assert (entry.transport_outcome, entry.error_code) == ("completed", None)


def test_shutdown_ends_a_running_delivery_cleanly_and_journals_why() -> None:
    active: set[ActiveDelivery] = set()
    _, entry, body = _journaled(active)
    assert next(body) == b"data: 1\n\n"

    for delivery in list(active):
        end_delivery(delivery)

    assert list(body) == []  # no more frames: the server then writes the chunked terminator
    assert entry.transport_outcome == "early_end"
    assert entry.error_code == "llm_test_server_shutdown"
    assert entry.success is False and entry.terminal_marker_observed is False
    assert entry.completed is True and active == set()


def test_shutdown_after_completion_changes_nothing() -> None:
    active: set[ActiveDelivery] = set()
    evidence = DeliveryEvidence()
    finished: list[str | None] = []

    def inner() -> Any:
        try:
            yield b"all"
            evidence.transport_outcome = "completed"
        finally:
            finished.append(evidence.transport_outcome)

    guarded = guard_writes(inner(), evidence, None, None, active)
    assert list(guarded) == [b"all"]
    assert finished == ["completed"]


def test_write_guard_without_gevent_is_transparent() -> None:
    evidence = DeliveryEvidence()
    chunks = [b"a", b"b"]
    assert list(guard_writes(iter(chunks), evidence, None, 0.01, None)) == chunks
    assert evidence.ended_by is None
