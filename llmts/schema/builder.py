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
"""

from __future__ import annotations

from typing import Any

from llmts.schema.config import SessionConfig, TerminalPolicy
from llmts.schema.conversation_builder import ChildBuilder, ConversationBuilder
from llmts.schema.validation import parse_session_config

__all__ = ["ConfigBuilder", "ScenarioBuilder"]


class ConfigBuilder:
    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        self._scenarios: list[ScenarioBuilder] = []
        self._conversations: list[ConversationBuilder] = []

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
    ) -> ScenarioBuilder:
        builder = ScenarioBuilder(
            self, id=id, model=model, provider=provider, terminal_policy=terminal_policy
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

    def to_dict(self) -> dict[str, Any]:
        data = dict(self._data)
        if self._scenarios:
            data["scenarios"] = [scenario.to_dict() for scenario in self._scenarios]
        if self._conversations:
            data["conversations"] = [graph.to_dict() for graph in self._conversations]
        return data

    def build(self) -> SessionConfig:
        return parse_session_config(self.to_dict())


class ScenarioBuilder(ChildBuilder):
    def __init__(self, parent: ConfigBuilder, **fields: Any) -> None:
        super().__init__(parent, **fields)
        self._responses: list[dict[str, Any]] = []

    def _add(self, response: dict[str, Any], delay_ms: int, usage: dict[str, int] | None) -> ScenarioBuilder:
        if delay_ms:
            response["delay_ms"] = delay_ms
        if usage:
            response["usage"] = usage
        self._responses.append(response)
        return self

    def text(
        self,
        text: str,
        *,
        chunks: list[str] | None = None,
        delay_ms: int = 0,
        usage: dict[str, int] | None = None,
    ) -> ScenarioBuilder:
        response: dict[str, Any] = {"text": text}
        if chunks is not None:
            response["chunks"] = chunks
        return self._add(response, delay_ms, usage)

    def json(self, value: Any, *, delay_ms: int = 0, usage: dict[str, int] | None = None) -> ScenarioBuilder:
        return self._add({"json": value}, delay_ms, usage)

    def tool_call(
        self,
        name: str,
        arguments: Any = None,
        *,
        id: str | None = None,
        delay_ms: int = 0,
        usage: dict[str, int] | None = None,
    ) -> ScenarioBuilder:
        call: dict[str, Any] = {"name": name, "arguments": {} if arguments is None else arguments}
        if id is not None:
            call["id"] = id
        return self._add({"tool_calls": [call]}, delay_ms, usage)

    def tool_calls(
        self, *calls: dict[str, Any], delay_ms: int = 0, usage: dict[str, int] | None = None
    ) -> ScenarioBuilder:
        """Parallel tool calls, each ``{"name", "arguments", "id"?}``."""
        return self._add({"tool_calls": [dict(call) for call in calls]}, delay_ms, usage)

    def error(
        self,
        status: int,
        code: str,
        message: str,
        *,
        retry_after: float | None = None,
        type: str | None = None,
        should_retry: bool | None = None,
        delay_ms: int = 0,
    ) -> ScenarioBuilder:
        error: dict[str, Any] = {"status": status, "code": code, "message": message}
        for key, value in (("retry_after", retry_after), ("type", type), ("should_retry", should_retry)):
            if value is not None:
                error[key] = value
        return self._add({"error": error}, delay_ms, None)

    def items(self, *items: Any, delay_ms: int = 0, usage: dict[str, int] | None = None) -> ScenarioBuilder:
        """OpenAI Responses native output items (docs/native-tools.md), each a dict with ``kind`` or a
        typed model from ``llmts.schema.items`` (``FileSearchItem``, ``MessageItem``...)."""
        dumped = [dict(item) if isinstance(item, dict) else item.model_dump(mode="json") for item in items]
        return self._add({"items": dumped}, delay_ms, usage)

    def to_dict(self) -> dict[str, Any]:
        return {**self._fields, "responses": list(self._responses)}
