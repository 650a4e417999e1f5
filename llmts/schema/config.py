"""The session configuration JSON (docs/configuration.md), as pydantic models.

Everything here is validated once, at configure time; the runtime compiles it into precomputed plans so
that nothing is re-validated per request. Every list has a documented bound (see ``LIMITS``).
"""

from __future__ import annotations

from typing import Any

from pydantic import (
    BaseModel,
    Field,
    field_validator,
    model_serializer,
    model_validator,
)

from llmts.catalog import registry as catalog
from llmts.schema.a2a import A2aAgent
from llmts.schema.conversations import (
    ConversationCapacity,
    ConversationGraph,
    check_conversation_references,
)
from llmts.schema.determinism import Determinism
from llmts.schema.economics import Budget, ModelPrice
from llmts.schema.faults import MODES, SSE_MODES, WEBSOCKET_MODES
from llmts.schema.fixtures import (
    LIMITS,
    PROVIDER_NAMESPACES,
    ErrorFixture,
    ProviderNamespace,
    RealtimeTranscript,
    ResponseFixture,
    TerminalPolicy,
    ToolCallFixture,
    UsageOverride,
)
from llmts.schema.journal import JournalSettings
from llmts.schema.mcp import McpServer, check_unique_names
from llmts.schema.model_base import STRICT, OmitsNone
from llmts.schema.operations import CHAT, OPERATIONS, REALTIME, Operation
from llmts.schema.pacing import Pacing, RateLimits
from llmts.schema.recorded import RecordingSettings, check_upstreams

__all__ = [
    "LIMITS",
    "PROVIDER_NAMESPACES",
    "ErrorFixture",
    "ProviderNamespace",
    "RealtimeScript",
    "ResponseFixture",
    "Scenario",
    "SessionConfig",
    "ToolCallFixture",
    "UsageOverride",
]


class Scenario(OmitsNone):
    """A queue of responses, consumed in order by the requests it matches."""

    model_config = STRICT

    id: str | None = Field(default=None, min_length=1, max_length=LIMITS["identifier_chars"])
    model: str | None = Field(default=None, min_length=1, max_length=LIMITS["model_id_chars"])
    provider: ProviderNamespace | None = None
    terminal_policy: TerminalPolicy = "reject"
    responses: list[ResponseFixture] = Field(min_length=1, max_length=LIMITS["responses_per_scenario"])
    # Pacing of this scenario's streamed answers unless a response sets its own.
    pacing: Pacing | None = None
    # The one operation whose requests this scenario answers (left out: the one its fixtures imply,
    # else chat; llmts/schema/operations/).
    operation: Operation | None = None

    @model_validator(mode="after")
    def _one_operation(self) -> Scenario:
        operation = self.served_operation()
        check_channel(operation, self.responses)
        if operation == REALTIME and self.pacing is not None:
            raise ValueError(
                "pacing does not apply to realtime turns (use delay_ms or a stream_delivery plan)"
            )
        return self

    def served_operation(self) -> str:
        """The operation this scenario answers: its ``operation``, else the one its fixtures imply."""
        # An error, or a recorded answer (docs/recording.md), answers any operation.
        kinds = {response.kind for response in self.responses} - {"error", "recorded"}
        if self.operation is not None:
            accepted = OPERATIONS[self.operation]
            for index, response in enumerate(self.responses):
                if response.kind not in ("error", "recorded") and response.kind not in accepted:
                    raise ValueError(
                        f"responses[{index}] is a {response.kind} answer, which does not answer "
                        f"{self.operation} requests (expected: {', '.join(accepted)} or error)"
                    )
            return self.operation
        if not kinds:
            return CHAT
        # A realtime scenario names its operation: its kinds are chat's (and speech's) too.
        fitting = [
            name for name, accepted in OPERATIONS.items() if name != REALTIME and kinds <= set(accepted)
        ]
        if not fitting:
            raise ValueError(
                "the responses answer different operations (" + ", ".join(sorted(kinds)) + "); "
                "a scenario serves one operation"
            )
        if len(fitting) > 1:
            raise ValueError(
                "the responses answer several operations (" + ", ".join(fitting) + "); name one in operation"
            )
        return fitting[0]


def check_channel(operation: str, responses: list[ResponseFixture]) -> None:
    """Realtime turns are answered over a WebSocket, every other operation over HTTP: spoken audio and the
    WebSocket fault modes belong to realtime scenarios, the HTTP-only modes and media objects to the rest."""
    realtime = operation == REALTIME
    for index, response in enumerate(responses):
        if realtime and response.pacing is not None:
            raise ValueError(
                f"responses[{index}]: pacing does not apply to realtime turns "
                "(use delay_ms or a stream_delivery plan)"
            )
        if response.spoken and not realtime:
            raise ValueError(
                f'responses[{index}]: audio as a string ("generated" or base64 PCM16) answers realtime '
                'turns; set "operation": "realtime"'
            )
        if realtime and response.kind == "audio" and not response.spoken:
            raise ValueError(
                f"responses[{index}]: a realtime answer's audio is "
                '"generated" or base64 PCM16, not an object'
            )
        plan = response.stream_delivery
        if plan is None:
            continue
        fits = WEBSOCKET_MODES if realtime else SSE_MODES
        if plan.mode not in fits:
            where = "realtime turns (WebSocket)" if realtime else "HTTP answers"
            raise ValueError(
                f"responses[{index}]: stream_delivery {plan.mode} does not apply to {where}; "
                f"use one of {', '.join(m for m in MODES if m in fits)}"
            )


class RealtimeScript(BaseModel):
    """What a session scripts about its realtime connections beyond the model's turns (docs/realtime.md)."""

    model_config = STRICT

    # What the user said in each committed audio input of a connection, in order (OpenAI's input audio
    # transcription and the user item's transcript; Gemini's ``inputTranscription``). Past the end, llmts
    # describes the audio it heard ("[audio: N bytes]").
    input_transcripts: list[RealtimeTranscript] = Field(
        default_factory=list, max_length=LIMITS["realtime_input_transcripts"]
    )

    @model_serializer(mode="wrap")
    def _drop_unset(self, handler: Any) -> dict[str, Any]:
        return {key: value for key, value in handler(self).items() if value}


class SessionConfig(BaseModel):
    """A whole session configuration; ``configure`` replaces the previous one atomically."""

    model_config = STRICT

    # Left out (None): the session serves any model name, so a framework's default model just works.
    models: list[str] | None = Field(default=None, min_length=1, max_length=LIMITS["models"])
    provider_credentials: dict[str, str] = Field(default_factory=dict)
    scenarios: list[Scenario] = Field(default_factory=list, max_length=LIMITS["scenarios"])
    # Azure OpenAI deployment name -> the model it serves (one of ``models`` when those are listed).
    azure_deployments: dict[str, str] = Field(default_factory=dict, max_length=LIMITS["azure_deployments"])
    journal: JournalSettings | None = None
    determinism: Determinism | None = None
    conversations: list[ConversationGraph] = Field(default_factory=list, max_length=LIMITS["conversations"])
    conversation_capacity: ConversationCapacity | None = None
    # Requests the real provider rejects get that provider's 400 (docs/realistic-answers.md,
    # "Strict request contract"); ``false`` accepts them.
    strict_requests: bool = True
    # Session defaults: pacing of every streamed answer, and the provider rate-limit window.
    pacing: Pacing | None = None
    rate_limits: RateLimits | None = None
    # Record and replay (docs/recording.md): provider namespace -> base URL of the real API; what the
    # session's own fixtures cannot answer is forwarded there, and kept while ``record`` is on.
    upstreams: dict[str, str] = Field(default_factory=dict)
    record: bool = False
    recording: RecordingSettings | None = None
    # The agent's other peers (docs/mcp.md, docs/a2a.md): scripted MCP servers and A2A agents.
    mcp_servers: list[McpServer] = Field(default_factory=list, max_length=LIMITS["mcp_servers"])
    a2a_agents: list[A2aAgent] = Field(default_factory=list, max_length=LIMITS["a2a_agents"])
    # Realtime connections (docs/realtime.md): the user's scripted input transcripts.
    realtime: RealtimeScript | None = None
    # Provider economics (docs/configuration.md, "pricing" and "budget"): prices per model name over the
    # built-in list prices (docs/prices.md), and caps on the session's running cost and tokens.
    pricing: dict[str, ModelPrice] = Field(default_factory=dict, max_length=LIMITS["pricing_models"])
    budget: Budget | None = None

    @field_validator("upstreams")
    @classmethod
    def _upstreams(cls, value: dict[str, str]) -> dict[str, str]:
        return check_upstreams(value)

    @field_validator("models")
    @classmethod
    def _model_ids(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        for model in value:
            if not model or len(model) > LIMITS["model_id_chars"]:
                raise ValueError(f"model ids must be 1..{LIMITS['model_id_chars']} characters")
        if len(set(value)) != len(value):
            raise ValueError("model ids must be unique")
        return value

    @field_validator("pricing")
    @classmethod
    def _priced_models(cls, value: dict[str, ModelPrice]) -> dict[str, ModelPrice]:
        for model in value:
            if not model or len(model) > LIMITS["model_id_chars"]:
                raise ValueError(f"pricing keys are model names of 1..{LIMITS['model_id_chars']} characters")
        return value

    @field_validator("provider_credentials")
    @classmethod
    def _credentials(cls, value: dict[str, str]) -> dict[str, str]:
        namespaces = catalog.CATALOG.namespaces
        for namespace, credential in value.items():
            if namespace not in namespaces:
                raise ValueError(
                    f"unknown provider namespace {namespace!r}; expected one of " + ", ".join(namespaces)
                )
            if not credential or len(credential) > LIMITS["credential_chars"]:
                raise ValueError(f"credentials must be 1..{LIMITS['credential_chars']} characters")
        return value

    @model_serializer(mode="wrap")
    def _drop_empty_optional_sections(self, handler: Any) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if data.get("models") is None:
            data.pop("models", None)
        if not data.get("azure_deployments"):
            data.pop("azure_deployments", None)
        for optional in ("journal", "determinism", "pacing", "rate_limits", "realtime", "budget"):
            if data.get(optional) is None:
                data.pop(optional, None)
        if not data.get("conversations"):
            data.pop("conversations", None)
        if data.get("conversation_capacity") is None:
            data.pop("conversation_capacity", None)
        if data.get("strict_requests") is True:
            data.pop("strict_requests")
        if not data.get("upstreams"):
            data.pop("upstreams", None)
        if not data.get("pricing"):
            data.pop("pricing", None)
        if data.get("record") is False:
            data.pop("record")
        if data.get("recording") is None:
            data.pop("recording", None)
        for peers in ("mcp_servers", "a2a_agents"):
            if not data.get(peers):
                data.pop(peers, None)
        return data

    @field_validator("azure_deployments")
    @classmethod
    def _deployment_names(cls, value: dict[str, str]) -> dict[str, str]:
        for name in value:
            if not name or len(name) > LIMITS["identifier_chars"] or "/" in name:
                raise ValueError(
                    f"deployment names must be 1..{LIMITS['identifier_chars']} characters without '/'"
                )
        return value

    def serves_model(self, model: str) -> bool:
        """Listed models restrict; ``models`` left out serves any name."""
        return self.models is None or model in self.models

    def named_models(self) -> list[str]:
        """The models scenarios, graphs and Azure deployments name, in order, without repeats."""
        named = [s.model for s in self.scenarios] + [g.model for g in self.conversations]
        named += list(self.azure_deployments.values())
        return list(dict.fromkeys(m for m in named if m is not None))

    @model_validator(mode="after")
    def _scenario_references(self) -> SessionConfig:
        seen: set[str] = set()
        for index, scenario in enumerate(self.scenarios):
            scenario_id = scenario.id or f"scenario_{index}"
            if scenario_id in seen:
                raise ValueError(f"duplicate scenario id {scenario_id!r}")
            seen.add(scenario_id)
            if scenario.model is not None and not self.serves_model(scenario.model):
                raise ValueError(
                    f"scenarios[{index}].model {scenario.model!r} is not one of the session's models"
                )
        for deployment, model in self.azure_deployments.items():
            if not self.serves_model(model):
                raise ValueError(
                    f"azure_deployments[{deployment!r}] maps to {model!r}, "
                    "which is not one of the session's models"
                )
        return self

    @model_validator(mode="after")
    def _peer_names(self) -> SessionConfig:
        check_unique_names(self.mcp_servers, "mcp_servers")
        check_unique_names(self.a2a_agents, "a2a_agents")
        return self

    @model_validator(mode="after")
    def _conversation_references(self) -> SessionConfig:
        check_conversation_references(self.scenarios, self.conversations, self.models)
        chat_kinds = OPERATIONS[CHAT]
        for g_index, graph in enumerate(self.conversations):
            for s_index, step in enumerate(graph.steps):
                kind = step.response.kind
                if kind not in ("error", "recorded") and kind not in chat_kinds:
                    raise ValueError(
                        f"conversations[{g_index}].steps[{s_index}].response is a {kind} answer; "
                        "conversation graphs answer chat requests only (script it in a scenario)"
                    )
        return self
