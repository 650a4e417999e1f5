"""Driving the OpenAI Realtime protocol without a server: a client that sends events as the openai SDK
does and checks every server event strictly against the SDK's own models (the SDK itself does not
validate what it receives), and hand-built completions."""

from __future__ import annotations

import base64
import itertools
from dataclasses import dataclass, field
from typing import Any, get_args

import orjson
from openai.types.realtime.realtime_server_event import RealtimeServerEvent

from llmts.providers.base import ProviderRequest
from llmts.providers.openai.realtime.protocol import OpenAIRealtimeProtocol
from llmts.providers.realtime import Reaction, RealtimeOpening, ServerEvent, Turn
from llmts.schema.config import SessionConfig
from llmts.schema.faults import FrameKind
from llmts.schema.neutral import Completion, NeutralToolCall, ScriptedOutput, Usage, build

__all__ = [
    "BY_TYPE",
    "TEXT",
    "Client",
    "SpokenOutput",
    "check_event",
    "completion",
    "event_types",
    "opening",
    "pcm_b64",
    "silence_b64",
    "speech_b64",
    "text_client",
    "tool_call",
]

# type -> the SDK's model of that server event (realtime_wire research, "Strict validation").
BY_TYPE = {
    get_args(model.model_fields["type"].annotation)[0]: model
    for model in get_args(get_args(RealtimeServerEvent)[0])
}


def check_event(data: bytes) -> dict[str, Any]:
    """One server event: JSON, a known type, valid for the SDK's model in pydantic's strict mode."""
    event = orjson.loads(data)
    assert isinstance(event, dict)
    BY_TYPE[event["type"]].model_validate(event, strict=True)
    return event


def opening(
    *,
    provider: str = "openai",
    query: str = "model=gpt-realtime",
    headers: dict[str, str] | None = None,
    deployments: dict[str, str] | None = None,
    path: str = "/openai/v1/realtime",
) -> RealtimeOpening:
    environ: dict[str, Any] = {"QUERY_STRING": query, "REQUEST_METHOD": "GET", "PATH_INFO": path}
    for name, value in (headers or {}).items():
        environ["HTTP_" + name.upper().replace("-", "_")] = value
    counter = itertools.count(1)
    return RealtimeOpening(
        request=ProviderRequest("GET", path, {}, b"", environ),
        provider=provider,
        new_id=lambda prefix: f"{prefix}_{next(counter):06d}",
        config=SessionConfig(azure_deployments=deployments) if deployments else None,
    )


def pcm_b64(pcm: bytes) -> str:
    return base64.b64encode(pcm).decode("ascii")


def speech_b64(ms: int, level: int = 1000) -> str:
    """``ms`` of PCM16 at 24 kHz with sound in every sample."""
    sample = level.to_bytes(2, "little", signed=True)
    return pcm_b64(sample * (24 * ms))


def silence_b64(ms: int) -> str:
    return pcm_b64(bytes(48 * ms))


class SpokenOutput(ScriptedOutput):
    """A ScriptedOutput with the scripted PCM16 the lead adds to the schema (``audio_pcm``)."""

    audio_pcm: bytes | None = None


def tool_call(
    name: str, arguments: str, call_id: str = "call_1", chunks: tuple[str, ...] = ()
) -> NeutralToolCall:
    return build(NeutralToolCall, id=call_id, name=name, arguments=arguments, arguments_chunks=chunks)


def completion(
    text: str = "",
    *,
    chunks: tuple[str, ...] | None = None,
    tool_calls: tuple[NeutralToolCall, ...] = (),
    finish_reason: str = "stop",
    audio_pcm: bytes | None = None,
    usage: Usage | None = None,
) -> Completion:
    kind = "tool_calls" if tool_calls else "text"
    values: dict[str, Any] = {
        "kind": kind,
        "text": text,
        "chunks": chunks if chunks is not None else ((text,) if text else ()),
        "tool_calls": tool_calls,
        "output_tokens": 7,
        "finish_reason": finish_reason,
    }
    output = (
        SpokenOutput(**values, audio_pcm=audio_pcm) if audio_pcm is not None else ScriptedOutput(**values)
    )
    return build(
        Completion,
        output=output,
        usage=usage or Usage(input_tokens=11, output_tokens=7, cached_tokens=3),
        response_id="ignored",
        created_at=0,
    )


@dataclass
class Client:
    """One connection: sends client events, keeps every server event (validated) in order."""

    protocol: OpenAIRealtimeProtocol
    received: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def connect(cls, model: str = "gpt-realtime", **opening_args: Any) -> Client:
        protocol = OpenAIRealtimeProtocol(opening(**opening_args), model)
        client = cls(protocol)
        client._take(protocol.opening())
        return client

    def _take(self, events: list[bytes]) -> list[dict[str, Any]]:
        checked = [check_event(data) for data in events]
        ids = {event["event_id"] for event in self.received}
        for event in checked:
            assert event["event_id"].startswith("event_") and event["event_id"] not in ids
            ids.add(event["event_id"])
        self.received.extend(checked)
        return checked

    def send_raw(self, message: bytes) -> tuple[Reaction, list[dict[str, Any]]]:
        reaction = self.protocol.receive(message)
        return reaction, self._take(reaction.events)

    def send(self, event: dict[str, Any]) -> tuple[Reaction, list[dict[str, Any]]]:
        return self.send_raw(orjson.dumps(event))

    def types(self, event: dict[str, Any]) -> list[str]:
        return [e["type"] for e in self.send(event)[1]]

    def error(self, event: dict[str, Any] | bytes) -> dict[str, Any]:
        """Send an event the service refuses: exactly one ``error`` event, and no turn or cancel."""
        reaction, events = self.send_raw(event if isinstance(event, bytes) else orjson.dumps(event))
        assert [e["type"] for e in events] == ["error"], events
        assert reaction.turn is None and reaction.cancel is None and reaction.close is None
        error: dict[str, Any] = events[0]["error"]
        assert error["type"] == "invalid_request_error" and error["message"]
        return error

    def say(self, text: str) -> None:
        types = self.types(
            {
                "type": "conversation.item.create",
                "item": {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": text}],
                },
            }
        )
        assert types == ["conversation.item.added", "conversation.item.done"]

    def respond(self, response: dict[str, Any] | None = None) -> Turn:
        event: dict[str, Any] = {"type": "response.create"}
        if response is not None:
            event["response"] = response
        reaction, events = self.send(event)
        assert [e["type"] for e in events] == ["response.created"], events
        assert reaction.turn is not None
        assert events[0]["response"]["status"] == "in_progress"
        assert events[0]["response"]["id"] == reaction.turn.response_id
        return reaction.turn

    def answer(self, turn: Turn, done: Completion) -> tuple[list[ServerEvent], list[dict[str, Any]]]:
        """The turn answered and fully written (``finished``)."""
        written = self.protocol.answer(turn, done)
        events = self._take([event.data for event in written])
        assert written[-1].kind is FrameKind.TERMINAL and events[-1]["type"] == "response.done"
        assert all(event.kind is not FrameKind.TERMINAL for event in written[:-1])
        self.protocol.finished(turn)
        return written, events

    def interrupt(self, turn: Turn, delivered: list[ServerEvent], reason: str) -> list[dict[str, Any]]:
        return self._take(self.protocol.interrupted(turn, delivered, reason))


# A session.update's session that turns output to text only.
TEXT = {"type": "realtime", "output_modalities": ["text"]}


def event_types(events: list[dict[str, Any]]) -> list[str]:
    return [event["type"] for event in events]


def text_client(**session: Any) -> Client:
    """A connection whose session answers in text, updated with ``session``'s further keys."""
    client = Client.connect()
    assert client.types({"type": "session.update", "session": {**TEXT, **session}}) == ["session.updated"]
    return client
