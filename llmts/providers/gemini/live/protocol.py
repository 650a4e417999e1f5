"""``GeminiLiveProtocol``: one Gemini Live connection, sans-IO (``llmts/providers/realtime.py``;
docs/design/gemini-live.md).

* Nothing is sent on open. The first message must be ``setup``: the answer is ``setupComplete``.
* ``clientContent``: its turns join the conversation; ``turnComplete: true`` makes a model turn.
* ``realtimeInput``: ``text`` is a user turn; audio makes one by the rule of ``speech.py`` (an
  ``inputTranscription`` first when the setup asked for it); video is counted.
* ``toolResponse``: tool messages; the one that answers the last of the model's ``toolCall`` makes the
  next turn (the model goes on; google-genai's ``receive()`` is still reading).
* ``contextUpdate``: replaces the system instruction and the tools for the next turns.

Interruptions: a ``clientContent`` (the service's rule: it interrupts any generation), realtime ``text``,
and the start of speech (``activityStart`` under manual detection) cancel the turn being answered with
reason ``turn_detected`` (not the realtime inputs when ``activityHandling`` is ``NO_INTERRUPTION``); the
driver ignores the cancel when no turn is in flight. ``interrupted()`` answers
``{"serverContent": {"interrupted": true}}`` and keeps in the conversation only the answer text the client
received. Speech that starts, or a user turn made, while a ``toolCall`` waits for its response sends
``toolCallCancellation`` with the waiting ids: a late response to them makes no turn.

Refusals close the connection: an invalid message 1007 (1009 for too much audio), an error the session
scripts or raises by ``closes.py``. After a close every further message is ignored.
"""

from __future__ import annotations

import dataclasses

from llmts.errors import LlmtsError
from llmts.providers.gemini.live.client_messages import parse_message
from llmts.providers.gemini.live.client_types import (
    ActivitySignal,
    AudioChunk,
    LiveClientContent,
    LiveContextUpdate,
    LiveInvalid,
    LiveMessage,
    LiveRealtimeInput,
    LiveSetup,
    LiveToolResponse,
    MediaChunk,
    TextInput,
    invalid_argument,
)
from llmts.providers.gemini.live.closes import close_reason, error_close
from llmts.providers.gemini.live.conversation import Conversation
from llmts.providers.gemini.live.render import (
    INTERRUPTED,
    input_transcription,
    render_answer,
    setup_complete,
    tool_call_cancellation,
)
from llmts.providers.gemini.live.render import go_away as render_go_away
from llmts.providers.gemini.live.speech import SpeechInput, Utterance
from llmts.providers.gemini.live.summaries import (
    ClientEvents,
    content_event,
    context_update_event,
    setup_event,
    shorten,
    tool_response_event,
)
from llmts.providers.realtime import Reaction, RealtimeOpening, ServerEvent, Turn
from llmts.runtime.resident_size import text_size
from llmts.schema.faults import FrameKind
from llmts.schema.neutral import (
    Completion,
    NeutralMessage,
    NeutralRequest,
    ToolChoice,
    build,
    neutral_message,
)
from llmts.schema.operations import REALTIME

__all__ = ["GeminiLiveProtocol"]

_TURN_DETECTED = "turn_detected"
_AUTO = ToolChoice()
# Turns made and not yet settled that an interruption may rewrite (the driver settles each in turn).
_MAX_UNANSWERED = 8


class GeminiLiveProtocol:
    """The state of one connection: the setup, the conversation, the input audio, the turns in flight."""

    def __init__(self, opening: RealtimeOpening) -> None:
        self._new_id = opening.new_id
        # The session's scripted input transcripts (``realtime.input_transcripts``), else the audio described.
        self._heard = opening.heard
        self._version = opening.request.args.get("version", "v1beta")
        self._setup: LiveSetup | None = None
        self._conversation = Conversation(self._new_id, sliding=False)
        self._speech = SpeechInput(automatic=True, silence_ms=None)
        self._events = ClientEvents()
        self._issued = 0  # turns made so far (a cancel needs one that may be in flight)
        # Turns made and not yet answered or failed: an interruption rewrites their conversation.
        self._unanswered: list[Turn] = []
        self._closed = False

    # --- the seam -----------------------------------------------------------------------------------

    def retained_bytes(self) -> int:
        """What the connection keeps between messages beyond its fixed cost: the conversation and the
        setup's system instruction and tools."""
        setup = self._setup
        kept = self._conversation.resident_bytes
        return kept if setup is None else kept + text_size(setup.system) + text_size(setup.tools_json)

    def opening(self) -> list[bytes]:
        return []

    def receive(self, message: bytes) -> Reaction:
        if self._closed:
            return Reaction()
        try:
            return self._dispatch(parse_message(message))
        except LiveInvalid as refused:
            self._closed = True
            return Reaction(close=(refused.code, close_reason(refused.reason)))

    def answer(self, turn: Turn, completion: Completion) -> list[ServerEvent]:
        setup = self._setup
        rendered = render_answer(
            completion,
            audio=turn.audio,
            output_transcription=setup is not None and setup.output_transcription,
        )
        self._conversation.add_answer(rendered.message)
        turn.context["message"] = rendered.message
        turn.context["pieces"] = rendered.pieces
        self._settled(turn)
        return rendered.events

    def finished(self, turn: Turn) -> None:
        """Nothing to do: ``answer`` already settled the turn (the next one may come any time)."""
        del turn

    def failed(self, turn: Turn | None, error: LlmtsError) -> Reaction:
        if turn is not None:
            self._settled(turn)
        self._closed = True
        model = self._setup.model if self._setup is not None else ""
        return Reaction(close=error_close(error, model, self._version))

    def interrupted(self, turn: Turn, delivered: list[ServerEvent], reason: str) -> list[bytes]:
        self._settled(turn)
        if any(event.kind is FrameKind.TERMINAL for event in delivered):
            return []  # the turn had ended: nothing to interrupt
        old: NeutralMessage | None = turn.context.get("message")
        if old is not None:
            received = sum(1 for event in delivered if event.kind is FrameKind.CONTENT)
            text = "".join(turn.context["pieces"][:received])
            new = neutral_message("assistant", text) if text else None
            self._conversation.replace(old, new)
            # A turn made by the message that interrupted (not admitted yet) sees the cut answer too.
            for pending in self._unanswered:
                if any(message is old for message in pending.neutral.messages):
                    kept: list[NeutralMessage] = []
                    for message in pending.neutral.messages:
                        if message is not old:
                            kept.append(message)
                        elif new is not None:
                            kept.append(new)
                    pending.neutral = pending.neutral.model_copy(update={"messages": tuple(kept)})
        return [INTERRUPTED]

    # --- beyond the seam ----------------------------------------------------------------------------

    def go_away(self, time_left_seconds: float) -> bytes:
        """``goAway``: the server will close the connection in ``time_left_seconds``."""
        return render_go_away(time_left_seconds)

    # --- client messages ----------------------------------------------------------------------------

    def _dispatch(self, message: LiveMessage) -> Reaction:
        if isinstance(message, LiveSetup):
            if self._setup is not None:
                raise invalid_argument("setup may be sent only once, as the first message.")
            return self._on_setup(message)
        if self._setup is None:
            raise invalid_argument("The first message must be setup.")
        if isinstance(message, LiveClientContent):
            return self._on_content(message)
        if isinstance(message, LiveRealtimeInput):
            return self._on_realtime(message, self._setup)
        if isinstance(message, LiveToolResponse):
            self._events.add(tool_response_event(message))
            return Reaction(turn=self._turn() if self._conversation.add_results(message.results) else None)
        return self._on_context_update(message, self._setup)

    def _on_setup(self, setup: LiveSetup) -> Reaction:
        self._setup = setup
        self._conversation = Conversation(self._new_id, sliding=setup.sliding_window)
        self._speech = SpeechInput(setup.automatic_activity, setup.silence_ms)
        self._events.add(setup_event(setup))
        return Reaction(events=[setup_complete(self._new_id("session"))])

    def _on_content(self, message: LiveClientContent) -> Reaction:
        self._events.add(content_event(message))
        self._conversation.add_content(message.turns)
        reaction = Reaction(cancel=_TURN_DETECTED if self._issued else None)
        if message.turn_complete:
            self._user_turn(reaction)
        return reaction

    def _on_context_update(self, message: LiveContextUpdate, setup: LiveSetup) -> Reaction:
        self._events.add(context_update_event(message))
        tools_json, tool_names = setup.tools_json, setup.tool_names
        if message.tool_names is not None:
            tools_json, tool_names = message.tools_json or "", message.tool_names
        system = setup.system if message.system is None else message.system
        self._setup = dataclasses.replace(setup, system=system, tools_json=tools_json, tool_names=tool_names)
        return Reaction()

    def _on_realtime(self, message: LiveRealtimeInput, setup: LiveSetup) -> Reaction:
        reaction = Reaction()
        user_turn = False
        for item in message.items:
            heard: Utterance | None = None
            if isinstance(item, AudioChunk):
                self._events.media("audio", len(item.data), item.mime_type)
                started, heard = self._speech.audio(item)
                if started:
                    self._barge_in(reaction, setup)
            elif isinstance(item, MediaChunk):
                self._events.media("video", len(item.data), item.mime_type)
            elif isinstance(item, TextInput):
                self._events.add({"type": "realtimeInput.text", "text": shorten(item.text)})
                self._barge_in(reaction, setup)
                self._conversation.add_user_text(item.text)
                user_turn = True
            else:
                heard = self._signal(item, reaction, setup)
            if heard is not None:
                text = self._heard(heard.text())
                if setup.input_transcription:
                    reaction.events.append(input_transcription(text))
                self._conversation.add_user_text(text)
                user_turn = True
        if user_turn:
            self._user_turn(reaction)
        return reaction

    def _signal(self, item: ActivitySignal, reaction: Reaction, setup: LiveSetup) -> Utterance | None:
        self._events.add({"type": f"realtimeInput.{item.kind}"})
        if item.kind == "audioStreamEnd":
            return self._speech.stream_end()
        if setup.automatic_activity:
            raise invalid_argument(f"{item.kind} needs automaticActivityDetection.disabled in the setup.")
        if item.kind == "activityStart":
            if self._speech.activity_start():
                self._barge_in(reaction, setup)
            return None
        return self._speech.activity_end()

    def _barge_in(self, reaction: Reaction, setup: LiveSetup) -> None:
        """The user starts speaking (or typing): the answer in flight stops, awaited calls are cancelled."""
        if setup.interrupts:
            if self._issued:
                reaction.cancel = _TURN_DETECTED
            self._cancel_calls(reaction)

    def _cancel_calls(self, reaction: Reaction) -> None:
        """The calls of the model's last ``toolCall`` that wait for a response will make no turn."""
        waiting = self._conversation.abandon_calls()
        if waiting:
            reaction.events.append(tool_call_cancellation(waiting))

    def _user_turn(self, reaction: Reaction) -> None:
        self._cancel_calls(reaction)
        reaction.turn = self._turn()

    # --- turns --------------------------------------------------------------------------------------

    def _turn(self) -> Turn:
        setup = self._setup
        assert setup is not None  # turns follow the setup (_dispatch)
        preamble = setup.system
        if setup.tools_json:
            preamble = f"{preamble}\n{setup.tools_json}" if preamble else setup.tools_json
        neutral = build(
            NeutralRequest,
            provider="gemini",
            operation=REALTIME,
            model=setup.model,
            messages=tuple(self._conversation.messages),
            tool_names=setup.tool_names,
            tool_choice=_AUTO,
            response_format="text",
            stream=True,
            stream_include_usage=True,
            preamble=preamble,
            system=setup.system,
            cache_mode="implicit",
            cache_breakpoints=(),
            choices=1,
            reasoning_settings=setup.reasoning,
            exact_tokens=None,
        )
        turn = Turn(neutral, self._events.take(), self._new_id("turn"), audio=setup.audio)
        self._issued += 1
        self._unanswered.append(turn)
        del self._unanswered[:-_MAX_UNANSWERED]
        return turn

    def _settled(self, turn: Turn) -> None:
        self._unanswered = [pending for pending in self._unanswered if pending is not turn]
