"""Fluent builder pieces for conversation graphs (``ConfigBuilder.conversation(...)``).

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
configuration JSON (``to_dict``) and is validated by ``build()``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from llmts.schema.config import SessionConfig

if TYPE_CHECKING:
    from llmts.schema.builder import ConfigBuilder, ScenarioBuilder

__all__ = ["ChildBuilder", "ConversationBuilder", "StepBuilder"]

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

    def build(self) -> SessionConfig:
        return self._parent.build()


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


class StepBuilder:
    def __init__(self, graph: ConversationBuilder, id: str) -> None:
        self._graph = graph
        self._id = id
        self._when: dict[str, Any] = {}
        self._response: dict[str, Any] | None = None
        self._then: list[str] | None = None
        self._complete = False

    # --- predicates (all must pass) -------------------------------------------------------------------

    def when(
        self,
        *,
        latest_role: str | None = None,
        latest_text_contains: str | None = None,
        latest_user_contains: str | None = None,
        latest_user_equals: str | None = None,
        turn: int | None = None,
        tool_result: str | None = None,
        call_id: str | None = None,
        tool_arguments_json: Any = _UNSET,
        latest_json: tuple[str, Any] | None = None,
        latest_json_value: tuple[str, Any] | None = None,
    ) -> StepBuilder:
        """Predicates by their configuration names; ``tool_result`` is the tool name (with ``call_id``),
        ``latest_json`` / ``latest_json_value`` are ``(path, expected)`` pairs."""
        for key, value in (
            ("latest_role", latest_role),
            ("latest_text_contains", latest_text_contains),
            ("latest_user_contains", latest_user_contains),
            ("latest_user_equals", latest_user_equals),
            ("turn", turn),
        ):
            if value is not None:
                self._when[key] = value
        if tool_result is not None:
            self.when_tool_result(tool_result, call_id, arguments=tool_arguments_json)
        elif call_id is not None or tool_arguments_json is not _UNSET:
            raise ValueError("call_id and tool_arguments_json need tool_result (the tool name)")
        if latest_json is not None:
            self.when_latest_json(*latest_json)
        if latest_json_value is not None:
            self.when_latest_json_value(*latest_json_value)
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
        self._when["tool_result"] = {"name": name} if call_id is None else {"name": name, "call_id": call_id}
        if arguments is not _UNSET:
            self._when["tool_arguments_json"] = arguments
        return self

    def when_latest_json(self, path: str, expected_json: Any) -> StepBuilder:
        self._when["latest_json"] = {"path": path, "expected_json": expected_json}
        return self

    def when_latest_json_value(self, path: str, value: Any) -> StepBuilder:
        self._when["latest_json_value"] = {"path": path, "value": value}
        return self

    # --- the response (exactly one) -------------------------------------------------------------------

    def response(self, fixture: dict[str, Any]) -> StepBuilder:
        """A response fixture as its JSON (``{"text": ...}``, ``{"error": {...}}``...)."""
        if self._response is not None:
            raise ValueError(f"step {self._id!r} already has a response")
        self._response = dict(fixture)
        return self

    def _fixture(self, fixture: dict[str, Any], delay_ms: int, extra: dict[str, Any]) -> StepBuilder:
        if delay_ms:
            fixture["delay_ms"] = delay_ms
        fixture.update({key: value for key, value in extra.items() if value is not None})
        return self.response(fixture)

    def text(
        self,
        text: str,
        *,
        chunks: list[str] | None = None,
        delay_ms: int = 0,
        usage: dict[str, int] | None = None,
        stream_delivery: dict[str, Any] | None = None,
    ) -> StepBuilder:
        extra = {"chunks": chunks, "usage": usage, "stream_delivery": stream_delivery}
        return self._fixture({"text": text}, delay_ms, extra)

    def json(self, value: Any, *, delay_ms: int = 0, usage: dict[str, int] | None = None) -> StepBuilder:
        return self._fixture({"json": value}, delay_ms, {"usage": usage})

    def tool_call(
        self, name: str, arguments: Any = None, *, id: str | None = None, delay_ms: int = 0
    ) -> StepBuilder:
        call: dict[str, Any] = {"name": name, "arguments": {} if arguments is None else arguments}
        if id is not None:
            call["id"] = id
        return self._fixture({"tool_calls": [call]}, delay_ms, {})

    def tool_calls(self, *calls: dict[str, Any], delay_ms: int = 0) -> StepBuilder:
        """Parallel tool calls, each ``{"name", "arguments", "id"?}``."""
        return self._fixture({"tool_calls": [dict(call) for call in calls]}, delay_ms, {})

    def error(
        self,
        status: int,
        code: str,
        message: str,
        *,
        retry_after: float | None = None,
        should_retry: bool | None = None,
        delay_ms: int = 0,
    ) -> StepBuilder:
        error: dict[str, Any] = {"status": status, "code": code, "message": message}
        for key, value in (("retry_after", retry_after), ("should_retry", should_retry)):
            if value is not None:
                error[key] = value
        return self._fixture({"error": error}, delay_ms, {})

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
