"""The typed values of Gemini Live client messages (``client_messages.py`` parses them), and
``LiveInvalid``, the refusal of a message: the close code and reason the service would send.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "INVALID_ARGUMENT",
    "ActivitySignal",
    "AudioChunk",
    "FunctionCall",
    "FunctionResult",
    "LiveClientContent",
    "LiveContent",
    "LiveContextUpdate",
    "LiveInvalid",
    "LiveMessage",
    "LiveRealtimeInput",
    "LiveSetup",
    "LiveToolResponse",
    "MediaChunk",
    "RealtimeItem",
    "TextInput",
    "invalid_argument",
]

# The close code of a message the service refuses (RFC 6455: "inconsistent data").
INVALID_ARGUMENT = 1007


class LiveInvalid(Exception):
    """A client message the service refuses: the connection closes with ``code`` and ``reason``."""

    def __init__(self, reason: str, code: int = INVALID_ARGUMENT) -> None:
        super().__init__(reason)
        self.reason = reason
        self.code = code


def invalid_argument(detail: str) -> LiveInvalid:
    """The service's sentence for a well-formed message it cannot accept, with what was wrong."""
    return LiveInvalid(f"Request contains an invalid argument. {detail}")


@dataclass(frozen=True, slots=True)
class LiveSetup:
    """The session's settings (``setup``; ``contextUpdate`` replaces ``system`` and the tools)."""

    model: str
    audio: bool  # AUDIO answers (the default when ``responseModalities`` is absent), else TEXT
    system: str
    tools_json: str  # the ``tools`` array as sent (serialized): part of the prompt's preamble
    tool_names: tuple[str, ...]
    input_transcription: bool
    output_transcription: bool
    automatic_activity: bool  # ``automaticActivityDetection.disabled`` is not true
    interrupts: bool  # ``activityHandling`` is not NO_INTERRUPTION: speech cancels the answer
    silence_ms: int | None  # ``automaticActivityDetection.silenceDurationMs``
    sliding_window: bool  # ``contextWindowCompression`` was asked for
    resumption: bool  # ``sessionResumption`` was sent (accepted, not simulated)
    reasoning: dict[str, Any] | None  # ``generationConfig.thinkingConfig`` (scalars, for the journal)


@dataclass(frozen=True, slots=True)
class FunctionCall:
    id: str | None
    name: str
    args: str  # JSON object


@dataclass(frozen=True, slots=True)
class FunctionResult:
    id: str | None
    name: str | None
    response: str  # JSON object


@dataclass(frozen=True, slots=True)
class LiveContent:
    role: str  # "user" or "model"
    text: str
    calls: tuple[FunctionCall, ...] = ()
    results: tuple[FunctionResult, ...] = ()


@dataclass(frozen=True, slots=True)
class LiveClientContent:
    turns: tuple[LiveContent, ...]
    turn_complete: bool


@dataclass(frozen=True, slots=True)
class AudioChunk:
    data: bytes
    mime_type: str
    rate: int  # samples per second


@dataclass(frozen=True, slots=True)
class MediaChunk:
    """Realtime video or image input: counted, not simulated."""

    data: bytes
    mime_type: str


@dataclass(frozen=True, slots=True)
class TextInput:
    text: str


@dataclass(frozen=True, slots=True)
class ActivitySignal:
    kind: str  # "activityStart", "activityEnd" or "audioStreamEnd"


RealtimeItem = AudioChunk | MediaChunk | TextInput | ActivitySignal


@dataclass(frozen=True, slots=True)
class LiveRealtimeInput:
    """The fields of one ``realtimeInput`` in the order they act: activityStart, mediaChunks, audio, video,
    text, activityEnd, audioStreamEnd (google-genai sends one field per message)."""

    items: tuple[RealtimeItem, ...]


@dataclass(frozen=True, slots=True)
class LiveToolResponse:
    results: tuple[FunctionResult, ...]


@dataclass(frozen=True, slots=True)
class LiveContextUpdate:
    system: str | None
    tools_json: str | None
    tool_names: tuple[str, ...] | None


LiveMessage = LiveSetup | LiveClientContent | LiveRealtimeInput | LiveToolResponse | LiveContextUpdate
