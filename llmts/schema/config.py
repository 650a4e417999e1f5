"""The session configuration JSON (CONTRACT.md), as pydantic models.

Everything here is validated once, at configure time; the runtime compiles it into precomputed plans so
that nothing is re-validated per request. Every list has a documented bound (see ``LIMITS``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import orjson
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_serializer,
    model_validator,
)

from llmts.schema.conversation_limits import CONVERSATION_LIMITS
from llmts.schema.determinism import DETERMINISM_LIMITS, Determinism
from llmts.schema.faults import CONNECTION_MODES, StreamDelivery
from llmts.schema.items import NATIVE_LIMITS, OutputItem, check_items
from llmts.schema.journal import JOURNAL_LIMITS, JournalSettings

__all__ = [
    "LIMITS",
    "PROVIDER_NAMESPACES",
    "ErrorFixture",
    "ProviderNamespace",
    "ResponseFixture",
    "Scenario",
    "SessionConfig",
    "ToolCallFixture",
    "UsageOverride",
]

PROVIDER_NAMESPACES: tuple[str, ...] = (
    "openai",
    "azure-openai",
    "anthropic",
    "gemini",
    "cohere",
    "ollama",
    "bedrock",
)

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
    "credential_chars": 1024,
    "azure_deployments": 256,
    **JOURNAL_LIMITS,
    **NATIVE_LIMITS,
    **DETERMINISM_LIMITS,
    **CONVERSATION_LIMITS,
}

TerminalPolicy = Literal["reject", "repeat_last_response", "restart"]


def _known_namespace(value: str) -> str:
    if value not in PROVIDER_NAMESPACES:
        raise ValueError("unknown provider namespace; expected one of " + ", ".join(PROVIDER_NAMESPACES))
    return value


# A provider namespace of CONTRACT.md (``openai``, ``azure-openai``, ``anthropic``...).
ProviderNamespace = Annotated[str, AfterValidator(_known_namespace)]

_STRICT = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class UsageOverride(BaseModel):
    """Token counts that replace the deterministic estimate (any subset)."""

    model_config = _STRICT

    input_tokens: int | None = Field(default=None, ge=0)
    output_tokens: int | None = Field(default=None, ge=0)
    cached_tokens: int | None = Field(default=None, ge=0)
    cache_write_tokens: int | None = Field(default=None, ge=0)
    reasoning_tokens: int | None = Field(default=None, ge=0)

    @model_serializer(mode="wrap")
    def _drop_unset(self, handler: Any) -> dict[str, Any]:
        return {key: value for key, value in handler(self).items() if value is not None}


class ToolCallFixture(BaseModel):
    """One tool call the model "makes". ``arguments`` is any JSON value; a string is sent verbatim."""

    model_config = _STRICT

    id: str | None = Field(default=None, min_length=1, max_length=LIMITS["identifier_chars"])
    name: str = Field(min_length=1, max_length=LIMITS["identifier_chars"])
    arguments: Any = Field(default_factory=dict)
    arguments_chunks: list[str] | None = Field(
        default=None, min_length=1, max_length=LIMITS["chunks_per_response"]
    )

    def arguments_text(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return orjson.dumps(self.arguments).decode()

    @model_validator(mode="after")
    def _chunks_concatenate(self) -> ToolCallFixture:
        if self.arguments_chunks is not None and "".join(self.arguments_chunks) != self.arguments_text():
            raise ValueError("arguments_chunks must concatenate to the serialized arguments")
        return self

    @model_serializer(mode="wrap")
    def _drop_unset(self, handler: Any) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        return {k: v for k, v in data.items() if v is not None or k == "arguments"}


class ErrorFixture(BaseModel):
    """A scripted provider error, rendered in the provider's own envelope."""

    model_config = _STRICT

    status: int = Field(ge=400, le=599)
    code: str = Field(min_length=1, max_length=LIMITS["identifier_chars"])
    message: str = Field(min_length=1)
    type: str | None = Field(default=None, min_length=1, max_length=LIMITS["identifier_chars"])
    retry_after: float | None = Field(default=None, ge=0, le=LIMITS["retry_after_seconds"])
    should_retry: bool | None = None

    @model_serializer(mode="wrap")
    def _drop_unset(self, handler: Any) -> dict[str, Any]:
        return {key: value for key, value in handler(self).items() if value is not None}


_RESPONSE_KINDS = ("text", "json", "tool_calls", "error", "items")


class ResponseFixture(BaseModel):
    """One scripted answer: exactly one of ``text``, ``json``, ``tool_calls``, ``error``, ``items``."""

    model_config = _STRICT

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

    @property
    def kind(self) -> str:
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
        if len(present) != 1:
            found = ", ".join(present) if present else "none"
            raise ValueError(
                "a response needs exactly one of text, json, tool_calls, error, items (found: " + found + ")"
            )
        if self.chunks is not None:
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
        if self.text is None:
            raise ValueError(f"stream_delivery {plan.mode} applies only to plain-text responses")
        content_frames = sum(1 for chunk in (self.chunks or [self.text]) if chunk)
        if content_frames == 0:
            raise ValueError("stream_delivery needs non-empty text")
        if plan.in_stream and plan.after_content_frames > content_frames:
            raise ValueError(
                f"after_content_frames {plan.after_content_frames} is unreachable: "
                f"the response has {content_frames} non-empty content frame(s)"
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


class Scenario(BaseModel):
    """A queue of responses, consumed in order by the requests it matches."""

    model_config = _STRICT

    id: str | None = Field(default=None, min_length=1, max_length=LIMITS["identifier_chars"])
    model: str | None = Field(default=None, min_length=1, max_length=LIMITS["model_id_chars"])
    provider: ProviderNamespace | None = None
    terminal_policy: TerminalPolicy = "reject"
    responses: list[ResponseFixture] = Field(min_length=1, max_length=LIMITS["responses_per_scenario"])

    @model_serializer(mode="wrap")
    def _drop_unset(self, handler: Any) -> dict[str, Any]:
        return {key: value for key, value in handler(self).items() if value is not None}


# Conversation graphs reuse the response fixtures above, so they are imported once those exist.
from llmts.schema.conversations import (  # noqa: E402
    ConversationCapacity,
    ConversationGraph,
    check_conversation_references,
)


class SessionConfig(BaseModel):
    """A whole session configuration; ``configure`` replaces the previous one atomically."""

    model_config = _STRICT

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

    @field_validator("provider_credentials")
    @classmethod
    def _credentials(cls, value: dict[str, str]) -> dict[str, str]:
        for namespace, credential in value.items():
            if namespace not in PROVIDER_NAMESPACES:
                raise ValueError(
                    f"unknown provider namespace {namespace!r}; expected one of "
                    + ", ".join(PROVIDER_NAMESPACES)
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
        for optional in ("journal", "determinism"):
            if data.get(optional) is None:
                data.pop(optional, None)
        if not data.get("conversations"):
            data.pop("conversations", None)
        if data.get("conversation_capacity") is None:
            data.pop("conversation_capacity", None)
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
    def _conversation_references(self) -> SessionConfig:
        check_conversation_references(self)
        return self
