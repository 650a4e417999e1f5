"""Gemini Live server messages (JSON, camelCase, as google-genai's ``LiveServerMessage`` reads them).

An answered turn (``render_answer``), in order:

* a thought part (``{"text", "thought": true}``) when the fixture scripts visible reasoning;
* TEXT sessions: one ``serverContent.modelTurn`` message per text chunk (content events);
* AUDIO sessions: one message per ``AUDIO_CHUNK_BYTES`` of PCM16 24 kHz audio as an ``inlineData`` part
  (content events): the fixture's scripted bytes, else llmts's generated speech of the words
  (``llmts.runtime.media.audio.speech_pcm``); with ``outputAudioTranscription`` each is followed by an
  ``outputTranscription`` message with the words that chunk says (the text is spread over the chunks
  word by word);
* function calls: one ``toolCall`` message with ``usageMetadata``, the turn's last (the client answers
  with ``toolResponse`` and the model goes on in the same ``receive()`` loop);
* otherwise ``generationComplete``, then ``turnComplete`` with ``usageMetadata`` (the turn's last;
  ``turnCompleteReason: RESPONSE_REJECTED`` for a refusal or content filter).

Live's usage counts ``responseTokenCount`` (not REST's ``candidatesTokenCount``) with per-modality details.
Each message stays far below google-genai's 1 MiB frame limit (a 24,000-byte chunk is 32,000 base64
characters).
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from typing import Any

import orjson

from llmts.providers.realtime import ServerEvent
from llmts.runtime.media.audio import speech_pcm
from llmts.schema.faults import FrameKind
from llmts.schema.neutral import (
    Completion,
    NeutralMessage,
    NeutralToolCall,
    ScriptedOutput,
    Usage,
    neutral_message,
)

__all__ = [
    "AUDIO_CHUNK_BYTES",
    "INTERRUPTED",
    "OUTPUT_AUDIO_MIME",
    "RenderedAnswer",
    "go_away",
    "input_transcription",
    "live_usage",
    "render_answer",
    "setup_complete",
    "tool_call_cancellation",
]

AUDIO_CHUNK_BYTES = 24_000  # half a second of 24 kHz PCM16
OUTPUT_AUDIO_MIME = "audio/pcm;rate=24000"
INTERRUPTED = b'{"serverContent":{"interrupted":true}}'
_GENERATION_COMPLETE = b'{"serverContent":{"generationComplete":true}}'
_REJECTED = frozenset({"refusal", "content_filter"})
_WORD = re.compile(r"\S+\s*")


def setup_complete(session_id: str) -> bytes:
    return orjson.dumps({"setupComplete": {"sessionId": session_id}})


def go_away(time_left_seconds: float) -> bytes:
    """``goAway`` with ``timeLeft`` as a protobuf Duration (``"10s"``, ``"0.250s"``)."""
    left = max(0.0, time_left_seconds)
    millis = round(left * 1000)
    text = f"{millis // 1000}s" if millis % 1000 == 0 else f"{millis / 1000:.3f}s"
    return orjson.dumps({"goAway": {"timeLeft": text}})


def input_transcription(text: str) -> bytes:
    return orjson.dumps({"serverContent": {"inputTranscription": {"text": text}}})


def tool_call_cancellation(ids: list[str]) -> bytes:
    return orjson.dumps({"toolCallCancellation": {"ids": ids}})


def live_usage(usage: Usage, audio: bool) -> dict[str, Any]:
    """Live's ``usageMetadata``: thoughts count beside the response, as in the REST API."""
    thoughts = min(usage.reasoning_tokens, usage.output_tokens)
    response = usage.output_tokens - thoughts
    metadata: dict[str, Any] = {
        "promptTokenCount": usage.input_tokens,
        "responseTokenCount": response,
        "totalTokenCount": usage.input_tokens + usage.output_tokens,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": usage.input_tokens}],
        "responseTokensDetails": [{"modality": "AUDIO" if audio else "TEXT", "tokenCount": response}],
    }
    if usage.cached_tokens > 0:
        metadata["cachedContentTokenCount"] = usage.cached_tokens
    if thoughts > 0:
        metadata["thoughtsTokenCount"] = thoughts
    return metadata


@dataclass(frozen=True, slots=True)
class RenderedAnswer:
    """A turn's messages, the answer text each content message carries (what an interruption keeps), and
    the assistant message the conversation records."""

    events: list[ServerEvent]
    pieces: list[str]
    message: NeutralMessage


def _parts(*parts: dict[str, Any]) -> bytes:
    return orjson.dumps({"serverContent": {"modelTurn": {"parts": list(parts)}}})


def _args(call: NeutralToolCall) -> Any:
    """``args`` is a JSON object: other arguments are wrapped as ``{"value": ...}`` (as the REST render)."""
    try:
        value = orjson.loads(call.arguments) if call.arguments else {}
    except orjson.JSONDecodeError:
        return {"value": call.arguments}
    return value if isinstance(value, dict) else {"value": value}


def _spread(text: str, count: int) -> list[str]:
    """``text`` in ``count`` pieces, whole words each, in proportion (they join back to ``text``)."""
    words = _WORD.findall(text)
    pieces = [""] * count
    lead = text[: len(text) - len(text.lstrip())]
    if not words:
        pieces[0] = text
        return pieces
    words[0] = lead + words[0]
    for index, word in enumerate(words):
        pieces[index * count // len(words)] += word
    return pieces


def _audio(pcm: bytes, words: str, transcribe: bool) -> tuple[list[ServerEvent], list[str]]:
    chunks = [pcm[at : at + AUDIO_CHUNK_BYTES] for at in range(0, len(pcm), AUDIO_CHUNK_BYTES)]
    pieces = _spread(words, len(chunks)) if chunks else []
    events: list[ServerEvent] = []
    for chunk, piece in zip(chunks, pieces, strict=True):
        data = base64.b64encode(chunk).decode()
        events.append(
            ServerEvent(
                _parts({"inlineData": {"mimeType": OUTPUT_AUDIO_MIME, "data": data}}), FrameKind.CONTENT
            )
        )
        if transcribe and piece:
            events.append(
                ServerEvent(orjson.dumps({"serverContent": {"outputTranscription": {"text": piece}}}))
            )
    return events, pieces


def _text(output: ScriptedOutput, words: str) -> tuple[list[ServerEvent], list[str]]:
    chunks = output.chunks if output.chunks and output.refusal is None else (words,)
    pieces = [chunk for chunk in chunks if chunk]
    return [ServerEvent(_parts({"text": piece}), FrameKind.CONTENT) for piece in pieces], pieces


def render_answer(completion: Completion, *, audio: bool, output_transcription: bool) -> RenderedAnswer:
    output = completion.output
    words = output.refusal if output.refusal is not None else output.text
    events: list[ServerEvent] = []
    reasoning = output.reasoning
    if reasoning is not None and not reasoning.redacted and reasoning.thinking():
        events.append(ServerEvent(_parts({"text": reasoning.thinking(), "thought": True})))
    if audio:
        # Scripted bytes (``ScriptedOutput.audio_pcm``, a spoken fixture) or the words as generated speech.
        pcm = getattr(output, "audio_pcm", None)
        if pcm is None:
            pcm = speech_pcm(words) if words else b""
        content, pieces = _audio(pcm, words, output_transcription)
    else:
        content, pieces = _text(output, words)
    events.extend(content)
    usage = live_usage(completion.usage, audio)
    if output.tool_calls:
        calls = [{"id": call.id, "name": call.name, "args": _args(call)} for call in output.tool_calls]
        events.append(
            ServerEvent(
                orjson.dumps({"toolCall": {"functionCalls": calls}, "usageMetadata": usage}),
                FrameKind.TERMINAL,
            )
        )
    else:
        done: dict[str, Any] = {"turnComplete": True}
        if output.finish_reason in _REJECTED:
            done["turnCompleteReason"] = "RESPONSE_REJECTED"
        events.append(ServerEvent(_GENERATION_COMPLETE))
        events.append(
            ServerEvent(orjson.dumps({"serverContent": done, "usageMetadata": usage}), FrameKind.TERMINAL)
        )
    return RenderedAnswer(events, pieces, neutral_message("assistant", words, output.tool_calls))
