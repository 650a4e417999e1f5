"""A fluent builder for ``SessionConfig``.

    config = (
        ConfigBuilder()
        .models("gpt-4.1-mini")
        .credentials(openai="sk-test")
        .scenario("greet")
        .text("Hello there.", chunks=["Hello", " there."])
        .tool_call("get_weather", {"city": "Paris"}, id="call_1")
        .error(429, "rate_limit_exceeded", "Slow down", retry_after=2)
        .build()
    )

Scenario methods return the scenario builder; ``.scenario(...)`` and ``.build()`` are available on both
so a chain reads top to bottom. The result always serializes to the public configuration JSON.

Conversation graphs (docs/conversations.md):

    config = (
        ConfigBuilder()
        .conversation("approval")
        .step("ask").when(latest_user_equals="Start", turn=1).text("Approve?").then("approve", "cancel")
        .step("approve").when(latest_user_equals="Approve", turn=2).text("Approved").complete()
        .step("cancel").when(latest_user_equals="Cancel", turn=2).text("Cancelled").complete()
        .build()
    )

Step methods return the step builder; ``.step(...)``, ``.conversation(...)``, ``.scenario(...)`` and
``.build()`` are available on it so one chain reads top to bottom. Everything serializes to the
configuration JSON (``to_dict``) and is validated by ``build()``; a step's ``when`` is validated as it is
added, by building the ``StepWhen`` model.
"""

from __future__ import annotations

import base64
from typing import Any

from llmts.schema.a2a_builder import A2aAgentBuilder
from llmts.schema.config import SessionConfig
from llmts.schema.conversations import StepWhen
from llmts.schema.fixtures import TerminalPolicy
from llmts.schema.mcp_builder import McpServerBuilder
from llmts.schema.operations import Operation
from llmts.schema.predicates import PREDICATES_BY_NAME
from llmts.schema.response_builder import ResponseMethods
from llmts.schema.validation import parse_part, parse_session_config

__all__ = ["ChildBuilder", "ConfigBuilder", "ConversationBuilder", "ScenarioBuilder", "StepBuilder"]

_UNSET: Any = object()


class ChildBuilder:
    """A part of a ``ConfigBuilder`` (scenario, conversation): chains on to siblings and builds the whole."""

    def __init__(self, parent: ConfigBuilder, **fields: Any) -> None:
        self._parent = parent
        self._fields = {key: value for key, value in fields.items() if value is not None}

    @property
    def config(self) -> ConfigBuilder:
        """The configuration this part belongs to."""
        return self._parent

    def conversation(self, id: str | None = None, **fields: Any) -> ConversationBuilder:
        return self._parent.conversation(id, **fields)

    def scenario(self, id: str | None = None, **fields: Any) -> ScenarioBuilder:
        return self._parent.scenario(id, **fields)

    def a2a_agent(self, name: str, **fields: Any) -> A2aAgentBuilder[ConfigBuilder]:
        return self._parent.a2a_agent(name, **fields)

    def mcp_server(self, name: str, **fields: Any) -> McpServerBuilder[ConfigBuilder]:
        return self._parent.mcp_server(name, **fields)

    def build(self) -> SessionConfig:
        return self._parent.build()


class ConfigBuilder:
    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        self._scenarios: list[ScenarioBuilder] = []
        self._conversations: list[ConversationBuilder] = []
        self._a2a_agents: list[A2aAgentBuilder[ConfigBuilder]] = []
        self._mcp_servers: list[McpServerBuilder[ConfigBuilder]] = []

    def models(self, *model_ids: str) -> ConfigBuilder:
        self._data["models"] = list(model_ids)
        return self

    def journal(
        self,
        *,
        max_entries: int | None = None,
        max_bytes: int | None = None,
        preview_bytes: int | None = None,
    ) -> ConfigBuilder:
        """Request journal retention (unset keys keep their defaults: 500 entries, 16 MiB, 64 KiB)."""
        limits = {"max_entries": max_entries, "max_bytes": max_bytes, "preview_bytes": preview_bytes}
        self._data["journal"] = {key: value for key, value in limits.items() if value is not None}
        return self

    def determinism(self, seed: str, fixed_utc: str | None = None) -> ConfigBuilder:
        """Seeded wire ids and, with ``fixed_utc`` (ISO 8601: ``2026-01-01T00:00:00Z``), a fixed clock."""
        self._data["determinism"] = {"seed": seed, **({"fixed_utc": fixed_utc} if fixed_utc else {})}
        return self

    def credentials(self, **by_provider: str) -> ConfigBuilder:
        """Provider credentials; use ``azure_openai=`` for the ``azure-openai`` namespace."""
        creds = self._data.setdefault("provider_credentials", {})
        for key, value in by_provider.items():
            creds[key.replace("_", "-")] = value
        return self

    def scenario(
        self,
        id: str | None = None,
        *,
        model: str | None = None,
        provider: str | None = None,
        terminal_policy: TerminalPolicy = "reject",
        operation: Operation | None = None,
    ) -> ScenarioBuilder:
        builder = ScenarioBuilder(
            self, id=id, model=model, provider=provider, terminal_policy=terminal_policy, operation=operation
        )
        self._scenarios.append(builder)
        return builder

    def conversation(
        self,
        id: str | None = None,
        *,
        model: str | None = None,
        provider: str | None = None,
        start_at: str | None = None,
        terminal_policy: TerminalPolicy | None = None,
        max_steps: int | None = None,
        replay_successful_requests: bool | None = None,
    ) -> ConversationBuilder:
        """A conversation graph (docs/conversations.md); add steps with ``.step(id)``."""
        builder = ConversationBuilder(
            self,
            id=id,
            model=model,
            provider=provider,
            start_at=start_at,
            terminal_policy=terminal_policy,
            max_steps=max_steps,
            replay_successful_requests=replay_successful_requests,
        )
        self._conversations.append(builder)
        return builder

    def conversation_capacity(
        self, *, max_conversations: int | None = None, max_bytes: int | None = None
    ) -> ConfigBuilder:
        capacity = {"max_conversations": max_conversations, "max_bytes": max_bytes}
        self._data["conversation_capacity"] = {k: v for k, v in capacity.items() if v is not None}
        return self

    def price(
        self,
        model: str,
        *,
        input_per_mtok: float,
        output_per_mtok: float,
        cached_input_per_mtok: float | None = None,
        cache_write_per_mtok: float | None = None,
    ) -> ConfigBuilder:
        """A model's prices in USD per million tokens, over the list prices (configuration.md "pricing")."""
        price = {
            "input_per_mtok": input_per_mtok,
            "output_per_mtok": output_per_mtok,
            "cached_input_per_mtok": cached_input_per_mtok,
            "cache_write_per_mtok": cache_write_per_mtok,
        }
        self._data.setdefault("pricing", {})[model] = {k: v for k, v in price.items() if v is not None}
        return self

    def budget(
        self, *, max_cost_usd: float | None = None, max_total_tokens: int | None = None
    ) -> ConfigBuilder:
        """Caps on the session's running cost and tokens (docs/configuration.md "budget")."""
        caps = {"max_cost_usd": max_cost_usd, "max_total_tokens": max_total_tokens}
        self._data["budget"] = {k: v for k, v in caps.items() if v is not None}
        return self

    def pacing(
        self, *, ttft_ms: int = 0, tokens_per_second: float | None = None, jitter: float = 0.0
    ) -> ConfigBuilder:
        """Session default pacing of streamed answers (docs/realistic-answers.md "Pacing")."""
        pacing: dict[str, Any] = {"ttft_ms": ttft_ms, "jitter": jitter}
        if tokens_per_second is not None:
            pacing["tokens_per_second"] = tokens_per_second
        self._data["pacing"] = pacing
        return self

    def rate_limits(
        self,
        *,
        requests_per_minute: int | None = None,
        tokens_per_minute: int | None = None,
        window_seconds: float | None = None,
        input_tokens_per_minute: int | None = None,
        output_tokens_per_minute: int | None = None,
        requests_per_day: int | None = None,
        overloaded: dict[str, float] | None = None,
    ) -> ConfigBuilder:
        """The session's quotas and the scripted 529 ``overloaded`` condition
        (docs/realistic-answers.md "Rate limits")."""
        limits = {
            "requests_per_minute": requests_per_minute,
            "tokens_per_minute": tokens_per_minute,
            "input_tokens_per_minute": input_tokens_per_minute,
            "output_tokens_per_minute": output_tokens_per_minute,
            "requests_per_day": requests_per_day,
            "window_seconds": window_seconds,
            "overloaded": overloaded,
        }
        self._data["rate_limits"] = {k: v for k, v in limits.items() if v is not None}
        return self

    def a2a_agent(
        self,
        name: str,
        *,
        description: str | None = None,
        version: str | None = None,
        skills: list[dict[str, Any]] | None = None,
        terminal_policy: TerminalPolicy | None = None,
        streaming: bool | None = None,
        push_notifications: bool | None = None,
    ) -> A2aAgentBuilder[ConfigBuilder]:
        """A scripted A2A agent at ``/a2a/{name}`` (docs/a2a.md); add its responses with ``.text(...)``,
        ``.task(...)``, ``.error(...)``."""
        builder = A2aAgentBuilder(
            self,
            name,
            description=description,
            version=version,
            skills=skills,
            terminal_policy=terminal_policy,
            streaming=streaming,
            push_notifications=push_notifications,
        )
        self._a2a_agents.append(builder)
        return builder

    def mcp_server(
        self,
        name: str,
        *,
        instructions: str | None = None,
        version: str | None = None,
        page_size: int | None = None,
        answer_timeout_ms: int | None = None,
    ) -> McpServerBuilder[ConfigBuilder]:
        """A scripted MCP server at ``/mcp/{name}`` (docs/mcp.md); add ``.tool(...)``, ``.resource(...)``,
        ``.prompt(...)``."""
        builder = McpServerBuilder(
            self,
            name,
            instructions=instructions,
            version=version,
            page_size=page_size,
            answer_timeout_ms=answer_timeout_ms,
        )
        self._mcp_servers.append(builder)
        return builder

    def to_dict(self) -> dict[str, Any]:
        data = dict(self._data)
        if self._scenarios:
            data["scenarios"] = [scenario.to_dict() for scenario in self._scenarios]
        if self._conversations:
            data["conversations"] = [graph.to_dict() for graph in self._conversations]
        if self._a2a_agents:
            data["a2a_agents"] = [agent.to_dict() for agent in self._a2a_agents]
        if self._mcp_servers:
            data["mcp_servers"] = [server.to_dict() for server in self._mcp_servers]
        return data

    def build(self) -> SessionConfig:
        return parse_session_config(self.to_dict())


class ScenarioBuilder(ChildBuilder, ResponseMethods):
    """A scenario: each response method appends an answer to its queue (``ResponseMethods`` has the chat
    answers and errors; the other operations' answers are here)."""

    def __init__(self, parent: ConfigBuilder, **fields: Any) -> None:
        super().__init__(parent, **fields)
        self._responses: list[dict[str, Any]] = []

    def _respond(self, fixture: dict[str, Any]) -> ScenarioBuilder:
        self._responses.append(fixture)
        return self

    def _add(self, response: dict[str, Any], delay_ms: int, usage: dict[str, int] | None) -> ScenarioBuilder:
        return self._answer(response, delay_ms, usage)

    def items(self, *items: Any, delay_ms: int = 0, usage: dict[str, int] | None = None) -> ScenarioBuilder:
        """OpenAI Responses native output items (docs/native-tools.md), each a dict with ``kind`` or a
        typed model from ``llmts.schema.items`` (``FileSearchItem``, ``MessageItem``...)."""
        dumped = [dict(item) if isinstance(item, dict) else item.model_dump(mode="json") for item in items]
        return self._add({"items": dumped}, delay_ms, usage)

    def embeddings(self, *vectors: list[float], delay_ms: int = 0) -> ScenarioBuilder:
        """The vectors of one embeddings request, one per input (docs/embeddings.md); the scenario
        then serves embeddings requests."""
        return self._add({"embeddings": [list(vector) for vector in vectors]}, delay_ms, None)

    def moderation(
        self, *categories: str, scores: dict[str, float] | None = None, delay_ms: int = 0
    ) -> ScenarioBuilder:
        """A moderation verdict for every input (docs/moderation.md): the categories that apply (none:
        not flagged) and optional scores."""
        verdict: dict[str, Any] = {"categories": dict.fromkeys(categories, True)}
        if scores:
            verdict["category_scores"] = dict(scores)
        return self._add({"moderation": verdict}, delay_ms, None)

    def rerank(self, *hits: tuple[int, float], delay_ms: int = 0) -> ScenarioBuilder:
        """A ranking (docs/rerank.md): ``(document index, relevance score)`` pairs, most relevant first."""
        ranked = [{"index": index, "relevance_score": score} for index, score in hits]
        return self._add({"rerank": ranked}, delay_ms, None)

    def images(
        self, *images: bytes | str, revised_prompt: str | None = None, delay_ms: int = 0
    ) -> ScenarioBuilder:
        """The images of one image request (docs/images.md), one per image asked for (``n``): bytes
        (sent base64) or an ``http(s)`` URL; the scenario then serves image requests."""
        entries: list[dict[str, Any]] = [
            {"url": image} if isinstance(image, str) else {"b64_json": base64.b64encode(image).decode()}
            for image in images
        ]
        if revised_prompt is not None:
            for entry in entries:
                entry["revised_prompt"] = revised_prompt
        return self._add({"images": entries}, delay_ms, None)

    def transcript(
        self,
        text: str,
        *,
        language: str | None = None,
        duration: float | None = None,
        segments: list[tuple[float, float, str]] | None = None,
        words: list[tuple[float, float, str]] | None = None,
        delay_ms: int = 0,
    ) -> ScenarioBuilder:
        """A transcription or translation (docs/audio.md); timings as ``(start, end, text)``. Name the
        scenario's operation (``transcription`` or ``translation``): a transcript answers both."""
        transcript: dict[str, Any] = {"text": text}
        if language is not None:
            transcript["language"] = language
        if duration is not None:
            transcript["duration"] = duration
        if segments is not None:
            transcript["segments"] = [{"start": a, "end": b, "text": t} for a, b, t in segments]
        if words is not None:
            transcript["words"] = [{"start": a, "end": b, "word": t} for a, b, t in words]
        return self._add({"transcript": transcript}, delay_ms, None)

    def audio(self, data: bytes, audio_format: str, *, delay_ms: int = 0) -> ScenarioBuilder:
        """Speech (docs/audio.md): the exact bytes of audio in ``audio_format`` (``mp3``, ``wav``...)."""
        return self._add(
            {"audio": {"format": audio_format, "b64": base64.b64encode(data).decode()}}, delay_ms, None
        )

    def to_dict(self) -> dict[str, Any]:
        return {**self._fields, "responses": list(self._responses)}


class ConversationBuilder(ChildBuilder):
    def __init__(self, parent: ConfigBuilder, **fields: Any) -> None:
        super().__init__(parent, **fields)
        self._steps: list[StepBuilder] = []

    def step(self, id: str) -> StepBuilder:
        """Add a step (the first one is the start unless ``start_at`` names another)."""
        builder = StepBuilder(self, id)
        self._steps.append(builder)
        return builder

    def start_at(self, step_id: str) -> ConversationBuilder:
        self._fields["start_at"] = step_id
        return self

    def to_dict(self) -> dict[str, Any]:
        return {**self._fields, "steps": [step.to_dict() for step in self._steps]}


class StepBuilder(ResponseMethods):
    """A conversation step: its predicates, its one response (``ResponseMethods``) and where it leads."""

    def __init__(self, graph: ConversationBuilder, id: str) -> None:
        self._graph = graph
        self._id = id
        self._when: dict[str, Any] = {}
        self._response: dict[str, Any] | None = None
        self._then: list[str] | None = None
        self._complete = False

    # --- predicates (all must pass) -------------------------------------------------------------------

    def when(self, *, call_id: str | None = None, **predicates: Any) -> StepBuilder:
        """Predicates by their configuration names (every key of the predicate table,
        ``llmts.schema.predicates.PREDICATES``). Object-valued ones also take short forms: a tuple in
        field order (``latest_json=("$.a", 1)``) or their first field alone (``tool_result="get_weather"``,
        with ``call_id=`` beside it). Checked at once by building the ``StepWhen`` model."""
        merged = dict(self._when)
        for name, value in predicates.items():
            spec = PREDICATES_BY_NAME.get(name)
            merged[name] = spec.from_builder(value) if spec is not None else value
        if call_id is not None:
            tool_result = merged.get("tool_result")
            merged["tool_result"] = {
                **(tool_result if isinstance(tool_result, dict) else {}),
                "call_id": call_id,
            }
        parse_part(StepWhen, merged, "when")
        self._when = merged
        return self

    def when_latest_role(self, role: str) -> StepBuilder:
        return self.when(latest_role=role)

    def when_latest_text_contains(self, text: str) -> StepBuilder:
        return self.when(latest_text_contains=text)

    def when_latest_user_contains(self, text: str) -> StepBuilder:
        return self.when(latest_user_contains=text)

    def when_latest_user_equals(self, text: str) -> StepBuilder:
        return self.when(latest_user_equals=text)

    def when_turn(self, turn: int) -> StepBuilder:
        return self.when(turn=turn)

    def when_tool_result(
        self, name: str, call_id: str | None = None, *, arguments: Any = _UNSET
    ) -> StepBuilder:
        """The latest message is a result for a call of ``name`` (``call_id``); ``arguments``: that call's
        arguments, compared structurally (``tool_arguments_json``)."""
        if arguments is _UNSET:
            return self.when(tool_result=(name, call_id))
        return self.when(tool_result=(name, call_id), tool_arguments_json=arguments)

    def when_latest_json(self, path: str, expected_json: Any) -> StepBuilder:
        return self.when(latest_json=(path, expected_json))

    def when_latest_json_value(self, path: str, value: Any) -> StepBuilder:
        return self.when(latest_json_value=(path, value))

    # --- the response (exactly one; the methods are ResponseMethods') ------------------------------

    def _respond(self, fixture: dict[str, Any]) -> StepBuilder:
        if self._response is not None:
            raise ValueError(f"step {self._id!r} already has a response")
        self._response = fixture
        return self

    # --- where the graph goes next -------------------------------------------------------------------

    def then(self, *step_ids: str) -> StepBuilder:
        """Ordered alternatives: the first whose predicates match the next request runs."""
        self._then = list(step_ids)
        return self

    def complete(self) -> StepBuilder:
        self._complete = True
        return self

    # --- chaining ------------------------------------------------------------------------------------

    @property
    def graph(self) -> ConversationBuilder:
        return self._graph

    @property
    def config(self) -> ConfigBuilder:
        return self._graph.config

    def step(self, id: str) -> StepBuilder:
        return self._graph.step(id)

    def conversation(self, id: str | None = None, **fields: Any) -> ConversationBuilder:
        return self._graph.conversation(id, **fields)

    def scenario(self, id: str | None = None, **fields: Any) -> ScenarioBuilder:
        return self._graph.scenario(id, **fields)

    def build(self) -> SessionConfig:
        return self._graph.build()

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self._id}
        if self._when:
            data["when"] = dict(self._when)
        if self._response is not None:
            data["response"] = self._response
        if self._then is not None:
            data["then"] = list(self._then)
        if self._complete:
            data["complete"] = True
        return data
