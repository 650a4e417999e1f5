"""Does a request equal the one a recorded answer was given to, and if not, where do they first differ?

A replayed request must equal the recorded one in what llmts's parser made of it: operation, model,
stream, system prompt and every message (role, text, tool call id, tool calls); for other operations its
inputs, query, named options and uploaded file's digest. Anything else the client sends (headers, SDK
version fields, sampling settings) is not compared, so a replay survives an SDK upgrade. A request that
equals no recorded one gets 409 ``llm_test_server_no_recorded_match`` naming the closest recorded request
and the first difference (docs/recording.md, "Misses").
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from llmts.errors import NoRecordedMatch
from llmts.runtime.plans import RecordedCandidate
from llmts.schema.neutral import NeutralMessage, NeutralRequest, OperationRequest
from llmts.schema.recorded import OptionValue, RecordedMessage, RecordedRequest

__all__ = ["closest_recorded", "first_difference", "no_recorded_match", "recorded_request"]

# How much of a differing text a message shows, around the first differing character.
_SHOWN = 48


class _Operation:
    """What an operation request is compared by, beyond operation, model and stream: its input's texts,
    query, named options (those that differ from their defaults: a request that names no dimension
    differs from one that names the model's default) and uploaded file's digest."""

    __slots__ = ("inputs", "options", "query", "upload_sha256")

    def __init__(self, request: NeutralRequest) -> None:
        self.inputs: tuple[str, ...] = ()
        self.query = ""
        self.options: dict[str, OptionValue] = {}
        self.upload_sha256 = ""
        if isinstance(request, OperationRequest):
            given = request.input
            self.inputs, self.query, self.options = given.texts(), given.query_text(), given.options()
            upload = given.uploaded()
            if upload:
                self.upload_sha256 = hashlib.sha256(upload).hexdigest()


def recorded_request(request: NeutralRequest) -> RecordedRequest:
    """The summary a recording keeps of ``request`` (compared again when it is replayed)."""
    operation = _Operation(request)
    return RecordedRequest(
        operation=request.operation,
        model=request.model,
        stream=request.stream,
        system=request.system,
        messages=[_message(m) for m in request.messages],
        inputs=list(operation.inputs),
        query=operation.query,
        options=operation.options,
        upload_sha256=operation.upload_sha256,
    )


def _message(message: NeutralMessage) -> RecordedMessage:
    calls = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in message.tool_calls]
    return RecordedMessage.model_validate(
        {
            "role": message.role,
            "text": message.text,
            "tool_call_id": message.tool_call_id,
            "tool_calls": calls or None,
        }
    )


def _show(text: str, at: int) -> str:
    start = max(0, at - _SHOWN // 2)
    piece = text[start : start + _SHOWN]
    return ("..." if start else "") + repr(piece)[1:-1] + ("..." if start + _SHOWN < len(text) else "")


def _text_difference(field: str, recorded: str, sent: str) -> str:
    at = _common_prefix(recorded, sent)
    return f"{field} differs at character {at}: recorded '{_show(recorded, at)}', sent '{_show(sent, at)}'"


def _message_difference(index: int, recorded: RecordedMessage, sent: NeutralMessage) -> str | None:
    where = f"messages[{index}]"
    if recorded.role != sent.role:
        return f"{where}.role: recorded {recorded.role}, sent {sent.role}"
    if recorded.text != sent.text:
        return _text_difference(f"{where}.text", recorded.text, sent.text)
    if recorded.tool_call_id != sent.tool_call_id:
        return f"{where}.tool_call_id: recorded {recorded.tool_call_id!r}, sent {sent.tool_call_id!r}"
    calls = recorded.tool_calls or []
    if len(calls) != len(sent.tool_calls):
        return f"{where}.tool_calls: recorded {len(calls)} call(s), sent {len(sent.tool_calls)}"
    for c_index, (old, new) in enumerate(zip(calls, sent.tool_calls, strict=True)):
        for field in ("id", "name"):
            if getattr(old, field) != getattr(new, field):
                return (
                    f"{where}.tool_calls[{c_index}].{field}: recorded {getattr(old, field)!r}, "
                    f"sent {getattr(new, field)!r}"
                )
        if old.arguments != new.arguments:
            return _text_difference(f"{where}.tool_calls[{c_index}].arguments", old.arguments, new.arguments)
    return None


def first_difference(recorded: RecordedRequest, request: NeutralRequest) -> str | None:
    """Where ``request`` first differs from the recorded one (None: they are equal)."""
    if recorded.operation != request.operation:
        return f"operation: recorded {recorded.operation}, sent {request.operation}"
    if recorded.model != request.model:
        return f"model: recorded {recorded.model!r}, sent {request.model!r}"
    if recorded.stream != request.stream:
        return f"stream: recorded {str(recorded.stream).lower()}, sent {str(request.stream).lower()}"
    if recorded.system != request.system:
        return _text_difference("system", recorded.system, request.system)
    for index, (old, new) in enumerate(zip(recorded.messages, request.messages, strict=False)):
        difference = _message_difference(index, old, new)
        if difference is not None:
            return difference
    old_count, new_count = len(recorded.messages), len(request.messages)
    if old_count != new_count:
        if new_count > old_count:
            extra = request.messages[old_count]
            return (
                f"messages: recorded {old_count}, sent {new_count} (the first extra one, "
                f"messages[{old_count}], is {extra.role} '{_show(extra.text, 0)}')"
            )
        return f"messages: recorded {old_count}, sent {new_count} (messages[{new_count}] is missing)"
    return _operation_difference(recorded, _Operation(request))


def _operation_difference(recorded: RecordedRequest, sent: _Operation) -> str | None:
    for index, (old, new) in enumerate(zip(recorded.inputs, sent.inputs, strict=False)):
        if old != new:
            return _text_difference(f"inputs[{index}]", old, new)
    if len(recorded.inputs) != len(sent.inputs):
        return f"inputs: recorded {len(recorded.inputs)}, sent {len(sent.inputs)}"
    if recorded.query != sent.query:
        return _text_difference("query", recorded.query, sent.query)
    for name in sorted(recorded.options.keys() | sent.options.keys()):
        old_value, new_value = recorded.options.get(name), sent.options.get(name)
        if old_value != new_value:
            return f"{name}: recorded {_option(old_value)}, sent {_option(new_value)}"
    if recorded.upload_sha256 != sent.upload_sha256:
        return (
            f"the uploaded file differs: recorded sha256 {recorded.upload_sha256[:12] or 'none'}, "
            f"sent {sent.upload_sha256[:12] or 'none'}"
        )
    return None


def _option(value: OptionValue | None) -> str:
    return "none" if value is None else repr(value)


def _common_prefix(left: str, right: str) -> int:
    return next(
        (i for i, (a, b) in enumerate(zip(left, right, strict=False)) if a != b), min(len(left), len(right))
    )


def _likeness(recorded: RecordedRequest, request: NeutralRequest) -> tuple[int, ...]:
    """Larger is closer: same operation, model and stream first, then more equal leading messages (or
    inputs), then more equal leading characters in the first message (or input) that differs."""
    same_prefix = 0
    near_text = 0
    for old, new in zip(recorded.messages, request.messages, strict=False):
        if _message_difference(0, old, new) is not None:
            near_text = _common_prefix(old.text, new.text) if old.role == new.role else 0
            break
        same_prefix += 1
    if isinstance(request, OperationRequest) and not request.messages:
        for old_input, new_input in zip(recorded.inputs, request.input.texts(), strict=False):
            if old_input != new_input:
                near_text = _common_prefix(old_input, new_input)
                break
            same_prefix += 1
    return (
        recorded.operation == request.operation,
        recorded.model == request.model,
        recorded.stream == request.stream,
        same_prefix,
        near_text,
        recorded.system == request.system,
        -abs(len(recorded.messages) - len(request.messages)),
    )


def closest_recorded(
    candidates: Sequence[RecordedCandidate], request: NeutralRequest
) -> tuple[str, str | None] | None:
    """The recorded request most like ``request`` (same provider): (where it is, the first difference)."""
    best: tuple[tuple[int, ...], str, RecordedRequest] | None = None
    for candidate in candidates:
        if candidate.provider is not None and candidate.provider != request.provider:
            continue
        likeness = _likeness(candidate.request, request)
        if best is None or likeness > best[0]:
            best = (likeness, candidate.where, candidate.request)
    if best is None:
        return None
    return best[1], first_difference(best[2], request)


def no_recorded_match(
    candidates: Sequence[RecordedCandidate], request: NeutralRequest, why: str
) -> NoRecordedMatch:
    """The 409 for a replayed request no recorded answer serves; ``why`` is the selection's own reason."""
    head = (
        f"no recorded request matches this {request.provider} {request.operation} request "
        f"(model {request.model!r})"
    )
    near = closest_recorded(candidates, request)
    if near is None:
        return NoRecordedMatch(f"{head}: nothing was recorded for {request.provider} ({why})")
    where, difference = near
    if difference is None:
        return NoRecordedMatch(
            f"{head}: the closest recorded request, {where}, is this same request, already replayed "
            f"(each recorded answer replays once in order; {why})"
        )
    return NoRecordedMatch(f"{head}; the closest recorded request is {where}: {difference}")
