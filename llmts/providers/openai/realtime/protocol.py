"""The OpenAI Realtime protocol (GA event names) of one WebSocket connection, sans-IO
(``llmts/providers/realtime.py`` describes the seam; docs/realtime.md the behaviour).

Every client message gets an answer in the service's words and never an exception: an event the service
would refuse gets one ``error`` event (``invalid_request_error``, its ``code`` and ``param``, the client's
``event_id``) and changes nothing. One response is active at a time: from ``response.create`` (or the end
of a speech segment) until the driver reports its end (``finished``), its failure or its cancellation.

Server VAD (``turn_detection`` ``server_vad`` or ``semantic_vad``, the default) is deterministic: the
first appended chunk with any sound starts a speech segment (``input_audio_buffer.speech_started``, and
with ``interrupt_response`` the active response is cancelled, reason ``turn_detected``); once the silent
chunks appended since the last sound add up to the session's ``silence_duration_ms`` (semantic VAD: 500
ms) the segment stops: ``speech_stopped``, ``committed``, the user's audio item and, with
``create_response``, a response. A chunk is silent when every sample is the format's zero level.
``input_audio_buffer.commit`` commits by hand (ending a segment) and never starts a response.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from llmts.errors import LlmtsError
from llmts.providers.openai.realtime.audio import bytes_per_ms, input_transcript, is_silence
from llmts.providers.openai.realtime.client_events import check, decode, event_id_of
from llmts.providers.openai.realtime.interruption import render_failure, render_interruption
from llmts.providers.openai.realtime.items import (
    Item,
    decode_audio,
    parse_item,
    truncated_item,
    user_audio_item,
)
from llmts.providers.openai.realtime.render import Answer, render_answer
from llmts.providers.openai.realtime.response import ResponseContext
from llmts.providers.openai.realtime.session import SessionSettings
from llmts.providers.openai.realtime.state import ROOT, AudioBuffer, Conversation, VadRule
from llmts.providers.openai.realtime.summaries import EventLog, item_summary, shorten
from llmts.providers.openai.realtime.turns import make_turn, parse_overrides
from llmts.providers.openai.realtime.wire import Emitter, EventError, optional_str, require_int, require_str
from llmts.providers.realtime import Reaction, RealtimeOpening, ServerEvent, Turn
from llmts.runtime.resident_size import value_size
from llmts.schema.neutral import Completion

__all__ = ["MIN_COMMIT_MS", "OpenAIRealtimeProtocol"]

# The shortest buffer ``input_audio_buffer.commit`` accepts (the service's rule).
MIN_COMMIT_MS = 100
_Handler = Callable[["OpenAIRealtimeProtocol", dict[str, Any], "str | None"], Reaction]


class OpenAIRealtimeProtocol:
    """One connection's Realtime session: settings, conversation, input audio buffer, active response."""

    def __init__(
        self, opening: RealtimeOpening, model: str, *, transcribe: Callable[[int], str] = input_transcript
    ) -> None:
        self._provider = opening.provider
        self._new_id = opening.new_id
        self._emit = Emitter(opening.new_id)
        self._transcribe = transcribe
        self.settings = SessionSettings(opening.new_id("sess"), model)
        # The settings' wire dict last sized, and its size (``retained_bytes``).
        self._settings_sized: tuple[object, int] = (None, 0)
        self.conversation = Conversation(opening.new_id("conv"))
        self._buffer = AudioBuffer()
        self._log = EventLog()
        # The response being answered (admitted, rendered or being written), and the item id the speech
        # segment in progress will commit as.
        self.active: Turn | None = None
        self._speech_item: str | None = None

    # --- the seam ------------------------------------------------------------------------------------

    def retained_bytes(self) -> int:
        """What the connection keeps between messages beyond its fixed cost: the conversation and the
        session's settings (instructions, tools), sized again only when an update replaced them (input
        audio is counted, never kept)."""
        wire = self.settings.wire
        if wire is not self._settings_sized[0]:
            self._settings_sized = (wire, value_size(wire))
        return self.conversation.resident_bytes + self._settings_sized[1]

    def opening(self) -> list[bytes]:
        return [self._emit.event("session.created", session=self.settings.wire)]

    def receive(self, message: bytes) -> Reaction:
        raw: dict[str, Any] | None = None
        try:
            raw = decode(message)
            kind = check(raw)
            return _HANDLERS[kind](self, raw, event_id_of(raw))
        except EventError as problem:
            event_id = event_id_of(raw) if raw is not None else None
            kind_seen = raw.get("type") if raw is not None else None
            self._log.add(
                kind_seen if isinstance(kind_seen, str) and len(kind_seen) <= 64 else "invalid",
                event_id,
                error=problem.code,
            )
            return Reaction(events=[self._emit.refusal(problem, event_id)])

    def answer(self, turn: Turn, completion: Completion) -> list[ServerEvent]:
        response: ResponseContext = turn.context["response"]
        previous = self.conversation.last_id() if response.in_conversation else None
        answer = render_answer(self._emit, response, completion, previous)
        if response.in_conversation:
            for output in answer.outputs:
                self.conversation.insert(output.item)
        turn.context["answer"] = answer
        return answer.events

    def failed(self, turn: Turn | None, error: LlmtsError) -> Reaction:
        response = turn.context.get("response") if turn is not None else None
        self.finished(turn)
        return Reaction(events=render_failure(self._emit, response, error))

    def interrupted(self, turn: Turn, delivered: list[ServerEvent], reason: str) -> list[bytes]:
        if self.active is not turn:
            return []  # already finished or failed: nothing is open
        response: ResponseContext = turn.context["response"]
        answer: Answer | None = turn.context.get("answer")
        count = _delivered(answer, delivered) if answer is not None else 0
        cut = render_interruption(self._emit, response, answer, count, reason)
        if response.in_conversation:
            for item in cut.replaced:
                if item.id in self.conversation:
                    self.conversation.replace(item)
            for item_id in cut.removed:
                self.conversation.delete(item_id)
        self.finished(turn)
        return cut.events

    def finished(self, turn: Turn | None) -> None:
        """The driver wrote ``turn``'s last event (or gave it up): another response may start. (Not in the
        seam's ``RealtimeProtocol`` yet: the driver calls it once a turn's events are all written.)"""
        if turn is not None and self.active is turn:
            self.active = None
            turn.context.pop("answer", None)  # its events, audio included, are no longer needed

    # --- session and conversation ----------------------------------------------------------------------

    def _session_update(self, raw: dict[str, Any], event_id: str | None) -> Reaction:
        self.settings.update(raw["session"])
        if self.settings.turn_detection is None:
            self._buffer.in_speech = False
            self._speech_item = None
        session = raw["session"]
        extra = {"instructions": shorten(session["instructions"])} if "instructions" in session else {}
        self._log.add("session.update", event_id, keys=sorted(session), **extra)
        return Reaction(events=[self._emit.event("session.updated", session=self.settings.wire)])

    def _item_create(self, raw: dict[str, Any], event_id: str | None) -> Reaction:
        after = optional_str(raw, "previous_item_id", "", 128)
        if after is not None and after != ROOT and after not in self.conversation:
            raise EventError(
                f"Error adding item: the previous item with id '{after}' does not exist.",
                "item_create_invalid_previous_item_id",
                "previous_item_id",
            )
        item = parse_item(raw["item"], "item", self._new_id, self._transcribe)
        if item.id in self.conversation:
            raise EventError(
                f"Error adding item: an item with id '{item.id}' already exists.",
                "item_id_already_exists",
                "item.id",
            )
        if item.kind == "function_call_output" and not self.conversation.has_call(item.wire["call_id"]):
            raise EventError(
                f"Tool call ID '{item.wire['call_id']}' not found in conversation.",
                "invalid_tool_call_id",
                "item.call_id",
            )
        self._log.add("conversation.item.create", event_id, **item_summary(item))
        return Reaction(events=self._added(item, after)[1])

    def _added(self, item: Item, after: str | None = None) -> tuple[str | None, list[bytes]]:
        """Insert ``item``: the id before it, and its ``added`` and ``done`` events."""
        previous = self.conversation.insert(item, after)
        return previous, [
            self._emit.event("conversation.item.added", previous_item_id=previous, item=item.wire),
            self._emit.event("conversation.item.done", previous_item_id=previous, item=item.wire),
        ]

    def _existing(self, raw: dict[str, Any], verb: str, code: str) -> Item:
        item_id = require_str(raw, "item_id", "")
        item = self.conversation.get(item_id)
        if item is None:
            raise EventError(
                f"Error {verb} item: the item with id '{item_id}' does not exist.", code, "item_id"
            )
        return item

    def _item_retrieve(self, raw: dict[str, Any], event_id: str | None) -> Reaction:
        item = self._existing(raw, "retrieving", "item_retrieve_invalid_item_id")
        self._log.add("conversation.item.retrieve", event_id, item_id=item.id)
        return Reaction(events=[self._emit.event("conversation.item.retrieved", item=item.wire)])

    def _item_delete(self, raw: dict[str, Any], event_id: str | None) -> Reaction:
        item = self._existing(raw, "deleting", "item_delete_invalid_item_id")
        self.conversation.delete(item.id)
        self._log.add("conversation.item.delete", event_id, item_id=item.id)
        return Reaction(events=[self._emit.event("conversation.item.deleted", item_id=item.id)])

    def _item_truncate(self, raw: dict[str, Any], event_id: str | None) -> Reaction:
        index = require_int(raw, "content_index", "")
        end_ms = require_int(raw, "audio_end_ms", "")
        item = self._existing(raw, "truncating", "item_truncate_invalid_item_id")
        self.conversation.replace(truncated_item(item, index, end_ms))
        self._log.add("conversation.item.truncate", event_id, item_id=item.id, audio_end_ms=end_ms)
        truncated = self._emit.event(
            "conversation.item.truncated", item_id=item.id, content_index=index, audio_end_ms=end_ms
        )
        return Reaction(events=[truncated])

    # --- input audio ---------------------------------------------------------------------------------

    def _vad(self) -> VadRule | None:
        if self.settings.turn_detection is None:
            return None
        return VadRule(silence_ms=self.settings.silence_ms(), padding_ms=self.settings.prefix_padding_ms())

    def _append(self, raw: dict[str, Any], event_id: str | None) -> Reaction:
        audio = decode_audio(raw["audio"], "audio")
        if not self._buffer.fits(len(audio)):
            raise EventError(
                "The input audio buffer is full (15 MiB of audio): commit or clear it first.",
                "input_audio_buffer_full",
                "audio",
            )
        self._log.add_audio(len(audio))
        audio_format = self.settings.input_format
        segment = self._buffer.append(
            audio, bytes_per_ms(audio_format), is_silence(audio, audio_format), self._vad()
        )
        detection = self.settings.turn_detection or {}
        if segment.started_ms is not None:
            self._speech_item = self._new_id("item")
            started = self._emit.event(
                "input_audio_buffer.speech_started",
                audio_start_ms=segment.started_ms,
                item_id=self._speech_item,
            )
            active = self.active
            interrupt = (
                active is not None
                and active.context["response"].in_conversation
                and detection.get("interrupt_response", True)
            )
            return Reaction(events=[started], cancel="turn_detected" if interrupt else None)
        if segment.stopped_ms is None:
            return Reaction()
        item_id = self._speech_item or self._new_id("item")
        stopped = self._emit.event(
            "input_audio_buffer.speech_stopped", audio_end_ms=segment.stopped_ms, item_id=item_id
        )
        events = [stopped, *self._commit_buffer(None, by_client=False)]
        if not detection.get("create_response", True) or self.active is not None:
            return Reaction(events=events)
        turn, created = self._turn(None, None, by_client=False)
        return Reaction(events=[*events, created], turn=turn)

    def _commit(self, raw: dict[str, Any], event_id: str | None) -> Reaction:
        size = self._buffer.size
        buffered_ms = size / bytes_per_ms(self.settings.input_format)
        if buffered_ms < MIN_COMMIT_MS:
            raise EventError(
                "Error committing input audio buffer: buffer too small. Expected at least "
                f"{MIN_COMMIT_MS}ms of audio, but buffer only has {buffered_ms:.2f}ms of audio.",
                "input_audio_buffer_commit_empty",
                None,
            )
        events = []
        if self._buffer.in_speech:
            item_id = self._speech_item or self._new_id("item")
            self._speech_item = item_id
            end_ms = int(self._buffer.written_ms)
            events.append(
                self._emit.event("input_audio_buffer.speech_stopped", audio_end_ms=end_ms, item_id=item_id)
            )
        events.extend(self._commit_buffer(event_id, by_client=True))
        return Reaction(events=events)

    def _commit_buffer(self, event_id: str | None, *, by_client: bool) -> list[bytes]:
        """The buffer as the user's audio message: ``committed``, the item's events and, when the session
        transcribes its input, the transcription."""
        size = self._buffer.take()
        item_id = self._speech_item or self._new_id("item")
        self._speech_item = None
        heard = self._transcribe(size)
        item = user_audio_item(item_id, heard)
        if by_client:
            self._log.add("input_audio_buffer.commit", event_id, item_id=item_id, audio_bytes=size)
        else:  # server VAD committed the segment the appends made
            self._log.add("input_audio_buffer.committed", item_id=item_id, audio_bytes=size)
        previous, added = self._added(item)
        events = [
            self._emit.event("input_audio_buffer.committed", previous_item_id=previous, item_id=item_id),
            *added,
        ]
        if self.settings.transcription is not None:
            seconds = round(size / bytes_per_ms(self.settings.input_format) / 1000, 3)
            events.append(
                self._emit.event(
                    "conversation.item.input_audio_transcription.completed",
                    item_id=item_id,
                    content_index=0,
                    transcript=heard,
                    usage={"type": "duration", "seconds": seconds},
                )
            )
            item.wire["content"][0]["transcript"] = heard  # what retrieve shows from now on
            self.conversation.resized(item)
        return events

    def _clear(self, raw: dict[str, Any], event_id: str | None) -> Reaction:
        size = self._buffer.size
        self._buffer.clear()
        self._speech_item = None
        self._log.add("input_audio_buffer.clear", event_id, audio_bytes=size)
        return Reaction(events=[self._emit.event("input_audio_buffer.cleared")])

    def _output_clear(self, raw: dict[str, Any], event_id: str | None) -> Reaction:
        raise EventError(
            "output_audio_buffer.clear is only supported for WebRTC and SIP connections.",
            "invalid_value",
            "type",
        )

    # --- responses -----------------------------------------------------------------------------------

    def _turn(self, raw_response: Any, event_id: str | None, *, by_client: bool) -> tuple[Turn, bytes]:
        """A new active response (``response.create``'s, or server VAD's at the end of speech)."""
        overrides = parse_overrides(raw_response, self.conversation, self._new_id, self._transcribe)
        if by_client:
            extra = {"instructions": shorten(overrides.instructions)} if overrides.instructions else {}
            self._log.add(
                "response.create",
                event_id,
                conversation="auto" if overrides.in_conversation else "none",
                **extra,
            )
        turn = make_turn(
            provider=self._provider,
            settings=self.settings,
            overrides=overrides,
            conversation=self.conversation,
            response_id=self._new_id("resp"),
            client_events=self._log.take(),
            client_event_id=event_id,
        )
        self.active = turn
        response: ResponseContext = turn.context["response"]
        return turn, self._emit.event("response.created", response=response.wire("in_progress"))

    def _response_create(self, raw: dict[str, Any], event_id: str | None) -> Reaction:
        if self.active is not None:
            raise EventError(
                f"Conversation already has an active response in progress: {self.active.response_id}. Wait "
                "until the response is finished before creating a new one.",
                "conversation_already_has_active_response",
                None,
            )
        turn, created = self._turn(raw.get("response"), event_id, by_client=True)
        return Reaction(events=[created], turn=turn)

    def _response_cancel(self, raw: dict[str, Any], event_id: str | None) -> Reaction:
        wanted = optional_str(raw, "response_id", "", 128)
        if self.active is None or (wanted is not None and wanted != self.active.response_id):
            raise EventError(
                "Cancellation failed: no active response found", "response_cancel_not_active", None
            )
        self._log.add("response.cancel", event_id, response_id=self.active.response_id)
        return Reaction(cancel="client_cancelled")


def _delivered(answer: Answer, delivered: list[ServerEvent]) -> int:
    """How many of ``answer``'s events were written (a prefix of them; the driver may have written events
    of its own in between, such as a fault plan's malformed event)."""
    index = {event.data: position for position, event in enumerate(answer.events)}
    count = 0
    for event in delivered:
        position = index.get(event.data)
        if position is not None:
            count = max(count, position + 1)
    return count


_HANDLERS: dict[str, _Handler] = {
    "session.update": OpenAIRealtimeProtocol._session_update,
    "conversation.item.create": OpenAIRealtimeProtocol._item_create,
    "conversation.item.retrieve": OpenAIRealtimeProtocol._item_retrieve,
    "conversation.item.delete": OpenAIRealtimeProtocol._item_delete,
    "conversation.item.truncate": OpenAIRealtimeProtocol._item_truncate,
    "input_audio_buffer.append": OpenAIRealtimeProtocol._append,
    "input_audio_buffer.commit": OpenAIRealtimeProtocol._commit,
    "input_audio_buffer.clear": OpenAIRealtimeProtocol._clear,
    "output_audio_buffer.clear": OpenAIRealtimeProtocol._output_clear,
    "response.create": OpenAIRealtimeProtocol._response_create,
    "response.cancel": OpenAIRealtimeProtocol._response_cancel,
}
