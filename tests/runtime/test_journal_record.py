"""The journal record changes through its own methods, one per stage of a request (in memory)."""

from __future__ import annotations

import sys
from dataclasses import dataclass

import orjson
import pytest

from llmts.runtime.journal import Journal, JournalRecord
from llmts.runtime.resident_size import json_size
from llmts.schema.faults import StreamDelivery
from llmts.schema.neutral import Completion, NeutralMessage, NeutralToolCall, ScriptedOutput, Usage, build
from tests.helpers import parsed_size


def _record() -> JournalRecord:
    return JournalRecord("req_1", 1, "openai", 1_700_000_000.0, 5.0, "POST", "/openai/v1/chat/completions")


@dataclass
class _Evidence:
    stream_delivery: StreamDelivery | None = None
    stream_delivery_applied: bool = False
    emitted_content_frames: int = 3
    terminal_marker_observed: bool = True
    transport_outcome: str | None = "completed"
    first_frame_at: float | None = None
    last_frame_at: float | None = None
    pacing_planned_ms: float | None = None
    emitted_bytes: int = 0


def _completion(index: int | None = 2) -> Completion:
    output = ScriptedOutput(kind="text", text="hi", chunks=("hi",), output_tokens=1)
    usage = build(
        Usage, input_tokens=7, output_tokens=1, cached_tokens=2, cache_write_tokens=3, reasoning_tokens=0
    )
    return build(
        Completion,
        output=output,
        usage=usage,
        response_id="r",
        created_at=1_700_000_001,
        scenario_id="s",
        response_index=index,
        stream_delivery=None,
    )


def test_stages_fill_the_public_entry() -> None:
    record = _record()
    record.identify("group-1", "conv-1")
    record.parsed("chat", "gpt-4.1-mini", True)
    record.admitted("greet")
    record.apply_completion(_completion(), replayed=True)
    record.answered(200)
    record.apply_evidence(_Evidence())
    record.finish(1_700_000_002.0, 6.5)
    entry = record.to_entry()
    assert (entry.retry_group, entry.conversation, entry.operation, entry.model, entry.streaming) == (
        "group-1",
        "conv-1",
        "chat",
        "gpt-4.1-mini",
        True,
    )
    assert (entry.scenario, entry.response_index, entry.wire_created_at, entry.replayed) == (
        "greet",
        2,
        1_700_000_001,
        True,
    )
    assert entry.usage == {"input_tokens": 7, "output_tokens": 1, "cached_tokens": 2, "cache_write_tokens": 3}
    assert (entry.status, entry.success, entry.completed, entry.transport_outcome) == (
        200,
        True,
        True,
        "completed",
    )
    assert (entry.emitted_content_frames, entry.terminal_marker_observed) == (3, True)
    assert entry.completed_monotonic_seconds == 6.5 and entry.completed_at is not None


def test_identify_without_a_conversation_header_keeps_none() -> None:
    record = _record()
    record.identify(None, None)
    assert (record.retry_group, record.conversation) == (None, None)


def test_owned_by_tags_graph_conversation_turn_and_step() -> None:
    record = _record()
    record.owned_by("graph", "c", 2, "approve")
    assert (record.scenario, record.conversation, record.turn, record.step) == ("graph", "c", 2, "approve")


def test_status_and_failure() -> None:
    record = _record()
    record.answered(429)
    record.failed("rate_limit_exceeded", 2.0)
    assert (record.status, record.success, record.error_code, record.retry_after_seconds) == (
        429,
        False,
        "rate_limit_exceeded",
        2.0,
    )
    other = _record()
    other.failed("llm_test_server_internal_error")
    assert other.retry_after_seconds is None


def test_evidence_of_a_cut_or_damaged_answer_fails_the_attempt() -> None:
    plan = StreamDelivery(mode="early_clean_end", after_content_frames=1)
    cut = _record()
    cut.answered(200)
    cut.apply_evidence(_Evidence(plan, True, 1, False, "early_end"))
    assert (cut.success, cut.stream_delivery, cut.stream_delivery_applied, cut.transport_outcome) == (
        False,
        plan,
        True,
        "early_end",
    )
    damaged = _record()
    damaged.answered(200)
    damaged.apply_evidence(_Evidence(), damaged=True)
    assert damaged.success is False
    harmless = _record()
    harmless.answered(200)
    harmless.apply_evidence(_Evidence())
    assert harmless.success is True
    error = _record()
    error.answered(500)
    error.apply_evidence(_Evidence())
    assert error.success is False


def test_fault_outcome_and_client_gone() -> None:
    page = _record()
    page.answered(200)
    page.fault_outcome(502)
    assert (page.status, page.success) == (502, False)
    reset = _record()
    reset.answered(200)
    reset.fault_outcome(None)
    assert (reset.status, reset.success) == (None, False)
    gone = _record()
    gone.client_gone()
    assert (gone.status, gone.success, gone.transport_outcome) == (499, False, "client_gone")


def test_in_progress_record_has_no_outcome_yet() -> None:
    record = _record()
    record.answered(200)
    assert record.to_entry().success is None


def test_previews_are_exact_size_copies() -> None:
    # orjson over-allocates its output; a preview must not keep the producer's buffer alive.
    body = orjson.dumps({"text": "x" * 700})
    record = _record()
    record.capture_response(body, None, 1024)
    assert record.response_preview == body and record.response_preview is not body
    assert sys.getsizeof(record.response_preview) < 40 + len(body)
    record.capture_request(b"abcdef", 4)
    assert (record.request_preview, record.request_bytes, record.truncated) == (b"abcd", 6, True)
    entry = record.to_entry()
    assert (entry.request_preview, entry.request_truncated, entry.response_truncated) == ("abcd", True, False)


def test_streamed_response_preview_and_tool_captures() -> None:
    record = _record()
    record.capture_response(b"", [b"data: a\n\n", b"data: b\n\n"], 12)
    assert (record.response_preview, record.response_bytes, record.truncated) == (b"data: a\n\ndat", 18, True)
    call = NeutralToolCall(id="call_1", name="get_weather", arguments='{"city": "Paris"}')
    record.capture_output_calls([call], 5)
    history = [
        NeutralMessage(role="assistant", text="", tool_calls=(call,)),
        NeutralMessage(role="tool", text="sunny", tool_call_id="call_1"),
    ]
    record.capture_history(history, 100)
    entry = record.to_entry()
    assert [(c.id, c.arguments, c.truncated) for c in entry.response_tool_calls] == [
        ("call_1", '{"cit', True)
    ]
    assert [(r.call_id, r.name, r.content) for r in entry.tool_results] == [
        ("call_1", "get_weather", "sunny")
    ]


def test_journal_accounts_the_settled_record_and_its_eviction() -> None:
    journal = Journal()
    record = journal.begin("req_1", "openai", "POST", "/p", 0.0, 0.0)
    begun = journal.snapshot().retained_bytes
    assert begun == record.accounted > 0
    record.capture_response(b"x" * 1000, None, journal.preview_bytes)
    record.finish(1.0, 1.0)
    journal.settle(record)
    assert journal.snapshot().retained_bytes == record.accounted >= begun + 1000
    journal.clear()
    assert record.accounted == 0
    journal.settle(record)  # a record cleared while in flight is not accounted again
    assert journal.snapshot().retained_bytes == 0


def test_parsed_keeps_reasoning_settings_and_accounts_them() -> None:
    record = _record()
    record.parsed("chat", "gpt-4.1-mini", False)
    bare = record.retained_bytes()
    assert record.to_entry().reasoning_settings is None
    record.parsed("chat", "gpt-4.1-mini", False, {"effort": "high"})
    assert record.to_entry().reasoning_settings == {"effort": "high"}
    assert record.retained_bytes() > bare


def test_a_begun_records_initial_size_is_its_full_accounting() -> None:
    # begin() accounts with the shortcut; it must equal the full walk for a record with nothing captured.
    record = _record()
    assert record.initial_bytes() == record.retained_bytes()


def test_the_entry_shows_the_cost_rounded_while_the_record_keeps_it_exact() -> None:
    """The request path prices without rounding (runtime/pricing.py); the entry rounds to 10 decimals, so
    a sum of per-token prices reads as the amount it is."""
    record = _record()
    exact = 0.1 * 3 / 1e4  # 3.0000000000000004e-05 in binary floating point
    record.priced(exact)
    assert record.cost_usd == exact != 3e-05
    assert record.to_entry().cost_usd == 3e-05
    unpriced = _record()
    unpriced.priced(None)
    assert unpriced.to_entry().cost_usd is None


def _keep_peer_json(record: JournalRecord, how: str, value: dict[str, object], raw: bytes) -> None:
    if how == "arguments":
        record.peer_call(mcp_server="m", tool_name="t", arguments=value, arguments_json=raw, limit=1 << 20)
    elif how == "client answer":
        record.client_answered(value, raw, 1 << 20)
    else:
        record.realtime_turn("rtc_1", [value], [raw], 1 << 20)


@pytest.mark.parametrize("how", ["arguments", "client answer", "client event"])
@pytest.mark.parametrize(
    "value",
    [{"rows": [[n, True, None, {"k": n}] for n in range(2000)]}, {"text": "x" * 60_000}],
    ids=["many-small-values", "one-long-string"],
)
def test_peer_json_is_charged_as_parsed(how: str, value: dict[str, object]) -> None:
    """Tool-call arguments, client answers and realtime client events are kept parsed: each is charged
    the estimate of its parsed size (``json_size``), within twice what it holds. A flat multiple of the
    JSON's length charged a third of it for many small values and three times it for one long string."""
    raw = orjson.dumps(value)
    held, parsed = parsed_size(raw)
    assert isinstance(parsed, dict)
    record = _record()
    bare = record.retained_bytes()
    _keep_peer_json(record, how, parsed, raw)
    charged = record.retained_bytes() - bare
    assert held <= charged <= 2 * held, (held, charged, len(raw))


def test_peer_json_over_the_preview_limit_is_dropped_and_charges_nothing() -> None:
    raw = orjson.dumps({"text": "y" * 5000})
    named = _record()  # the same names, no JSON kept
    named.peer_call(mcp_server="m", tool_name="t", limit=4096)
    named.realtime_turn("rtc_1", [], [], 4096)
    record = _record()
    record.peer_call(
        mcp_server="m", tool_name="t", arguments=orjson.loads(raw), arguments_json=raw, limit=4096
    )
    record.client_answered({"a": 1}, raw, 4096)
    events = [{"type": "input_audio_buffer.commit"}, orjson.loads(raw)]
    record.realtime_turn("rtc_1", events, [orjson.dumps(event) for event in events], 4096)
    entry = record.to_entry()
    assert entry.arguments is None and entry.client_answers == [] and entry.truncated
    assert entry.client_events == [{"type": "input_audio_buffer.commit"}]  # the first still fits
    kept = orjson.dumps(events[0])
    assert record.peer_bytes == len(kept)
    assert record.retained_bytes() - named.retained_bytes() == record.peer_resident_bytes == json_size(kept)
