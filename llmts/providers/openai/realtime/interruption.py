"""How a turn ends early: cancelled after part of its answer was written, or failed.

A cancelled answer (``response.cancel``, or speech while it plays) is closed where it was cut: every part
and item it had opened gets its ``done`` events with what was delivered (item status ``incomplete``),
then ``response.done`` with status ``cancelled`` and the reason. The conversation keeps each opened item
as delivered and loses the items never announced. A failed turn gets an ``error`` event and a failed
``response.done``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from llmts.errors import LlmtsError
from llmts.providers.openai.realtime.audio import bytes_per_ms
from llmts.providers.openai.realtime.items import Item
from llmts.providers.openai.realtime.render import Answer, Output
from llmts.providers.openai.realtime.response import ResponseContext, error_fields
from llmts.providers.openai.realtime.wire import Emitter

__all__ = ["Cut", "render_failure", "render_interruption"]

# The reasons ``RealtimeResponseStatus`` knows for a cancelled response.
_REASONS = ("turn_detected", "client_cancelled")


@dataclass(slots=True)
class _Progress:
    """What the delivered events of one output item carried."""

    opened: bool = False
    part: bool = False
    text: list[str] = field(default_factory=list)
    audio: int = 0
    args: list[str] = field(default_factory=list)
    done: set[str] = field(default_factory=set)


@dataclass(slots=True)
class Cut:
    """The closing events, and the conversation's changes: items to put in place (as delivered) and ids
    of items never announced."""

    events: list[bytes] = field(default_factory=list)
    replaced: list[Item] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


def _replay(answer: Answer, delivered: int) -> dict[int, _Progress] | None:
    """Per output index, what the first ``delivered`` events carried (None once ``response.done`` went)."""
    progress: dict[int, _Progress] = {}
    for step, index, value in answer.steps[:delivered]:
        if step == "response_done":
            return None
        seen = progress.setdefault(index, _Progress())
        if step == "item":
            seen.opened = True
        elif step == "part":
            seen.part = True
        elif step in ("text", "transcript"):
            seen.text.append(value)
        elif step == "audio":
            seen.audio += value
        elif step == "args":
            seen.args.append(value)
        else:
            seen.done.add(step)
    return progress


def _partial(output: Output, seen: _Progress, response: ResponseContext) -> Item:
    """The item as far as it was delivered."""
    wire = output.item.wire
    text = "".join(seen.text)
    if wire["type"] == "function_call":
        arguments = "".join(seen.args)
        cut = {**wire, "status": "incomplete", "arguments": arguments}
        return Item(id=output.item.id, wire=cut, text="", chars=len(wire["name"]) + len(arguments))
    content: list[dict[str, Any]] = []
    if seen.part:
        kind = "output_audio" if output.audio else "output_text"
        content.append({"type": kind, "transcript" if output.audio else "text": text})
    audio_ms = seen.audio // bytes_per_ms(response.output_format)
    cut = {**wire, "status": "incomplete", "content": content}
    return Item(id=output.item.id, wire=cut, text=text, chars=len(text), audio_ms=audio_ms)


def _close(
    emit: Emitter, response: ResponseContext, output: Output, seen: _Progress, item: Item
) -> list[bytes]:
    """The ``done`` events ``output`` still owes, with what was delivered."""
    events: list[bytes] = []
    index, item_id, wire = output.index, output.item.id, item.wire
    base = {"response_id": response.id, "item_id": item_id, "output_index": index}
    if wire["type"] == "function_call":
        if "args_done" not in seen.done:
            events.append(
                emit.event(
                    "response.function_call_arguments.done",
                    **base,
                    call_id=wire["call_id"],
                    name=wire["name"],
                    arguments=wire["arguments"],
                )
            )
    elif seen.part and "part_done" not in seen.done:
        text = item.text
        ids = {**base, "content_index": 0}
        if output.audio:
            if "audio_done" not in seen.done:
                events.append(emit.event("response.output_audio.done", **ids))
            if "transcript_done" not in seen.done:
                events.append(emit.event("response.output_audio_transcript.done", **ids, transcript=text))
            part = {"type": "audio", "transcript": text}
        else:
            if "text_done" not in seen.done:
                events.append(emit.event("response.output_text.done", **ids, text=text))
            part = {"type": "text", "text": text}
        events.append(emit.event("response.content_part.done", **ids, part=part))
    if "item_done" not in seen.done:
        events.append(
            emit.event("response.output_item.done", response_id=response.id, output_index=index, item=wire)
        )
    if response.in_conversation and "conv_done" not in seen.done:
        events.append(emit.event("conversation.item.done", previous_item_id=output.previous, item=wire))
    return events


def render_interruption(
    emit: Emitter, response: ResponseContext, answer: Answer | None, delivered: int, reason: str
) -> Cut:
    """Close ``answer`` (None: cancelled before it was rendered) after its first ``delivered`` events."""
    cut = Cut()
    progress = _replay(answer, delivered) if answer is not None else {}
    if progress is None:
        return cut  # response.done already went: nothing is left to cancel
    final: list[dict[str, Any]] = []
    for output in answer.outputs if answer is not None else ():
        seen = progress.get(output.index)
        if seen is None or not seen.opened:
            cut.removed.append(output.item.id)
            continue
        item = output.item if "item_done" in seen.done else _partial(output, seen, response)
        if item is not output.item:
            cut.replaced.append(item)
        cut.events.extend(_close(emit, response, output, seen, item))
        final.append(item.wire)
    details = {"type": "cancelled", "reason": reason if reason in _REASONS else "client_cancelled"}
    usage = answer.usage if answer is not None else None
    cut.events.append(emit.event("response.done", response=response.wire("cancelled", final, usage, details)))
    return cut


def render_failure(emit: Emitter, response: ResponseContext | None, error: LlmtsError) -> list[bytes]:
    """An ``error`` event (echoing the client's ``event_id`` of the event that asked for the turn) and, for
    a turn, ``response.done`` with status ``failed`` naming the error."""
    fields = error_fields(error)
    event_id = response.client_event_id if response is not None else None
    events = [
        emit.error(
            fields["message"],
            code=fields["code"],
            param=error.param,
            event_id=event_id,
            error_type=fields["type"],
        )
    ]
    if response is not None:
        # The status's error has the service's two fields (the SDKs' RealtimeResponseStatus.Error); the
        # message went out in the error event.
        details = {"type": "failed", "error": {"type": fields["type"], "code": fields["code"]}}
        events.append(emit.event("response.done", response=response.wire("failed", [], None, details)))
    return events
