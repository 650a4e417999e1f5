"""One model response as the client sees it: the ``RealtimeResponse`` object of ``response.created`` and
``response.done``, its usage, and how an error is named in it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from llmts.errors import LlmtsError
from llmts.schema.neutral import Usage

__all__ = ["ResponseContext", "error_fields", "usage_fields"]


@dataclass(slots=True)
class ResponseContext:
    """What a turn's events need besides the completion: the response's id and settings (after the
    ``response.create`` overrides) and the client's ``event_id`` of the event that asked for it."""

    id: str
    # None for an out-of-band response (``conversation: "none"``): its items join no conversation.
    conversation_id: str | None
    modalities: list[str]
    max_output_tokens: int | str
    metadata: dict[str, str] | None
    output_format: dict[str, Any]
    voice: Any
    client_event_id: str | None = None

    @property
    def in_conversation(self) -> bool:
        return self.conversation_id is not None

    @property
    def audio(self) -> bool:
        return "audio" in self.modalities

    def wire(
        self,
        status: str,
        output: list[dict[str, Any]] | None = None,
        usage: dict[str, Any] | None = None,
        status_details: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        voice = self.voice.get("id") if isinstance(self.voice, dict) else self.voice
        return {
            "object": "realtime.response",
            "id": self.id,
            "status": status,
            "status_details": status_details,
            "output": output or [],
            "conversation_id": self.conversation_id,
            "output_modalities": self.modalities,
            "max_output_tokens": self.max_output_tokens,
            "audio": {"output": {"format": self.output_format, "voice": voice}},
            "usage": usage,
            "metadata": self.metadata,
        }


def usage_fields(usage: Usage, audio: bool) -> dict[str, Any]:
    """``response.done``'s usage: input tokens count as text (cached ones as cached text), output tokens as
    audio tokens for a spoken answer and as text tokens otherwise."""
    output = usage.output_tokens
    return {
        "total_tokens": usage.total_tokens,
        "input_tokens": usage.input_tokens,
        "output_tokens": output,
        "input_token_details": {
            "text_tokens": usage.input_tokens,
            "audio_tokens": 0,
            "image_tokens": 0,
            "cached_tokens": usage.cached_tokens,
            "cached_tokens_details": {
                "text_tokens": usage.cached_tokens,
                "audio_tokens": 0,
                "image_tokens": 0,
            },
        },
        "output_token_details": {
            "text_tokens": 0 if audio else output,
            "audio_tokens": output if audio else 0,
        },
    }


def _error_type(error: LlmtsError) -> str:
    scripted = getattr(error, "error_type", None)
    if isinstance(scripted, str) and scripted:
        return scripted
    status = error.http_status
    if status >= 500:
        return "server_error"
    if status == 429:
        return "rate_limit_error"
    if status == 403:
        return "permission_error"
    return "invalid_request_error"


def error_fields(error: LlmtsError) -> dict[str, Any]:
    """The ``type``, ``code`` and ``message`` an ``error`` event and a failed response name (the scripted
    error's type and code, else OpenAI's type for the status and llmts's code)."""
    return {"type": _error_type(error), "code": error.code, "message": error.message}
