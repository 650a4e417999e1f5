"""A recording as a session configuration (``GET /admin-api/recording``) that ``configure`` and
``--fixtures`` load unchanged (docs/recording.md, "What a recording holds").

* Exchanges without a conversation id become linear scenarios, one per (provider, model, operation),
  answered in the order they were recorded (a scenario serves one operation; graphs answer chat only, so
  other operations are scenarios even within a conversation).
* Exchanges of one conversation id (``X-Llm-Test-Server-Conversation``) and provider become a
  conversation graph keyed by that id (``conversation_id``): one step per request, in order, each
  matching the request's turn and latest message (its text, or the tool result it carries), so two
  recorded runs of a branching agent replay in any order.
* Every answer is a ``recorded`` fixture: status, headers and the body or the stream's frames as the
  upstream sent them (ids and timestamps included), plus the request it answered. With ``pacing`` the
  measured timing comes along: a stream's time to first byte and its rate as ``pacing``, a whole
  answer's time as ``delay_ms``.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Sequence
from typing import Any

from llmts.runtime.conversations.predicates import logical_turn
from llmts.runtime.recording.store import Exchange
from llmts.schema.fixtures import LIMITS
from llmts.schema.neutral import NeutralMessage, NeutralToolCall
from llmts.schema.operations import CHAT, operation_family
from llmts.schema.pacing import PACING_LIMITS
from llmts.schema.recorded import RecordedMessage, RecordedRequest, recorded_output_tokens

__all__ = ["recording_configuration"]

_ID_CHARS = 96
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def _identifier(*parts: str) -> str:
    return _UNSAFE.sub("-", "-".join(parts)).strip("-")[:_ID_CHARS] or "rec"


class _Ids:
    """Unique scenario/graph ids (they share one namespace)."""

    def __init__(self) -> None:
        self._taken: set[str] = set()

    def new(self, *parts: str) -> str:
        base = _identifier("rec", *parts)
        candidate, count = base, 1
        while candidate in self._taken:
            count += 1
            candidate = f"{base}-{count}"
        self._taken.add(candidate)
        return candidate


def _encoded(data: bytes, binary: bool) -> str:
    return base64.b64encode(data).decode() if binary else data.decode()


def _is_text(data: Sequence[bytes]) -> bool:
    try:
        for piece in data:
            piece.decode()
    except UnicodeDecodeError:
        return False
    return True


def _response(exchange: Exchange, pacing: bool) -> dict[str, Any]:
    pieces = [exchange.body] if exchange.body is not None else list(exchange.frames or ())
    binary = not _is_text(pieces)
    recorded: dict[str, Any] = {
        "status": exchange.status,
        "headers": [list(pair) for pair in exchange.headers],
        "request": exchange.request.model_dump(mode="json"),
    }
    if binary:
        recorded["encoding"] = "base64"
    if exchange.body is not None:
        recorded["body"] = _encoded(exchange.body, binary)
    else:
        recorded["frames"] = [_encoded(frame, binary) for frame in exchange.frames or ()]
    response: dict[str, Any] = {"recorded": recorded}
    if pacing:
        response.update(_timing(exchange))
    return response


def _timing(exchange: Exchange) -> dict[str, Any]:
    """The measured timing: ``pacing`` for a stream, ``delay_ms`` for a whole answer."""
    if exchange.frames is None:
        delay = min(round(exchange.duration_seconds * 1000), LIMITS["delay_ms"])
        return {"delay_ms": delay} if delay > 0 else {}
    ttft_ms = min(round(exchange.first_byte_seconds * 1000), PACING_LIMITS["pacing_ttft_ms"])
    pacing: dict[str, Any] = {"ttft_ms": ttft_ms}
    streaming = exchange.duration_seconds - exchange.first_byte_seconds
    if len(exchange.frames) > 1 and streaming > 0.001:
        tokens = recorded_output_tokens(sum(len(frame) for frame in exchange.frames))
        rate = min(tokens / streaming, float(PACING_LIMITS["pacing_tokens_per_second"]))
        pacing["tokens_per_second"] = round(rate, 3)
    if ttft_ms == 0 and "tokens_per_second" not in pacing:
        return {}
    return {"pacing": pacing}


def _neutral(message: RecordedMessage) -> NeutralMessage:
    calls = tuple(
        NeutralToolCall(id=c.id, name=c.name, arguments=c.arguments) for c in message.tool_calls or ()
    )
    return NeutralMessage(
        role=message.role, text=message.text, tool_calls=calls, tool_call_id=message.tool_call_id
    )


def _call_name(request: RecordedRequest, call_id: str) -> str | None:
    for message in request.messages:
        for call in message.tool_calls or ():
            if call.id == call_id:
                return call.name
    return None


def _when(request: RecordedRequest) -> dict[str, Any]:
    """The step predicates of one recorded request: its turn and its latest message."""
    when: dict[str, Any] = {"turn": logical_turn(tuple(_neutral(m) for m in request.messages))}
    if not request.messages:
        return when
    latest = request.messages[-1]
    when["latest_role"] = latest.role
    limit = LIMITS["predicate_chars"]
    if latest.role == "tool" and latest.tool_call_id is not None:
        name = _call_name(request, latest.tool_call_id)
        if name is not None:
            when["tool_result"] = {"name": name[: LIMITS["identifier_chars"]]}
            if len(latest.tool_call_id) <= LIMITS["identifier_chars"]:
                when["tool_result"]["call_id"] = latest.tool_call_id
            return when
    if latest.role == "user" and len(latest.text) <= limit:
        when["latest_user_equals"] = latest.text
    elif latest.text:
        when["latest_text_contains"] = latest.text[:limit]
    return when


def _graph(
    graph_id: str, provider: str, conversation: str, exchanges: list[Exchange], pacing: bool
) -> dict[str, Any]:
    steps = []
    for index, exchange in enumerate(exchanges):
        step: dict[str, Any] = {
            "id": f"s{index + 1}",
            "when": _when(exchange.request),
            "response": _response(exchange, pacing),
        }
        if index + 1 < len(exchanges):
            step["then"] = [f"s{index + 2}"]
        else:
            step["complete"] = True
        steps.append(step)
    return {
        "id": graph_id,
        "provider": provider,
        "conversation_id": conversation,
        "max_steps": min(max(2 * len(steps), 64), LIMITS["max_steps"]),
        "steps": steps,
    }


def recording_configuration(
    exchanges: Sequence[Exchange], *, pacing: bool = False
) -> tuple[dict[str, Any], int]:
    """The session configuration that replays ``exchanges`` (strict request rules off: the upstream
    already judged these requests), and how many exchanges it leaves out: a conversation keeps its first
    ``steps_per_conversation`` requests, a scenario its first ``responses_per_scenario``."""
    ids = _Ids()
    linear: dict[tuple[str, str, str], list[Exchange]] = {}
    talks: dict[tuple[str, str], list[Exchange]] = {}
    for exchange in exchanges:
        family = operation_family(exchange.request.operation)
        if exchange.conversation_id is None or family != CHAT:  # graphs answer chat requests only
            linear.setdefault((exchange.provider, exchange.request.model, family), []).append(exchange)
        else:
            talks.setdefault((exchange.conversation_id, exchange.provider), []).append(exchange)
    omitted = 0
    scenarios = []
    for (provider, model, family), kept in linear.items():
        omitted += max(0, len(kept) - LIMITS["responses_per_scenario"])
        parts = (provider, model) if family == CHAT else (provider, family, model)
        scenario: dict[str, Any] = {"id": ids.new(*parts), "provider": provider}
        if family != CHAT:  # a scenario serves one operation (llmts/schema/operations/)
            scenario["operation"] = family
        if model:
            scenario["model"] = model
        scenario["responses"] = [_response(e, pacing) for e in kept[: LIMITS["responses_per_scenario"]]]
        scenarios.append(scenario)
    conversations = []
    for (conversation, provider), kept in talks.items():
        omitted += max(0, len(kept) - LIMITS["steps_per_conversation"])
        steps = kept[: LIMITS["steps_per_conversation"]]
        conversations.append(_graph(ids.new(provider, conversation), provider, conversation, steps, pacing))
    config: dict[str, Any] = {"strict_requests": False, "scenarios": scenarios}
    if conversations:
        config["conversations"] = conversations
    return config, omitted
