"""Provider-neutral request and result models.

Provider adapters build a ``NeutralRequest`` from their wire format (already checked by the adapter, so it
is built with ``build`` on the hot path) and render a ``Completion`` back into their wire format.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny

from llmts.schema.construct import build
from llmts.schema.faults import StreamDelivery
from llmts.schema.native import NativeOutput
from llmts.schema.operation_row import OperationResult
from llmts.schema.operations import FIXTURE_KINDS
from llmts.schema.recorded import OptionValue, RecordedRequest

__all__ = [
    "CacheMode",
    "Completion",
    "ExactTokens",
    "NeutralMessage",
    "NeutralReasoning",
    "NeutralRequest",
    "NeutralToolCall",
    "OperationInput",
    "OperationRequest",
    "OutputKind",
    "RecordedOutput",
    "ResponseFormat",
    "ScriptedOutput",
    "ToolChoice",
    "Usage",
    "build",
    "neutral_message",
    "output_memo",
    "reasoning_settings",
    "remember",
]

# What a compiled answer is: every fixture kind of the operation table (llmts/schema/operations/; a
# refusal is kind ``text``), and ``recorded``. Derived from the table, so to a type checker it is a ``str``.
_OUTPUT_KINDS = (*(kind for kind in FIXTURE_KINDS if kind != "refusal"), "recorded")
if TYPE_CHECKING:
    OutputKind = str
else:
    OutputKind = Literal[_OUTPUT_KINDS]

# How the provider caches prompts: not at all, implicitly by repeated prefix (OpenAI, Gemini), or at
# explicit breakpoints the request marks (Anthropic ``cache_control``).
CacheMode = Literal["none", "implicit", "explicit"]
ResponseFormat = Literal["text", "json_object", "json_schema"]

_FROZEN = ConfigDict(defer_build=True, frozen=True)


class NeutralToolCall(BaseModel):
    model_config = _FROZEN

    id: str
    name: str
    arguments: str
    # How a stream splits ``arguments``; concatenates to it.
    arguments_chunks: tuple[str, ...] = ()


class NeutralMessage(BaseModel):
    model_config = _FROZEN

    role: Literal["system", "developer", "user", "assistant", "tool"]
    text: str = ""
    tool_calls: tuple[NeutralToolCall, ...] = ()
    tool_call_id: str | None = None


def neutral_message(
    role: str, text: str = "", tool_calls: tuple[NeutralToolCall, ...] = (), tool_call_id: str | None = None
) -> NeutralMessage:
    """A message built without validation (adapters check roles and types while parsing)."""
    return build(NeutralMessage, role=role, text=text, tool_calls=tool_calls, tool_call_id=tool_call_id)


_SETTING_KEYS = 16
_SETTING_CHARS = 128


def reasoning_settings(raw: Any) -> dict[str, Any] | None:
    """A request's reasoning settings object for the journal: its scalar fields only (at most 16, strings
    cut at 128 characters), so a large or nested object cannot grow the journal."""
    if not isinstance(raw, dict) or not raw:
        return None
    kept: dict[str, Any] = {}
    for key, value in raw.items():
        if len(kept) == _SETTING_KEYS:
            break
        if isinstance(value, str):
            kept[str(key)[:_SETTING_CHARS]] = value[:_SETTING_CHARS]
        elif value is None or isinstance(value, (bool, int, float)):
            kept[str(key)[:_SETTING_CHARS]] = value
    return kept


class ToolChoice(BaseModel):
    """``auto`` | ``none`` | ``required``, or ``function`` with the forced ``name``."""

    model_config = _FROZEN

    mode: Literal["auto", "none", "required", "function"] = "auto"
    name: str | None = None


# Not frozen (nothing changes it after construction): one is built per request, and a frozen dataclass
# costs about four times as much to construct (docs/architecture.md, "The server's hot path").
@dataclass(slots=True)
class ExactTokens:
    """Token counts an adapter computed with the model's own tokenizer (docs/tokens.md).

    ``segments`` are the prompt's input tokens per prompt-cache segment: the preamble (tool definitions
    and the request's fixed overhead), then each message; ``count_text`` counts an answer's text with the
    same encoding, named by ``encoding``."""

    segments: tuple[int, ...]
    count_text: Callable[[str], int]
    encoding: str

    @property
    def input_tokens(self) -> int:
        return sum(self.segments)


class NeutralRequest(BaseModel):
    model_config = _FROZEN

    provider: str
    operation: str
    model: str
    messages: tuple[NeutralMessage, ...]
    tool_names: tuple[str, ...] = ()
    tool_choice: ToolChoice = ToolChoice()
    response_format: ResponseFormat = "text"
    stream: bool = False
    # The client asked for a usage report at the end of a stream (OpenAI ``stream_options.include_usage``).
    stream_include_usage: bool = False
    # Prompt material before the messages (tool declarations, system blocks...) as text: it counts towards
    # input tokens and is the first segment of the prompt-cache prefix.
    preamble: str = ""
    # The system prompt / instructions a provider sends outside ``messages`` (Anthropic ``system``, Gemini
    # ``systemInstruction``); OpenAI surfaces carry theirs as system/developer messages.
    system: str = ""
    cache_mode: CacheMode = "none"
    # Explicit mode: cache breakpoints as segment indexes (0 = preamble, 1 + i = messages[i]).
    cache_breakpoints: tuple[int, ...] = ()
    # How many answers (choices) the request asks for (a wire's ``n``, at most 8), else 1.
    choices: int = 1
    # The request's reasoning settings as sent (OpenAI ``reasoning``/``reasoning_effort``, Anthropic
    # ``thinking``, Gemini ``thinkingConfig``), scalars only; journaled as ``reasoning_settings``.
    reasoning_settings: dict[str, Any] | None = None
    # Exact counts for a model whose tokenizer llmts has (OpenAI's); None: the estimates of
    # runtime/tokens.py. Never serialised (it holds the counting function).
    exact_tokens: ExactTokens | None = Field(default=None, exclude=True)

    def latest_user_text(self) -> str:
        for message in reversed(self.messages):
            if message.role == "user":
                return message.text
        return ""


class OperationInput:
    """The input of one operation other than chat: each operation's is a frozen slotted dataclass
    subclass beside its unit (``llmts/runtime/operations/<operation>.py``) holding only the fields that
    operation reads, already checked and bounded by the adapter (docs/architecture.md, "Operations").

    The base names what recordings and replays compare (docs/recording.md): ``texts`` (kept as the
    recorded ``inputs``), ``query_text``, ``uploaded`` (kept as its SHA-256) and ``options``, the fields
    named by ``recorded_options`` whose value differs from their default."""

    __slots__ = ()
    # The option fields a recording keeps when they differ from their defaults, in this order.
    recorded_options: ClassVar[tuple[str, ...]] = ()

    def texts(self) -> tuple[str, ...]:
        """The request's texts in request order (the inputs, the documents, the prompt or the text)."""
        raise NotImplementedError

    def query_text(self) -> str:
        return ""

    def uploaded(self) -> bytes:
        return b""

    def options(self) -> dict[str, OptionValue]:
        fields = self.__dataclass_fields__  # type: ignore[attr-defined]
        options: dict[str, OptionValue] = {}
        for name in self.recorded_options:
            value = getattr(self, name)
            if value != fields[name].default:
                options[name] = list(value) if isinstance(value, tuple) else value
        return options


class OperationRequest(NeutralRequest):
    """A request of an operation other than chat: ``operation`` is its ``OPERATIONS`` name, ``messages``
    is empty, and ``input`` is that operation's own input type (docs/architecture.md, "Operations")."""

    model_config = ConfigDict(defer_build=True, frozen=True, arbitrary_types_allowed=True)

    input: OperationInput


class Usage(BaseModel):
    model_config = _FROZEN

    input_tokens: int
    output_tokens: int
    # Of input_tokens: read from the prompt cache, and written to it (Anthropic's cache creation).
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


class NeutralReasoning(BaseModel):
    """A fixture's reasoning, compiled: what each provider renders as its reasoning block."""

    model_config = _FROZEN

    text: str = ""  # the reasoning itself, as the fixture gave it
    summary: tuple[str, ...] = ()
    tokens: int = 0
    # The fixture's signature, or one derived from the reasoning at configure time (never empty).
    signature: str = ""
    redacted: bool = False

    def thinking(self) -> str:
        """The reasoning text, or the summary's parts when only those were given."""
        return self.text or "\n\n".join(self.summary)


class RecordedOutput(BaseModel):
    """A ``recorded`` fixture, compiled: the upstream's answer as bytes, written back unchanged."""

    model_config = _FROZEN

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes | None = None
    frames: tuple[bytes, ...] | None = None
    request: RecordedRequest | None = None


class ScriptedOutput(BaseModel):
    """A successful fixture, compiled once at configure time.

    ``kind`` ``tool_calls`` may carry ``text`` too (a mixed answer: the text comes first); a refusal is
    kind ``text`` with ``refusal`` set and no text.
    """

    model_config = _FROZEN

    kind: OutputKind
    text: str = ""
    chunks: tuple[str, ...] = ()
    tool_calls: tuple[NeutralToolCall, ...] = ()
    output_tokens: int = 0
    # ``items`` (OpenAI Responses native output): the compiled items; ``text`` is their messages' text.
    native: NativeOutput | None = None
    reasoning: NeutralReasoning | None = None
    # ``stop`` | ``length`` | ``content_filter`` | ``refusal``; each provider maps it to its own value.
    finish_reason: str = "stop"
    refusal: str | None = None
    # A misbehaving model: the fixture/request fit checks are skipped (``lenient`` fixtures).
    lenient: bool = False
    # The answer of an operation other than chat (kinds ``embeddings``, ``images``, ``rerank``...).
    result: SerializeAsAny[OperationResult] | None = None  # dumped as its own model, not as the base
    # ``recorded`` (docs/recording.md): the upstream's answer, written as is instead of rendered.
    recorded: RecordedOutput | None = None
    # A realtime turn's spoken answer (docs/realtime.md): ``spoken`` the fixture asked for audio,
    # ``audio_pcm`` its scripted PCM16 bytes (None: generated from ``text`` when sent).
    spoken: bool = False
    audio_pcm: bytes | None = None

    @cached_property
    def render_memo(self) -> dict[Hashable, tuple[weakref.ref[ScriptedOutput], Any]]:
        """What renderers derived from this output alone (a stream's frames after the per-request head),
        kept so a fixture answered many times is serialized once (docs/architecture.md, "The server's hot
        path"). Each value names the output it was derived from: a ``model_copy`` shares this dict, so a
        renderer uses an entry only when it names the output in hand (``output_memo``). The name is a
        weak reference: a strong one would make every output a reference cycle, and a one-off answer
        (echo, generated, a copy with fresh call ids) would keep its text and rendered bytes until the
        garbage collector's next full pass instead of until its response is over."""
        return {}


def output_memo(output: ScriptedOutput, key: Hashable) -> Any:
    """The memo ``key`` of ``output`` (None when absent or derived from a copy of it)."""
    entry = output.render_memo.get(key)
    return entry[1] if entry is not None and entry[0]() is output else None


def remember(output: ScriptedOutput, key: Hashable, value: Any) -> None:
    """Keep ``value`` as ``output``'s memo ``key``; keys are a small fixed set per renderer."""
    output.render_memo[key] = (weakref.ref(output), value)


class Completion(BaseModel):
    """What the runtime decided for one request: the output, its usage and its identity."""

    model_config = _FROZEN

    output: ScriptedOutput
    usage: Usage
    response_id: str
    created_at: int
    scenario_id: str | None = None
    response_index: int | None = None
    # The response's delivery plan, for the transport to apply (already checked against the request).
    stream_delivery: StreamDelivery | None = None
    # Choices 1..n-1 of an OpenAI Chat ``n`` request (``output`` is choice 0); empty otherwise.
    more_choices: tuple[ScriptedOutput, ...] = ()
