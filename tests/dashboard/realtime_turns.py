"""Realtime turns written into a session's journal through the journal's own record methods, in the order
the WebSocket driver calls them (``llmts/server/realtime/``, docs/architecture.md): start, ``parsed``
(operation ``realtime``), ``realtime_turn`` (the connection and the client events), ``admitted``,
``answered``, ``apply_evidence``, ``closed_with``, ``capture_response`` (the events written, one JSON
message each, joined as ``frames_preview`` joins any stream's frames), ``finish``.

The dashboard's realtime views read them back through the public control API like any entry; the tests
that make them through the real server with the official SDK are in test_dashboard_realtime.py too.
"""

from __future__ import annotations

import base64
import itertools
from dataclasses import dataclass, field
from typing import Any

import orjson

from llmts.runtime.journal import Journal, JournalRecord
from llmts.transport.evidence import DeliveryEvidence

__all__ = [
    "GEMINI_PATH",
    "OPENAI_PATH",
    "PCM",
    "PCM_B64",
    "TurnSpec",
    "gemini_turns",
    "openai_turns",
    "record",
]

OPENAI_PATH = "/openai/v1/realtime"
GEMINI_PATH = "/gemini/ws/google.ai.generativelanguage.v1.GenerativeService.BidiGenerateContent"
# Half a second of PCM16 at 24 kHz, not all zeros: its base64 must never show on the page.
PCM = bytes(range(256)) * 93 + bytes(192)
PCM_B64 = base64.b64encode(PCM).decode()
_IDS = itertools.count(1)


@dataclass
class TurnSpec:
    client_events: list[dict[str, Any]]
    events: list[dict[str, Any]]
    outcome: str = "completed"  # the transport outcome
    terminal: bool = True
    close: tuple[int, str] | None = None
    error_code: str | None = None
    model: str = "gpt-realtime"
    extra: dict[str, Any] = field(default_factory=dict)


def record(
    journal: Journal, connection: str, provider: str, path: str, turn: TurnSpec, *, finish: bool = True
) -> JournalRecord:
    """One answered turn in ``journal`` (left in progress unless ``finish``)."""
    entry = journal.start(f"req_rt{next(_IDS):06d}", provider, "GET", path)
    entry.parsed("realtime", turn.model, True, None)
    events_json = [orjson.dumps(event) for event in turn.client_events]
    entry.realtime_turn(connection, turn.client_events, events_json, journal.preview_bytes)
    if not finish:
        return entry
    complete(journal, entry, turn)
    return entry


def complete(journal: Journal, entry: JournalRecord, turn: TurnSpec) -> None:
    entry.admitted("voice")
    entry.answered(200)
    if turn.error_code is not None:
        entry.failed(turn.error_code)
        entry.success = False
    evidence = DeliveryEvidence()
    evidence.transport_outcome = turn.outcome
    evidence.terminal_marker_observed = turn.terminal
    evidence.emitted_content_frames = sum(1 for e in turn.events if "delta" in str(e.get("type", "")))
    entry.apply_evidence(evidence)
    code, reason = turn.close if turn.close else (None, None)
    entry.closed_with(code, reason, len(turn.events))
    entry.capture_response(b"", [orjson.dumps(event) for event in turn.events], journal.preview_bytes)
    journal.finish(entry)


def _delta(kind: str, response: str, item: str, delta: str) -> dict[str, Any]:
    return {
        "type": kind,
        "event_id": f"event_{next(_IDS)}",
        "response_id": response,
        "item_id": item,
        "output_index": 0,
        "content_index": 0,
        "delta": delta,
    }


def _done(response: str, status: str = "completed") -> dict[str, Any]:
    usage = {"total_tokens": 12, "input_tokens": 9, "output_tokens": 3}
    return {
        "type": "response.done",
        "event_id": f"event_{next(_IDS)}",
        "response": {"id": response, "object": "realtime.response", "status": status, "usage": usage},
    }


def openai_turns(user_text: str) -> list[TurnSpec]:
    """A connection of four turns: a tool call, the answer after its output, a spoken answer, a close."""
    call = {
        "type": "function_call",
        "id": "item_c",
        "call_id": "call_1",
        "name": "get_weather",
        "arguments": "",
    }
    asked = TurnSpec(
        client_events=[
            {"type": "session.update", "output_modalities": ["text"]},
            {"type": "conversation.item.create", "item_id": "item_u", "role": "user", "text": user_text},
            {"type": "response.create"},
        ],
        events=[
            {
                "type": "response.created",
                "event_id": "event_a",
                "response": {"id": "resp_1", "status": "in_progress"},
            },
            {
                "type": "response.output_item.added",
                "event_id": "event_b",
                "response_id": "resp_1",
                "output_index": 0,
                "item": call,
            },
            {
                "type": "response.function_call_arguments.delta",
                "event_id": "event_c",
                "response_id": "resp_1",
                "item_id": "item_c",
                "output_index": 0,
                "call_id": "call_1",
                "delta": '{"city":',
            },
            {
                "type": "response.function_call_arguments.delta",
                "event_id": "event_d",
                "response_id": "resp_1",
                "item_id": "item_c",
                "output_index": 0,
                "call_id": "call_1",
                "delta": '"Paris"}',
            },
            {
                "type": "response.function_call_arguments.done",
                "event_id": "event_e",
                "response_id": "resp_1",
                "item_id": "item_c",
                "output_index": 0,
                "call_id": "call_1",
                "name": "get_weather",
                "arguments": '{"city":"Paris"}',
            },
            _done("resp_1"),
        ],
    )
    answered = TurnSpec(
        client_events=[
            {
                "type": "conversation.item.create",
                "item_type": "function_call_output",
                "call_id": "call_1",
                "output": '{"sky": "clear"}',
            },
            {"type": "response.create"},
        ],
        events=[
            {
                "type": "response.created",
                "event_id": "event_f",
                "response": {"id": "resp_2", "status": "in_progress"},
            },
            _delta("response.output_text.delta", "resp_2", "item_t", "Sunny "),
            _delta("response.output_text.delta", "resp_2", "item_t", "in "),
            _delta("response.output_text.delta", "resp_2", "item_t", "Paris."),
            {
                "type": "response.output_text.done",
                "event_id": "event_g",
                "response_id": "resp_2",
                "item_id": "item_t",
                "output_index": 0,
                "content_index": 0,
                "text": "Sunny in Paris.",
            },
            _done("resp_2"),
        ],
    )
    half = len(PCM_B64) // 2 // 4 * 4
    spoken = TurnSpec(
        client_events=[
            {"type": "session.update", "output_modalities": ["audio"]},
            {"type": "input_audio_buffer.append", "audio_bytes": 4800},
            {"type": "input_audio_buffer.commit"},
            {"type": "response.create"},
        ],
        events=[
            _delta("response.output_audio.delta", "resp_3", "item_a", PCM_B64[:half]),
            _delta("response.output_audio_transcript.delta", "resp_3", "item_a", "Bye "),
            _delta("response.output_audio.delta", "resp_3", "item_a", PCM_B64[half:]),
            _delta("response.output_audio_transcript.delta", "resp_3", "item_a", "now."),
            _done("resp_3"),
        ],
    )
    closed = TurnSpec(
        client_events=[{"type": "response.create"}],
        events=[_delta("response.output_text.delta", "resp_4", "item_x", "Never ")],
        outcome="early_end",
        terminal=False,
        close=(4000, "scripted close"),
    )
    return [asked, answered, spoken, closed]


def gemini_turns() -> list[TurnSpec]:
    """A Gemini Live connection: a tool call, a spoken answer interrupted, a connection dropped."""
    model = "gemini-live-2.5-flash-preview"
    called = TurnSpec(
        model=model,
        client_events=[
            {"type": "client_content", "role": "user", "text": "Rain in Paris?", "turn_complete": True}
        ],
        events=[
            {
                "toolCall": {
                    "functionCalls": [{"id": "fc_1", "name": "get_weather", "args": {"city": "Paris"}}]
                }
            }
        ],
    )
    audio = {"inlineData": {"mimeType": "audio/pcm;rate=24000", "data": PCM_B64}}
    interrupted = TurnSpec(
        model=model,
        client_events=[{"type": "tool_response", "call_id": "fc_1", "output": {"rain": True}}],
        events=[
            {"serverContent": {"modelTurn": {"role": "model", "parts": [{"text": "Rain "}]}}},
            {"serverContent": {"modelTurn": {"role": "model", "parts": [{"text": "in Paris."}, audio]}}},
            {"serverContent": {"outputTranscription": {"text": "Rain in Paris."}}},
        ],
        outcome="early_end",
        terminal=False,
        error_code="cancelled_turn_detected",
    )
    dropped = TurnSpec(
        model=model,
        client_events=[{"type": "realtime_input", "text": "And tomorrow?"}],
        events=[{"serverContent": {"modelTurn": {"parts": [{"text": "Tomo"}]}}}],
        outcome="aborted",
        terminal=False,
    )
    return [called, interrupted, dropped]
