"""An answered turn as the service's events (docs/realtime.md, "Event sequences").

Per output item, in order: ``response.output_item.added``, ``conversation.item.added`` (not for an
out-of-band response), the content part's ``added``, its deltas, its ``done`` events, the part's
``done``, ``response.output_item.done``, ``conversation.item.done``; then ``response.done``. A message
carries text (``response.output_text.*``) or audio with its transcript (``response.output_audio.*``
interleaved with ``response.output_audio_transcript.*``), a function call its arguments
(``response.function_call_arguments.*``). Every delta is a ``CONTENT`` event for fault plans;
``response.done`` is ``TERMINAL``.

Each event is paired with a ``Step`` (what it delivered) so ``interruption.py`` can close what a cancelled
answer had opened when it was cut.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

from llmts.providers.openai.realtime.audio import bytes_per_ms, encode_output
from llmts.providers.openai.realtime.items import Item
from llmts.providers.openai.realtime.limits import REALTIME_LIMITS
from llmts.providers.openai.realtime.response import ResponseContext, usage_fields
from llmts.providers.openai.realtime.wire import Emitter
from llmts.providers.realtime import ServerEvent
from llmts.schema.faults import FrameKind
from llmts.schema.media import transcript_pieces
from llmts.schema.neutral import Completion, NeutralToolCall, ScriptedOutput

__all__ = ["Answer", "Output", "Step", "render_answer"]

# (what the event delivered, its output index, the delta text or audio byte count it carried)
Step = tuple[str, int, Any]
_CONTENT, _OTHER, _TERMINAL = FrameKind.CONTENT, FrameKind.OTHER, FrameKind.TERMINAL
_DELTA_BYTES = REALTIME_LIMITS["audio_delta_bytes"]
# finish_reason -> the response's incomplete status_details reason
_INCOMPLETE = {"length": "max_output_tokens", "content_filter": "content_filter"}


@dataclass(slots=True)
class Output:
    """One output item of an answer: its head (as ``response.output_item.added`` showed it) and its final
    form (as ``response.output_item.done`` shows it, and the conversation keeps it)."""

    index: int
    head: dict[str, Any]
    item: Item
    # The id of the item before it in the conversation (``previous_item_id`` of its conversation events).
    previous: str | None = None

    @property
    def audio(self) -> bool:
        content = self.item.wire.get("content") or []
        return bool(content) and content[0]["type"] == "output_audio"


@dataclass(slots=True)
class Answer:
    """The rendered answer: the events, what each delivered, the output items and the usage."""

    events: list[ServerEvent] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    outputs: list[Output] = field(default_factory=list)
    usage: dict[str, Any] | None = None


class _Writer:
    __slots__ = ("answer", "emit", "response")

    def __init__(self, emit: Emitter, response: ResponseContext) -> None:
        self.emit = emit
        self.response = response
        self.answer = Answer()

    def add(self, step: str, index: int, value: Any, kind: FrameKind, event: str, **fields: Any) -> None:
        self.answer.events.append(ServerEvent(self.emit.event(event, **fields), kind))
        self.answer.steps.append((step, index, value))


def _pieces(output: ScriptedOutput, text: str) -> tuple[str, ...]:
    chunks = tuple(chunk for chunk in output.chunks if chunk)
    if chunks and "".join(chunks) == text:
        return chunks
    return transcript_pieces(text)


def _order(audio: int, text: int) -> list[tuple[bool, int]]:
    """Audio deltas and transcript deltas interleaved by position (transcript ``j`` sits at ``j/text``,
    audio ``k`` at ``k/audio``; the transcript first on a tie): (is audio, index)."""
    order, a, t = [], 0, 0
    while a < audio or t < text:
        if t < text and (a >= audio or t * audio <= a * text):
            order.append((False, t))
            t += 1
        else:
            order.append((True, a))
            a += 1
    return order


def _speech(output: ScriptedOutput, text: str) -> bytes:
    """The answer's PCM16 at 24 kHz: the fixture's scripted bytes, else speech generated for the words."""
    scripted = getattr(output, "audio_pcm", None)
    if isinstance(scripted, bytes) and scripted:
        return scripted
    from llmts.runtime.media.audio import speech_pcm  # first spoken answer only

    return speech_pcm(text)


def _item_added(w: _Writer, index: int, head: dict[str, Any], previous: str | None) -> None:
    """An output item opens: ``response.output_item.added``, and its ``conversation.item.added``."""
    r = w.response
    w.add(
        "item",
        index,
        None,
        _OTHER,
        "response.output_item.added",
        response_id=r.id,
        output_index=index,
        item=head,
    )
    if r.in_conversation:
        w.add(
            "conv_added", index, None, _OTHER, "conversation.item.added", previous_item_id=previous, item=head
        )


def _item_done(w: _Writer, index: int, done: dict[str, Any], previous: str | None) -> None:
    """An output item closes: ``response.output_item.done``, and its ``conversation.item.done``."""
    r = w.response
    w.add(
        "item_done",
        index,
        None,
        _OTHER,
        "response.output_item.done",
        response_id=r.id,
        output_index=index,
        item=done,
    )
    if r.in_conversation:
        w.add(
            "conv_done", index, None, _OTHER, "conversation.item.done", previous_item_id=previous, item=done
        )


def _message(
    w: _Writer, index: int, item_id: str, output: ScriptedOutput, text: str, status: str, previous: str | None
) -> Output:
    r = w.response
    head = {
        "id": item_id,
        "object": "realtime.item",
        "type": "message",
        "status": "in_progress",
        "role": "assistant",
        "content": [],
    }
    _item_added(w, index, head, previous)
    ids = {"response_id": r.id, "item_id": item_id, "output_index": index, "content_index": 0}
    pieces = _pieces(output, text)
    audio_ms = 0
    if not r.audio:
        w.add(
            "part",
            index,
            None,
            _OTHER,
            "response.content_part.added",
            **ids,
            part={"type": "text", "text": ""},
        )
        for piece in pieces:
            w.add("text", index, piece, _CONTENT, "response.output_text.delta", **ids, delta=piece)
        w.add("text_done", index, None, _OTHER, "response.output_text.done", **ids, text=text)
        part: dict[str, Any] = {"type": "text", "text": text}
        content: dict[str, Any] = {"type": "output_text", "text": text}
    else:
        audio = encode_output(_speech(output, text), r.output_format)
        audio_ms = len(audio) // bytes_per_ms(r.output_format)
        deltas = [audio[start : start + _DELTA_BYTES] for start in range(0, len(audio), _DELTA_BYTES)]
        w.add(
            "part",
            index,
            None,
            _OTHER,
            "response.content_part.added",
            **ids,
            part={"type": "audio", "transcript": ""},
        )
        for is_audio, at in _order(len(deltas), len(pieces)):
            if is_audio:
                delta = base64.b64encode(deltas[at]).decode("ascii")
                w.add(
                    "audio",
                    index,
                    len(deltas[at]),
                    _CONTENT,
                    "response.output_audio.delta",
                    **ids,
                    delta=delta,
                )
            else:
                piece = pieces[at]
                w.add(
                    "transcript",
                    index,
                    piece,
                    _CONTENT,
                    "response.output_audio_transcript.delta",
                    **ids,
                    delta=piece,
                )
        w.add("audio_done", index, None, _OTHER, "response.output_audio.done", **ids)
        w.add(
            "transcript_done",
            index,
            None,
            _OTHER,
            "response.output_audio_transcript.done",
            **ids,
            transcript=text,
        )
        part = {"type": "audio", "transcript": text}
        content = {"type": "output_audio", "transcript": text}
    w.add("part_done", index, None, _OTHER, "response.content_part.done", **ids, part=part)
    done = {**head, "status": status, "content": [content]}
    _item_done(w, index, done, previous)
    return Output(
        index, head, Item(id=item_id, wire=done, text=text, chars=len(text), audio_ms=audio_ms), previous
    )


def _call(
    w: _Writer, index: int, item_id: str, call: NeutralToolCall, status: str, previous: str | None
) -> Output:
    r = w.response
    head = {
        "id": item_id,
        "object": "realtime.item",
        "type": "function_call",
        "status": "in_progress",
        "name": call.name,
        "call_id": call.id,
        "arguments": "",
    }
    _item_added(w, index, head, previous)
    ids = {"response_id": r.id, "item_id": item_id, "output_index": index, "call_id": call.id}
    chunks = tuple(chunk for chunk in call.arguments_chunks if chunk)
    if "".join(chunks) != call.arguments:
        chunks = (call.arguments,) if call.arguments else ()
    for piece in chunks:
        w.add("args", index, piece, _CONTENT, "response.function_call_arguments.delta", **ids, delta=piece)
    w.add(
        "args_done",
        index,
        None,
        _OTHER,
        "response.function_call_arguments.done",
        **ids,
        name=call.name,
        arguments=call.arguments,
    )
    done = {**head, "status": status, "arguments": call.arguments}
    _item_done(w, index, done, previous)
    chars = len(call.name) + len(call.arguments)
    return Output(index, head, Item(id=item_id, wire=done, text="", chars=chars), previous)


def render_answer(
    emit: Emitter, response: ResponseContext, completion: Completion, previous: str | None
) -> Answer:
    """The events of ``completion`` answering ``response``; ``previous`` is the id of the conversation's
    last item (where the answer's items go)."""
    output = completion.output
    w = _Writer(emit, response)
    incomplete = _INCOMPLETE.get(output.finish_reason)
    status = "incomplete" if incomplete else "completed"
    text = output.text or output.refusal or ""
    outputs = w.answer.outputs
    if output.kind != "tool_calls" or text:
        outputs.append(_message(w, 0, emit.new_id("item"), output, text, status, previous))
        previous = outputs[-1].item.id
    for call in output.tool_calls:
        outputs.append(_call(w, len(outputs), emit.new_id("item"), call, status, previous))
        previous = outputs[-1].item.id
    usage = usage_fields(completion.usage, response.audio)
    w.answer.usage = usage
    details = {"type": "incomplete", "reason": incomplete} if incomplete else None
    final = [o.item.wire for o in outputs]
    w.add(
        "response_done",
        -1,
        None,
        _TERMINAL,
        "response.done",
        response=response.wire(status, final, usage, details),
    )
    return w.answer
