"""Compile a validated ``SessionConfig`` into immutable plans, once, at configure time.

Everything a request needs that does not depend on the request itself (serialized tool arguments, stream
chunks, output token counts, generated tool call ids) is computed here, never per request.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import orjson

from llmts.runtime.native.compile import compile_items
from llmts.runtime.operations import compile_result
from llmts.runtime.signatures import UNSEEDED, SignatureBook, reasoning_thinking, signature_book
from llmts.runtime.tokens import estimate_text_tokens, estimate_tool_call_tokens
from llmts.schema.config import ErrorFixture, ResponseFixture, SessionConfig, UsageOverride
from llmts.schema.determinism import Determinism
from llmts.schema.faults import StreamDelivery
from llmts.schema.fixtures import ReasoningFixture
from llmts.schema.media import decode_b64
from llmts.schema.neutral import NeutralReasoning, NeutralToolCall, RecordedOutput, ScriptedOutput
from llmts.schema.operations import CHAT
from llmts.schema.pacing import Pacing
from llmts.schema.recorded import RecordedReply, RecordedRequest, recorded_output_tokens

__all__ = [
    "ARGUMENT_CHUNK_CHARS",
    "RecordedCandidate",
    "ResponsePlan",
    "ScenarioPlan",
    "SessionPlan",
    "compile_config",
    "compile_response",
]

# Streams split tool-call arguments into pieces of this many characters unless the fixture says how.
ARGUMENT_CHUNK_CHARS = 16


@dataclass(frozen=True, slots=True)
class ResponsePlan:
    index: int
    output: ScriptedOutput | None
    error: ErrorFixture | None
    delay_ms: int
    usage: UsageOverride | None
    stream_delivery: StreamDelivery | None
    # Positions of tool calls whose fixture left ``id`` unset (seeded per request under ``determinism``).
    generated_call_ids: tuple[int, ...] = ()
    # The response's own pacing, else its scenario's (the session default applies at completion).
    pacing: Pacing | None = None


@dataclass(frozen=True, slots=True)
class ScenarioPlan:
    id: str
    model: str | None
    provider: str | None
    terminal_policy: str
    responses: tuple[ResponsePlan, ...]
    # The one operation (``OPERATIONS`` name) whose requests this scenario answers.
    operation: str = CHAT

    def matches(self, provider: str, model: str, operation: str = CHAT) -> bool:
        return (
            self.operation == operation
            and (self.model is None or self.model == model)
            and (self.provider is None or self.provider == provider)
        )


@dataclass(frozen=True, slots=True)
class RecordedCandidate:
    """A recorded request of the configuration (where it is, its provider filter), for miss explanations."""

    where: str
    provider: str | None
    request: RecordedRequest


@dataclass(frozen=True, slots=True)
class SessionPlan:
    config: SessionConfig
    # None: any model name is served (``models`` left out of the configuration).
    models: frozenset[str] | None
    # What model listings show: the listed models, else the ones the configuration names (may be empty).
    listed_models: tuple[str, ...]
    credentials: dict[str, str]
    scenarios: tuple[ScenarioPlan, ...]
    determinism: Determinism | None = None
    # The reasoning signatures this configuration issues (checked when a client passes blocks back).
    signatures: SignatureBook = UNSEEDED
    # Every ``recorded`` fixture's request, in configuration order (docs/recording.md, "Misses").
    recordings: tuple[RecordedCandidate, ...] = ()


def _split(text: str, size: int) -> tuple[str, ...]:
    if not text:
        return ("",)
    return tuple(text[start : start + size] for start in range(0, len(text), size))


def _stable_call_id(scenario_id: str, response_index: int, call_index: int) -> str:
    digest = hashlib.sha256(f"{scenario_id}\x00{response_index}\x00{call_index}".encode()).hexdigest()
    return "call_" + digest[:24]


def _compile_reasoning(reasoning: ReasoningFixture, book: SignatureBook) -> NeutralReasoning:
    text = reasoning.text or ""
    summary = tuple(reasoning.summary or ())
    signature = reasoning.signature
    if signature is None:  # real providers always sign: keyed, so a block passed back can be verified
        signature = book.sign(reasoning_thinking(reasoning))
    tokens = reasoning.tokens
    if tokens is None:
        thought = text or "\n\n".join(summary)
        tokens = estimate_text_tokens(thought) if thought else 0
    return NeutralReasoning(
        text=text, summary=summary, tokens=tokens, signature=signature, redacted=reasoning.redacted
    )


def _compile_output(
    fixture: ResponseFixture, scenario_id: str, index: int, book: SignatureBook
) -> ScriptedOutput | None:
    output = _compile_kind(fixture, scenario_id, index)
    if output is None or output.kind in ("items", "recorded") or output.result is not None:
        return output
    update: dict[str, object] = {}
    output_tokens = output.output_tokens
    if fixture.reasoning is not None:
        reasoning = _compile_reasoning(fixture.reasoning, book)
        update["reasoning"] = reasoning
        output_tokens += reasoning.tokens
    if fixture.refusal is not None:
        update["refusal"] = fixture.refusal
        update["finish_reason"] = fixture.finish_reason or "refusal"
        output_tokens += estimate_text_tokens(fixture.refusal)
    elif fixture.finish_reason is not None:
        update["finish_reason"] = fixture.finish_reason
    if update:
        update["output_tokens"] = output_tokens
    return output.model_copy(update=update) if update else output


def _compile_kind(fixture: ResponseFixture, scenario_id: str, index: int) -> ScriptedOutput | None:
    kind = fixture.kind
    if fixture.spoken:  # a realtime turn's audio: its words are the text (or the transcript)
        words = fixture.text if fixture.text is not None else str(fixture.transcript or "")
        chunks = tuple(fixture.chunks) if fixture.chunks else (words,)
        pcm = None if fixture.audio == "generated" else decode_b64(str(fixture.audio))
        return ScriptedOutput(
            kind="text",
            text=words,
            chunks=chunks,
            output_tokens=estimate_text_tokens(words),
            spoken=True,
            audio_pcm=pcm,
        )
    if kind == "refusal":
        return ScriptedOutput(kind="text")
    if kind == "text":
        text = fixture.text or ""
        chunks = tuple(fixture.chunks) if fixture.chunks else (text,)
        return ScriptedOutput(kind="text", text=text, chunks=chunks, output_tokens=estimate_text_tokens(text))
    if kind == "json":
        text = orjson.dumps(fixture.json_value).decode()
        return ScriptedOutput(
            kind="json", text=text, chunks=(text,), output_tokens=estimate_text_tokens(text)
        )
    if kind == "tool_calls":
        calls = tuple(
            NeutralToolCall(
                id=call.id or _stable_call_id(scenario_id, index, call_index),
                name=call.name,
                arguments=call.arguments_text(),
                arguments_chunks=tuple(call.arguments_chunks)
                if call.arguments_chunks
                else _split(call.arguments_text(), ARGUMENT_CHUNK_CHARS),
            )
            for call_index, call in enumerate(fixture.tool_calls or ())
        )
        # A mixed answer: the text (streamed in its chunks) comes before the calls.
        text = fixture.text or ""
        chunks = tuple(fixture.chunks) if fixture.chunks else ((text,) if text else ())
        return ScriptedOutput(
            kind="tool_calls",
            text=text,
            chunks=chunks,
            tool_calls=calls,
            output_tokens=estimate_tool_call_tokens(calls) + (estimate_text_tokens(text) if text else 0),
        )
    if kind == "items":
        return compile_items(fixture.items or [])
    if kind == "recorded" and fixture.recorded is not None:
        return _compile_recorded(fixture.recorded)
    return compile_result(fixture)  # an operation's answer (embeddings...), or None for an error


def _compile_recorded(recorded: RecordedReply) -> ScriptedOutput:
    body = recorded.body_bytes() if recorded.body is not None else None
    frames = tuple(recorded.frame_bytes()) if recorded.frames is not None else None
    size = len(body) if body is not None else sum(len(frame) for frame in frames or ())
    compiled = RecordedOutput(
        status=recorded.status,
        headers=tuple(recorded.headers),
        body=body,
        frames=frames,
        request=recorded.request,
    )
    return ScriptedOutput(kind="recorded", output_tokens=recorded_output_tokens(size), recorded=compiled)


def _recordings(config: SessionConfig) -> tuple[RecordedCandidate, ...]:
    found = []
    for s_index, scenario in enumerate(config.scenarios):
        scenario_id = scenario.id or f"scenario_{s_index}"
        for r_index, fixture in enumerate(scenario.responses):
            if fixture.recorded is not None and fixture.recorded.request is not None:
                where = f"scenario {scenario_id!r} response {r_index}"
                found.append(RecordedCandidate(where, scenario.provider, fixture.recorded.request))
    for g_index, graph in enumerate(config.conversations):
        graph_id = graph.id or f"conversation_{g_index}"
        for step in graph.steps:
            recorded = step.response.recorded
            if recorded is not None and recorded.request is not None:
                where = f"conversation graph {graph_id!r} step {step.id!r}"
                found.append(RecordedCandidate(where, graph.provider, recorded.request))
    return tuple(found)


def compile_response(
    fixture: ResponseFixture,
    owner_id: str,
    index: int,
    default_pacing: Pacing | None = None,
    book: SignatureBook = UNSEEDED,
) -> ResponsePlan:
    """One response fixture as a plan (scenario queues and conversation steps share this)."""
    output = _compile_output(fixture, owner_id, index, book)
    if fixture.lenient and output is not None:
        output = output.model_copy(update={"lenient": True})
    return ResponsePlan(
        index=index,
        output=output,
        error=fixture.error,
        delay_ms=fixture.delay_ms,
        usage=fixture.usage,
        stream_delivery=fixture.stream_delivery,
        generated_call_ids=tuple(i for i, call in enumerate(fixture.tool_calls or ()) if call.id is None),
        pacing=fixture.pacing or default_pacing,
    )


def compile_config(config: SessionConfig) -> SessionPlan:
    book = signature_book(config)
    scenarios = []
    for s_index, scenario in enumerate(config.scenarios):
        scenario_id = scenario.id or f"scenario_{s_index}"
        responses = tuple(
            compile_response(fixture, scenario_id, r_index, scenario.pacing, book)
            for r_index, fixture in enumerate(scenario.responses)
        )
        scenarios.append(
            ScenarioPlan(
                id=scenario_id,
                model=scenario.model,
                provider=scenario.provider,
                terminal_policy=scenario.terminal_policy,
                responses=responses,
                operation=scenario.served_operation(),
            )
        )
    return SessionPlan(
        config=config,
        models=frozenset(config.models) if config.models is not None else None,
        listed_models=tuple(config.models if config.models is not None else config.named_models()),
        credentials=dict(config.provider_credentials),
        scenarios=tuple(scenarios),
        determinism=config.determinism,
        signatures=book,
        recordings=_recordings(config),
    )
