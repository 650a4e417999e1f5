"""Response fixtures and the names the configuration models share: ``LIMITS``, provider namespaces,
terminal policies.

Scenarios (``config.py``) and conversation graphs (``conversations.py``) both answer with these
fixtures, so they live below both: ``config.py`` imports ``conversations.py``, and neither is imported
back (docs/architecture.md, "Layers").
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import orjson
from pydantic import AfterValidator, BaseModel, Field, model_serializer, model_validator

from llmts.catalog import registry as catalog
from llmts.schema.conversation_limits import CONVERSATION_LIMITS
from llmts.schema.determinism import DETERMINISM_LIMITS
from llmts.schema.economics import ECONOMICS_LIMITS
from llmts.schema.faults import CONNECTION_MODES, StreamDelivery
from llmts.schema.items import NATIVE_LIMITS, OutputItem, check_items
from llmts.schema.journal import JOURNAL_LIMITS
from llmts.schema.media import AUDIO_DELTA_BYTES, MEDIA_LIMITS, MediaB64, b64_decoded_size, transcript_pieces
from llmts.schema.model_base import STRICT, OmitsNone
from llmts.schema.operations import CHAT, CHAT_LIKE, FIXTURE_KINDS, OPERATION_LIMITS, OPERATIONS
from llmts.schema.operations.embeddings import EmbeddingsFixture
from llmts.schema.operations.images import ImagesFixture
from llmts.schema.operations.moderation import ModerationFixtures
from llmts.schema.operations.rerank import RerankFixture
from llmts.schema.operations.speech import AudioFixture
from llmts.schema.operations.transcription import TranscriptFixture
from llmts.schema.pacing import PACING_LIMITS, Pacing
from llmts.schema.peer_limits import PEER_LIMITS
from llmts.schema.recorded import RECORDING_LIMITS, RecordedReply

__all__ = [
    "LIMITS",
    "PROVIDER_NAMESPACES",
    "ErrorFixture",
    "FinishReason",
    "ProviderNamespace",
    "ReasoningFixture",
    "ResponseFixture",
    "TerminalPolicy",
    "ToolCallFixture",
    "UsageOverride",
]

# The names the provider registry declares (llmts/catalog/registry.py): served and reserved namespaces.
PROVIDER_NAMESPACES: tuple[str, ...] = catalog.CATALOG.namespaces

# Documented in docs/configuration.md; each overflow is a 400 naming the field.
LIMITS: dict[str, int] = {
    "models": 256,
    "model_id_chars": 256,
    "scenarios": 256,
    "responses_per_scenario": 4096,
    "identifier_chars": 128,
    "chunks_per_response": 4096,
    "tool_calls_per_response": 128,
    "delay_ms": 300_000,
    "retry_after_seconds": 3600,
    "reasoning_summary_parts": 64,
    "credential_chars": 1024,
    "azure_deployments": 256,
    "choices_per_request": 8,
    # Scripted input transcripts of a session's realtime connections (docs/realtime.md).
    "realtime_input_transcripts": 1024,
    **JOURNAL_LIMITS,
    **NATIVE_LIMITS,
    **DETERMINISM_LIMITS,
    **CONVERSATION_LIMITS,
    **PACING_LIMITS,
    **OPERATION_LIMITS,
    **MEDIA_LIMITS,
    **RECORDING_LIMITS,
    **PEER_LIMITS,
    **ECONOMICS_LIMITS,
}

TerminalPolicy = Literal["reject", "repeat_last_response", "restart"]


def _known_namespace(value: str) -> str:
    namespaces = catalog.CATALOG.namespaces  # read live: the registry, not a copy, is the authority
    if value not in namespaces:
        raise ValueError("unknown provider namespace; expected one of " + ", ".join(namespaces))
    return value


# A provider namespace the registry declares (docs/configuration.md lists them).
ProviderNamespace = Annotated[str, AfterValidator(_known_namespace)]


class UsageOverride(OmitsNone):
    """Token counts that replace the deterministic estimate (any subset)."""

    model_config = STRICT

    input_tokens: int | None = Field(default=None, ge=0)
    output_tokens: int | None = Field(default=None, ge=0)
    cached_tokens: int | None = Field(default=None, ge=0)
    cache_write_tokens: int | None = Field(default=None, ge=0)
    reasoning_tokens: int | None = Field(default=None, ge=0)


class ToolCallFixture(BaseModel):
    """One tool call the model "makes". ``arguments`` is any JSON value; a string is sent verbatim.
    ``raw_arguments`` is the arguments text exactly as a misbehaving model sends it (need not be JSON)."""

    model_config = STRICT

    id: str | None = Field(default=None, min_length=1, max_length=LIMITS["identifier_chars"])
    name: str = Field(min_length=1, max_length=LIMITS["identifier_chars"])
    arguments: Any = Field(default_factory=dict)
    arguments_chunks: list[str] | None = Field(
        default=None, min_length=1, max_length=LIMITS["chunks_per_response"]
    )
    raw_arguments: str | None = None

    def arguments_text(self) -> str:
        if self.raw_arguments is not None:
            return self.raw_arguments
        if isinstance(self.arguments, str):
            return self.arguments
        return orjson.dumps(self.arguments).decode()

    @model_validator(mode="after")
    def _chunks_concatenate(self) -> ToolCallFixture:
        if self.raw_arguments is not None and "arguments" in self.model_fields_set:
            raise ValueError("give either arguments or raw_arguments, not both")
        if self.arguments_chunks is not None and "".join(self.arguments_chunks) != self.arguments_text():
            raise ValueError("arguments_chunks must concatenate to the serialized arguments")
        return self

    @model_serializer(mode="wrap")
    def _drop_unset(self, handler: Any) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if self.raw_arguments is not None:
            data.pop("arguments", None)
        return {k: v for k, v in data.items() if v is not None or k == "arguments"}


class ErrorFixture(OmitsNone):
    """A scripted provider error, rendered in the provider's own envelope."""

    model_config = STRICT

    status: int = Field(ge=400, le=599)
    code: str = Field(min_length=1, max_length=LIMITS["identifier_chars"])
    message: str = Field(min_length=1)
    type: str | None = Field(default=None, min_length=1, max_length=LIMITS["identifier_chars"])
    retry_after: float | None = Field(default=None, ge=0, le=LIMITS["retry_after_seconds"])
    should_retry: bool | None = None


# The kinds a response is exactly one of: each kind an operation is answered by, in the operation
# table's order (llmts/schema/operations/), then ``error`` (which answers any operation) and ``recorded``
# (an upstream's answer, docs/recording.md). Each is a field of ``ResponseFixture``
# (tests/schema/test_fixture_kinds.py).
_RESPONSE_KINDS = (
    *FIXTURE_KINDS,
    "error",
    "recorded",
)

# Kinds that answer an operation other than chat.
_OPERATION_KINDS = frozenset(
    kind for name, kinds in OPERATIONS.items() if name not in CHAT_LIKE for kind in kinds
) - set(OPERATIONS[CHAT])

# --- realistic answers (docs/realistic-answers.md): reasoning, finish reasons, refusals ---------------
FinishReason = Literal["stop", "length", "content_filter", "refusal"]


class ReasoningFixture(BaseModel):
    """What the model "thought" before answering; rendered as each provider's reasoning block."""

    model_config = STRICT

    text: str | None = None
    summary: list[str] | None = Field(
        default=None, min_length=1, max_length=LIMITS["reasoning_summary_parts"]
    )
    tokens: int | None = Field(default=None, ge=0)
    signature: str | None = Field(default=None, min_length=1)
    redacted: bool = False

    @model_validator(mode="after")
    def _has_content(self) -> ReasoningFixture:
        if self.text is None and self.summary is None and not self.redacted:
            raise ValueError("reasoning needs text, summary or redacted: true")
        return self

    @model_serializer(mode="wrap")
    def _drop_unset(self, handler: Any) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        return {k: v for k, v in data.items() if v is not None and (k != "redacted" or v)}


def _check_realistic(fixture: ResponseFixture) -> None:
    """The realistic-answer fields fit the answer they decorate."""
    if fixture.error is not None and (
        fixture.reasoning is not None or fixture.finish_reason is not None or fixture.refusal is not None
    ):
        raise ValueError("reasoning, finish_reason and refusal cannot be combined with an error response")
    if fixture.items is not None and (
        fixture.reasoning is not None or fixture.finish_reason not in (None, "stop")
    ):
        raise ValueError("reasoning and finish_reason cannot be combined with items")
    if fixture.refusal is not None and fixture.finish_reason not in (None, "refusal", "content_filter"):
        raise ValueError("a refusal ends with finish_reason refusal or content_filter")
    kind = fixture.kind
    if kind in _OPERATION_KINDS and (
        fixture.reasoning is not None or fixture.finish_reason is not None or fixture.lenient
    ):
        raise ValueError(f"reasoning, finish_reason and lenient belong to chat answers, not to {kind}")


# ``"generated"`` (PCM16 tones as long as the words) or the PCM16 bytes themselves, base64.
RealtimeAudio = Literal["generated"] | MediaB64
RealtimeTranscript = Annotated[str, Field(min_length=1, max_length=MEDIA_LIMITS["transcript_chars"])]


def _check_spoken(fixture: ResponseFixture) -> None:
    """A realtime spoken answer: audio with the words it says (``text``, or ``transcript`` beside scripted
    bytes), optionally chunked; nothing of the other kinds."""
    others = [
        kind for kind in _RESPONSE_KINDS if kind not in ("text", "audio", "transcript") and fixture._has(kind)
    ]
    if others:
        raise ValueError("realtime audio cannot be combined with " + ", ".join(others))
    if fixture.text is not None and fixture.transcript is not None:
        raise ValueError("realtime audio takes its words from text or from transcript, not both")
    if fixture.audio == "generated" and fixture.text is None and fixture.transcript is None:
        raise ValueError('audio "generated" needs the words to speak in text')


def _check_recorded(fixture: ResponseFixture) -> None:
    """A recorded answer is the upstream's whole answer: nothing decorates it but timing and connection
    faults (in-stream plans need llmts's own frame kinds)."""
    if fixture.reasoning is not None or fixture.finish_reason is not None or fixture.usage is not None:
        raise ValueError("reasoning, finish_reason and usage cannot be combined with recorded")
    plan = fixture.stream_delivery
    if plan is not None and plan.mode not in CONNECTION_MODES:
        raise ValueError(
            f"stream_delivery {plan.mode} cannot be combined with recorded (connection faults can)"
        )
    if fixture.pacing is not None and fixture.recorded is not None and fixture.recorded.frames is None:
        raise ValueError("pacing applies to a recorded stream (frames), not to a whole body")


class ResponseFixture(BaseModel):
    """One scripted answer: exactly one of ``text``, ``json``, ``tool_calls``, ``error``, ``items``,
    ``refusal`` (``text`` may come with ``tool_calls``: a mixed answer)."""

    model_config = STRICT

    text: str | None = None
    json_value: Any = Field(default=None, alias="json")
    tool_calls: list[ToolCallFixture] | None = Field(
        default=None, min_length=1, max_length=LIMITS["tool_calls_per_response"]
    )
    error: ErrorFixture | None = None
    # OpenAI Responses native output items (``llmts.schema.items``).
    items: list[OutputItem] | None = Field(
        default=None, min_length=1, max_length=LIMITS["native_items_per_response"]
    )
    chunks: list[str] | None = Field(default=None, min_length=1, max_length=LIMITS["chunks_per_response"])
    delay_ms: int = Field(default=0, ge=0, le=LIMITS["delay_ms"])
    usage: UsageOverride | None = None
    stream_delivery: StreamDelivery | None = None
    # Realistic answers (docs/realistic-answers.md).
    reasoning: ReasoningFixture | None = None
    finish_reason: FinishReason | None = None
    refusal: str | None = Field(default=None, min_length=1)
    # Misbehaving model: skip the fixture/request fit checks (llmts/runtime/compat.py).
    lenient: bool | None = None
    # How fast a streamed answer arrives (overrides the scenario's and the session's ``pacing``).
    pacing: Pacing | None = None
    # Answers of the operations other than chat (docs/configuration.md, "Operations"). A field per kind is
    # an operation's one registration line (its module in llmts/schema/operations/ declares the rest): a
    # field, not one built from the table, so that users' type checkers see it.
    embeddings: EmbeddingsFixture | None = None
    moderation: ModerationFixtures | None = None
    rerank: RerankFixture | None = None
    # Images, transcripts and speech (docs/images.md, docs/audio.md).
    images: ImagesFixture | None = None
    # A string ``transcript`` and a string ``audio`` (``"generated"`` or base64 PCM16) script a realtime
    # turn's spoken answer (docs/realtime.md); the objects answer transcription and speech requests.
    transcript: TranscriptFixture | RealtimeTranscript | None = None
    audio: AudioFixture | RealtimeAudio | None = None
    # An upstream's answer replayed byte for byte (docs/recording.md).
    recorded: RecordedReply | None = None

    @model_validator(mode="after")
    def _pacing_fits(self) -> ResponseFixture:
        if self.pacing is not None:
            if self.error is not None:
                raise ValueError("pacing cannot be combined with an error response")
            plan = self.stream_delivery
            if plan is not None and plan.mode not in CONNECTION_MODES:
                raise ValueError(f"pacing cannot be combined with stream_delivery {plan.mode}")
        return self

    @property
    def spoken(self) -> bool:
        """A realtime turn's spoken answer: ``audio`` is ``"generated"`` or base64 PCM16."""
        return isinstance(self.audio, str)

    @property
    def kind(self) -> str:
        if self.spoken:
            return "audio"  # its text (or transcript) is what the audio says
        if self.tool_calls is not None:
            return "tool_calls"  # a mixed answer (text then calls) is a tool-call answer
        for kind in _RESPONSE_KINDS:
            if self._has(kind):
                return kind
        raise AssertionError("validated fixtures always have a kind")

    def _has(self, kind: str) -> bool:
        if kind == "json":
            return "json_value" in self.model_fields_set
        return getattr(self, kind) is not None

    @model_validator(mode="after")
    def _exactly_one_kind(self) -> ResponseFixture:
        present = [kind for kind in _RESPONSE_KINDS if self._has(kind)]
        if self.spoken:
            _check_spoken(self)
            present = ["audio"]
        elif isinstance(self.transcript, str):
            raise ValueError('a transcript string is the words of realtime audio: it needs "audio"')
        mixed = present == ["text", "tool_calls"]
        if len(present) != 1 and not mixed:
            found = ", ".join(present) if present else "none"
            raise ValueError(
                "a response needs exactly one of " + ", ".join(_RESPONSE_KINDS) + " "
                "(or text with tool_calls) (found: " + found + ")"
            )
        _check_realistic(self)
        if self.recorded is not None:
            _check_recorded(self)
        if self.chunks is not None and not self.spoken:
            if self.text is None:
                raise ValueError("chunks are only allowed with text")
            if "".join(self.chunks) != self.text:
                raise ValueError("chunks must concatenate to text")
        if self.stream_delivery is not None:
            self._check_delivery_plan(self.stream_delivery)
        if self.items is not None:
            check_items(self.items)
        tool_ids = [call.id for call in self.tool_calls or () if call.id is not None]
        if len(tool_ids) != len(set(tool_ids)):
            raise ValueError("tool call ids must be unique within a response")
        return self

    def _check_delivery_plan(self, plan: StreamDelivery) -> None:
        if self.error is not None:
            raise ValueError("stream_delivery cannot be combined with an error response")
        if plan.mode in CONNECTION_MODES:
            return  # connection faults act before any byte: they fit every successful response
        if self.spoken:
            return  # a realtime turn counts its events at admission (llmts/server/realtime/)
        if self.images is not None or self.transcript is not None or self.audio is not None:
            self._check_media_plan(plan)
            return
        if self.text is None or self.tool_calls is not None or self.reasoning is not None:
            raise ValueError(f"stream_delivery {plan.mode} applies only to plain-text responses")
        content_frames = sum(1 for chunk in (self.chunks or [self.text]) if chunk)
        if content_frames == 0:
            raise ValueError("stream_delivery needs non-empty text")
        if plan.in_stream and plan.after_content_frames > content_frames:
            raise ValueError(
                f"after_content_frames {plan.after_content_frames} is unreachable: "
                f"the response has {content_frames} non-empty content frame(s)"
            )

    def _check_media_plan(self, plan: StreamDelivery) -> None:
        """Media streams count partial images, transcript deltas or audio deltas; an image stream's
        count depends on the request's ``partial_images``, so admission checks it."""
        if self.images is not None or not plan.in_stream:
            return
        if isinstance(self.transcript, TranscriptFixture):
            content_frames = len(transcript_pieces(self.transcript.text))
        else:
            assert isinstance(self.audio, AudioFixture)
            content_frames = -(-b64_decoded_size(self.audio.b64) // AUDIO_DELTA_BYTES)
        if plan.after_content_frames > content_frames:
            raise ValueError(
                f"after_content_frames {plan.after_content_frames} is unreachable: "
                f"the response has {content_frames} content frame(s)"
            )

    @model_serializer(mode="wrap")
    def _serialize(self, handler: Any) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        out = {k: v for k, v in data.items() if v is not None and k not in ("json", "json_value")}
        if self._has("json"):
            out["json"] = self.json_value
        if out.get("delay_ms") == 0:
            del out["delay_ms"]
        return out
