"""The session's parts through their own interfaces, without a server (docs/architecture.md, "Sessions"):
the object store, the rate window, the recorder, the queues, the conversations, the plan view and the
journal's clock, each with its memory charge and its share of the one session lock."""

from __future__ import annotations

import gc
import threading
import weakref

import pytest

from llmts.errors import MemoryBudgetExceeded, RateLimitExceeded, RecordingFull
from llmts.runtime import Session, SessionRegistry
from llmts.runtime.admission import Admission
from llmts.runtime.memory import MemoryBudget
from llmts.runtime.recording import Exchange, Recorder
from llmts.runtime.session_conversations import SessionConversations
from llmts.runtime.session_rates import SessionRates
from llmts.runtime.session_recorder import SessionRecorder
from llmts.runtime.session_store import SessionStore
from llmts.runtime.store import MAX_STORED_BYTES, MAX_STORED_OBJECTS
from llmts.schema import ConfigBuilder
from llmts.schema.config import SessionConfig
from llmts.schema.determinism import Determinism
from llmts.schema.neutral import NeutralMessage, NeutralRequest
from llmts.schema.pacing import Pacing, RateLimits
from llmts.schema.recorded import RecordedRequest, RecordingSettings
from llmts.schema.validation import parse_session_config
from tests.runtime.doubles import CountingIds, FixedClock


class _Clock:
    """A clock a test moves."""

    def __init__(self) -> None:
        self.epoch = 1_700_000_000.0
        self.mono = 100.0

    def now(self) -> float:
        return self.epoch

    def monotonic(self) -> float:
        return self.mono


def _request(text: str = "hi") -> NeutralRequest:
    return NeutralRequest(
        provider="openai",
        operation="chat.completions",
        model="gpt-4o",
        messages=(NeutralMessage(role="user", text=text),),
    )


def _exchange(body: bytes = b'{"ok": true}') -> Exchange:
    request = RecordedRequest(operation="chat.completions", model="gpt-4o")
    return Exchange("openai", None, request, 200, (("content-type", "application/json"),), body, None)


# --- store -----------------------------------------------------------------------------------------


def test_store_keeps_objects_per_namespace_and_charges_the_budget() -> None:
    budget = MemoryBudget(1 << 20)
    store = SessionStore(threading.Lock(), budget)
    store.put("openai", "a", "first", 100)
    store.put("images", "a", b"png", 300)
    assert (store.get("openai", "a"), store.get("images", "a"), store.get("other", "a")) == (
        "first",
        b"png",
        None,
    )
    assert store.retained_bytes == budget.store_bytes == 400
    store.put("openai", "a", "again", 50)  # the same key replaces, and the charge follows
    assert store.get("openai", "a") == "again" and budget.store_bytes == 350
    assert store.delete("openai", "a") and not store.delete("openai", "a") and not store.delete("none", "a")
    assert store.get("openai", "a") is None and budget.store_bytes == 300
    store.clear_locked()
    assert store.get("images", "a") is None and budget.store_bytes == 0


def test_store_is_bounded_oldest_first() -> None:
    store = SessionStore(threading.Lock(), None)
    for index in range(MAX_STORED_OBJECTS + 1):
        store.put("openai", f"k{index}", index, 1)
    assert store.get("openai", "k0") is None and store.get("openai", "k1") == 1
    assert store.retained_bytes == MAX_STORED_OBJECTS


def test_an_object_larger_than_the_store_is_not_kept_and_evicts_nothing() -> None:
    """It evicted every other object, then itself (found by a bounds audit: a chain of large stored
    responses lost all of them)."""
    budget = MemoryBudget(1 << 40)
    store = SessionStore(threading.Lock(), budget)
    store.put("openai", "kept", 1, 100)
    store.put("openai", "huge", 2, MAX_STORED_BYTES + 1)
    assert store.get("openai", "huge") is None and store.get("openai", "kept") == 1
    assert store.retained_bytes == budget.store_bytes == 100
    store.put("openai", "kept", 3, MAX_STORED_BYTES + 1)  # replacing with one too large drops the old
    assert store.get("openai", "kept") is None and budget.store_bytes == 0


def test_store_refuses_what_the_budget_cannot_hold_and_keeps_nothing_of_it() -> None:
    budget = MemoryBudget(1000)
    store = SessionStore(threading.Lock(), budget)
    store.put("openai", "small", 1, 600)
    with pytest.raises(MemoryBudgetExceeded, match="a stored object needs 500 more bytes"):
        store.put("openai", "big", 2, 500)
    assert store.get("openai", "big") is None and budget.store_bytes == 600 and budget.refused == 1


def test_a_retired_store_gives_its_bytes_back_and_charges_nothing_more() -> None:
    budget = MemoryBudget(1 << 20)
    store = SessionStore(threading.Lock(), budget)
    store.put("openai", "a", 1, 700)
    store.retire_locked()
    assert budget.store_bytes == 0 and store.get("openai", "a") is None
    store.put("openai", "late", 1, 700)  # a request still in flight after the delete
    assert budget.store_bytes == 0


# --- rate window -----------------------------------------------------------------------------------


def test_rates_without_a_window_do_nothing() -> None:
    rates = SessionRates(threading.Lock(), _Clock())
    for _ in range(100):
        rates.take(_request())
    rates.spend(10**6)
    assert rates.state() is None


def test_rate_window_takes_refuses_and_reopens() -> None:
    clock = _Clock()
    rates = SessionRates(threading.Lock(), clock)
    rates.restart_locked(RateLimits(requests_per_minute=2, window_seconds=10), None)
    rates.take(_request())
    clock.mono += 4
    rates.take(_request())
    with pytest.raises(RateLimitExceeded) as refused:
        rates.take(_request())
    assert refused.value.retry_after == 6.0  # the window opened at the first request, 10 s long
    state = rates.state()
    assert state is not None and (state.requests_limit, state.requests_remaining) == (2, 0)
    assert state.reset_epoch == clock.epoch + 6.0
    clock.mono += 6  # the next window
    rates.take(_request())
    state = rates.state()
    assert state is not None and state.requests_remaining == 1


def test_rate_window_counts_spent_output_tokens_and_reports_on_a_fixed_clock() -> None:
    clock = _Clock()
    rates = SessionRates(threading.Lock(), clock)
    fixed = Determinism.model_validate({"seed": "s", "fixed_utc": "2026-01-01T00:00:00Z"})
    rates.restart_locked(RateLimits(tokens_per_minute=100, window_seconds=30), fixed)
    rates.take(_request("hi"))
    rates.spend(98)
    with pytest.raises(RateLimitExceeded, match="Rate limit reached for tokens: limit 100"):
        rates.take(_request("hi"))  # at least one input token more than what is left
    state = rates.state()
    assert state is not None and state.tokens_remaining is not None and state.tokens_remaining < 2
    # On the fixed wire clock no time passes: every reset is the whole window from the fixed instant.
    assert fixed.fixed_epoch is not None and state.reset_epoch == fixed.fixed_epoch + 30
    rates.restart_locked(None, None)  # reconfigured without rate_limits
    rates.take(_request())
    assert rates.state() is None


# --- recorder --------------------------------------------------------------------------------------


def test_a_session_that_does_not_record_keeps_nothing() -> None:
    recorder = SessionRecorder(threading.Lock(), None, lambda generation: True)
    recorder.room()
    assert not recorder.active and not recorder.keep(_exchange(), (), 1)
    recorder.drop()
    assert recorder.recorded() == ([], 0)


def test_recorder_room_keep_drop_and_charge() -> None:
    budget = MemoryBudget(1 << 20)
    current = {"generation": 1}
    recorder = SessionRecorder(threading.Lock(), budget, lambda g: g == current["generation"])
    recorder.install_locked(Recorder(RecordingSettings(max_exchanges=2)))
    assert recorder.active
    assert recorder.keep(_exchange(b"secret-token-1234 said hi"), ("secret-token-1234",), 1)
    (kept,), dropped = recorder.recorded()
    assert kept.body == b"[REDACTED] said hi" and dropped == 0
    assert budget.recording_bytes == kept.retained_bytes() > 0
    current["generation"] = 2  # reset in between: not kept, not counted as dropped
    assert not recorder.keep(_exchange(), (), 1)
    assert recorder.keep(_exchange(), (), 2)
    with pytest.raises(RecordingFull, match="already keeps 2 exchanges"):
        recorder.room()
    assert not recorder.keep(_exchange(), (), 2)  # full: answered but not kept
    recorder.drop()
    exchanges, dropped = recorder.recorded()
    assert len(exchanges) == 2 and dropped == 2
    recorder.clear_locked()
    assert recorder.recorded() == ([], 0) and budget.recording_bytes == 0
    recorder.room()


def test_recorder_drops_what_the_budget_cannot_hold() -> None:
    budget = MemoryBudget(1000)
    recorder = SessionRecorder(threading.Lock(), budget, lambda g: True)
    recorder.install_locked(Recorder(None))
    assert not recorder.keep(_exchange(b"x" * 2000), (), 0)
    assert recorder.recorded() == ([], 1) and budget.recording_bytes == 0 and budget.refused == 1


def _bodies(recorder: SessionRecorder) -> list[bytes | None]:
    return [exchange.body for exchange in recorder.recorded()[0]]


def test_the_recording_is_in_request_order_not_completion_order() -> None:
    # A streamed answer is kept when its relay ends, after the client read its last frame and sent its next
    # request, which can complete first (docs/recording.md, "What a recording holds").
    current = {"generation": 1}
    recorder = SessionRecorder(threading.Lock(), None, lambda g: g == current["generation"])
    assert recorder.reserve() is None  # not recording: no place
    recorder.install_locked(Recorder(None))
    first, second, third, fourth = (recorder.reserve() for _ in range(4))
    assert recorder.keep(_exchange(b"second"), (), 1, second)
    assert recorder.keep(_exchange(b"fourth"), (), 1, fourth)
    assert recorder.keep(_exchange(b"first"), (), 1, first)
    # The third request's place is never filled (its client left, its upstream failed): no gap, and the
    # places around it are not held back.
    assert _bodies(recorder) == [b"first", b"second", b"fourth"]
    assert recorder.keep(_exchange(b"unplaced"), (), 1)  # no place: after every place taken so far
    fifth = recorder.reserve()
    assert recorder.keep(_exchange(b"fifth"), (), 1, fifth)
    assert _bodies(recorder) == [b"first", b"second", b"fourth", b"unplaced", b"fifth"]
    assert third is not None and recorder.recorded()[1] == 0
    # A place taken before a reset or reconfigure is never kept in the new recording.
    stale = recorder.reserve()
    current["generation"] = 2
    recorder.clear_locked()
    later = recorder.reserve()
    assert not recorder.keep(_exchange(b"stale"), (), 1, stale)
    assert recorder.keep(_exchange(b"later"), (), 2, later)
    assert _bodies(recorder) == [b"later"]


def test_places_do_not_change_the_bounds_or_the_dropped_count() -> None:
    recorder = SessionRecorder(threading.Lock(), None, lambda g: True)
    recorder.install_locked(Recorder(RecordingSettings(max_exchanges=2)))
    places = [recorder.reserve() for _ in range(4)]
    recorder.room()  # places taken are not exchanges kept
    assert recorder.keep(_exchange(b"3"), (), 0, places[3])
    assert recorder.keep(_exchange(b"1"), (), 0, places[1])
    with pytest.raises(RecordingFull):
        recorder.room()
    assert not recorder.keep(_exchange(b"0"), (), 0, places[0])  # full when it completed: dropped
    assert _bodies(recorder) == [b"1", b"3"] and recorder.recorded()[1] == 1


# --- queues, conversations, plan -------------------------------------------------------------------


def _session(clock: object | None = None) -> Session:
    registry = SessionRegistry(clock=clock or FixedClock(), ids=CountingIds())  # type: ignore[arg-type]
    return registry.create()


def test_queues_report_cursors_and_start_over_on_reset() -> None:
    session = _session()
    assert session.queues.status() == []
    session.configure(ConfigBuilder().scenario("s").text("a").text("b").build())
    session.complete(session.admit(_request()), _request())
    (status,) = session.queues.status()
    assert (status.scenario, status.consumed, status.next_response_index, status.exhausted) == (
        "s",
        1,
        1,
        False,
    )
    session.complete(session.admit(_request()), _request())
    assert session.queues.status()[0].exhausted
    session.reset()
    assert session.queues.status()[0].consumed == 0


def test_conversations_without_graphs_have_no_state() -> None:
    conversations = SessionConversations(threading.Lock(), MemoryBudget(1 << 20))
    assert conversations.status() == [] and conversations.status("c1") == []
    conversations.clear_locked()
    conversations.retire_locked()
    assert conversations.book is None


def test_plan_view_before_and_after_configure() -> None:
    session = _session()
    plan = session.plan
    assert not plan.configured and plan.configuration is None and plan.serves_model("anything")
    assert plan.model_ids(("d1",)) == ["d1"] and plan.credential_for("openai") is None
    assert plan.upstream_for("openai") is None
    config = parse_session_config(
        {
            "models": ["m1"],
            "provider_credentials": {"openai": "sk-test-123456"},
            "pacing": {"ttft_ms": 5},
            "scenarios": [{"responses": [{"text": "a"}]}],
        }
    )
    session.configure(config)
    assert plan.configured and plan.configuration == config
    assert plan.serves_model("m1") and not plan.serves_model("m2") and plan.model_ids(("d1",)) == ["m1"]
    assert plan.credential_for("openai") == "sk-test-123456"
    echo = Admission(session.generation, 0, None, None, None, 1)
    assert plan.pacing_for(echo) == Pacing(ttft_ms=5)


def test_journal_times_attempts_on_the_session_clock_and_knows_a_fixed_wire_clock() -> None:
    clock = _Clock()
    session = _session(clock)
    record = session.journal.start("req_1", "openai", "POST", "/openai/v1/chat/completions")
    assert (record.started_epoch, record.wire_sequence, record.wire_clock_mode) == (clock.epoch, 1, "live")
    assert session.plan.wire_identity(record).clock_mode == "live"
    clock.epoch += 2
    clock.mono += 2
    session.journal.finish(record)
    (entry,) = session.journal.snapshot().entries
    assert entry.completed_monotonic_seconds == 102.0
    session.configure(
        parse_session_config({"determinism": {"seed": "s", "fixed_utc": "2026-01-01T00:00:00Z"}})
    )
    record = session.journal.start("req_2", "openai", "POST", "/openai/v1/chat/completions")
    assert record.wire_clock_mode == "fixed" and record.wire_sequence == 1  # ordinals restart on configure
    assert session.plan.wire_identity(record).clock_mode == "fixed"


# --- the façade ------------------------------------------------------------------------------------


def test_every_part_but_the_journal_shares_the_one_session_lock() -> None:
    session = _session()
    parts = (session.store, session.rates, session.recorder, session.queues, session.conversations)
    assert all(part._lock is session._lock for part in parts)
    # A part's public step waits for the session's own multi-part steps (configure, reset, admit).
    with session._lock:
        worker = threading.Thread(target=session.store.put, args=("openai", "k", 1, 1))
        worker.start()
        worker.join(0.2)
        assert worker.is_alive()  # blocked on the session lock
    worker.join(10)
    assert session.store.get("openai", "k") == 1


def test_reset_and_retire_clear_every_part_and_its_memory() -> None:
    registry = SessionRegistry(clock=FixedClock(), ids=CountingIds(), max_memory_bytes=1 << 24)
    session = registry.create()
    session.configure(parse_session_config({"record": True, "upstreams": {"openai": "http://127.0.0.1:9"}}))
    session.store.put("openai", "k", 1, 500)
    assert session.recorder.keep(_exchange(), (), session.generation)
    assert registry.memory.store_bytes == 500 and registry.memory.recording_bytes > 0
    generation = session.generation
    session.reset()
    assert not session.is_current(generation) and session.store.get("openai", "k") is None
    assert session.recorder.recorded() == ([], 0) and registry.memory.store_bytes == 0
    assert registry.memory.recording_bytes == 0
    session.store.put("openai", "k", 1, 500)
    registry.delete(session.id)
    assert not session.is_current(session.generation) and registry.memory.store_bytes == 0
    assert not session.recorder.active


def test_the_session_facade_stays_narrow() -> None:
    session = Session("s", clock=FixedClock(), ids=CountingIds())
    public = [name for name in dir(session) if not name.startswith("_")]
    # 9 parts (``spend`` the newest), 3 descriptions (id, created_at, annotations), the lifecycle and the
    # request path.
    assert len(public) <= 22, public


def _recording_config() -> SessionConfig:
    # Built in a frame of its own: pydantic may read its caller's locals when it first builds a model,
    # which keeps them alive as long as that frame (here: the helper's, not the test's).
    return SessionConfig.model_validate(
        {
            "record": True,
            "upstreams": {"openai": "http://127.0.0.1:9"},
            "scenarios": [{"responses": [{"text": "x"}]}],
        }
    )


def test_a_deleted_session_is_freed_without_the_cycle_collector() -> None:
    """No part holds its session strongly: a retired session (its plan, caches, queues) goes as soon as
    the registry lets go, not at some later full collection the memory budget never sees."""
    budget = MemoryBudget(None)
    session = Session("s", clock=FixedClock(), ids=CountingIds(), budget=budget)
    session.configure(_recording_config())
    alive = weakref.ref(session)
    gc.disable()
    try:
        session.retire()
        del session
        assert alive() is None
    finally:
        gc.enable()
