"""The Realtime session's settings: the object ``session.created`` shows, merged by ``session.update``.

The settings are kept in their wire form (what ``session.updated`` sends back); an update is checked
whole before it applies, so a refused update changes nothing. The fields' checks are in ``fields.py``.
"""

from __future__ import annotations

import copy
from typing import Any

from llmts.providers.openai.realtime.audio import DEFAULT_FORMAT
from llmts.providers.openai.realtime.fields import (
    FIELD_CHECKS,
    PADDING_MS,
    SEMANTIC_SILENCE_MS,
    SERVER_VAD,
    SILENCE_MS,
    audio_settings,
)
from llmts.providers.openai.realtime.wire import check_keys, invalid_type, one_of, require

__all__ = ["SessionSettings"]

_SESSION_KEYS = (
    "type",
    "audio",
    "include",
    "instructions",
    "max_output_tokens",
    "model",
    "output_modalities",
    "parallel_tool_calls",
    "prompt",
    "reasoning",
    "tool_choice",
    "tools",
    "tracing",
    "truncation",
)


def _default_session(session_id: str, model: str) -> dict[str, Any]:
    """What the service's ``session.created`` shows (its default instructions aside)."""
    return {
        "type": "realtime",
        "object": "realtime.session",
        "id": session_id,
        "model": model,
        "output_modalities": ["audio"],
        "instructions": "",
        "tools": [],
        "tool_choice": "auto",
        "max_output_tokens": "inf",
        "tracing": None,
        "truncation": "auto",
        "prompt": None,
        "include": None,
        "audio": {
            "input": {
                "format": dict(DEFAULT_FORMAT),
                "transcription": None,
                "noise_reduction": None,
                "turn_detection": dict(SERVER_VAD),
            },
            "output": {"format": dict(DEFAULT_FORMAT), "voice": "marin", "speed": 1.0},
        },
    }


class SessionSettings:
    """One connection's session object and the values the protocol reads from it."""

    __slots__ = ("wire",)

    def __init__(self, session_id: str, model: str) -> None:
        self.wire = _default_session(session_id, model)

    def update(self, raw: Any) -> None:
        """Merge a ``session.update``'s ``session`` (top-level keys replace, ``audio.input``/``audio.output``
        keys replace one by one), or raise ``EventError`` and change nothing."""
        if not isinstance(raw, dict):
            raise invalid_type("session", "an object", raw)
        check_keys(raw, _SESSION_KEYS, "session")
        one_of(require(raw, "type", "session"), ("realtime",), "session.type")
        merged = copy.deepcopy(self.wire)
        for key, value in raw.items():
            if key == "audio":
                for side, settings in audio_settings(value).items():
                    merged["audio"][side].update(settings)
            elif key != "type":
                merged[key] = FIELD_CHECKS[key](value, f"session.{key}")
        self.wire = merged

    @property
    def model(self) -> str:
        return str(self.wire["model"])

    @property
    def instructions(self) -> str:
        return str(self.wire["instructions"] or "")

    @property
    def output_modalities(self) -> list[str]:
        return list(self.wire["output_modalities"])

    @property
    def tools(self) -> list[dict[str, Any]]:
        return list(self.wire["tools"] or [])

    @property
    def tool_choice(self) -> Any:
        return self.wire["tool_choice"]

    @property
    def max_output_tokens(self) -> int | str:
        value = self.wire["max_output_tokens"]
        return value if isinstance(value, int) else "inf"

    @property
    def input_format(self) -> dict[str, Any]:
        return dict(self.wire["audio"]["input"]["format"] or DEFAULT_FORMAT)

    @property
    def output_format(self) -> dict[str, Any]:
        return dict(self.wire["audio"]["output"]["format"] or DEFAULT_FORMAT)

    @property
    def voice(self) -> Any:
        return self.wire["audio"]["output"]["voice"]

    @property
    def turn_detection(self) -> dict[str, Any] | None:
        value = self.wire["audio"]["input"]["turn_detection"]
        return dict(value) if isinstance(value, dict) else None

    @property
    def transcription(self) -> dict[str, Any] | None:
        value = self.wire["audio"]["input"]["transcription"]
        return dict(value) if isinstance(value, dict) else None

    @property
    def reasoning(self) -> dict[str, Any] | None:
        value = self.wire.get("reasoning")
        return value if isinstance(value, dict) else None

    def silence_ms(self) -> int:
        """How much consecutive silence ends a speech segment under the session's turn detection."""
        detection = self.turn_detection or {}
        if detection.get("type") == "server_vad":
            value = detection.get("silence_duration_ms")
            return value if isinstance(value, int) else SILENCE_MS
        return SEMANTIC_SILENCE_MS

    def prefix_padding_ms(self) -> int:
        detection = self.turn_detection or {}
        value = detection.get("prefix_padding_ms")
        return value if isinstance(value, int) else PADDING_MS
