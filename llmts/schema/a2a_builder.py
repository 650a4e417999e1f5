"""The fluent builder of one scripted A2A agent (``ConfigBuilder.a2a_agent``, docs/a2a.md):

    config = (
        ConfigBuilder()
        .a2a_agent("researcher", description="Finds sources")
        .skill("search", "Search", tags=["web"])
        .text("Which topic?")
        .task("submitted", "working", "completed", artifacts=[{"name": "sources", "text": "..."}])
        .error(-32001, "Task not found")
        .build()
    )

Each response method appends one scripted response (consumed in order); ``.config`` returns to the
``ConfigBuilder``, ``.a2a_agent(...)`` starts the next agent, ``.mcp_server(...)`` an MCP server, and
``.build()`` validates the whole. It lives beside ``builder.py`` and is generic over its parent, so the
two modules do not import each other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from llmts.schema.faults import StreamDelivery

if TYPE_CHECKING:
    from llmts.schema.config import SessionConfig
    from llmts.schema.mcp_builder import McpServerBuilder

__all__ = ["A2aAgentBuilder"]


class _Parent(Protocol):
    # ``ConfigBuilder``'s methods; their signatures live there (the builders forward ``**fields``).
    def build(self) -> SessionConfig: ...

    # Read-only members, so any signature of ``ConfigBuilder``'s methods satisfies them.
    @property
    def a2a_agent(self) -> Callable[..., A2aAgentBuilder[Any]]: ...

    @property
    def mcp_server(self) -> Callable[..., McpServerBuilder[Any]]: ...


_P = TypeVar("_P", bound=_Parent)
_UNSET: Any = object()


def _plan(stream_delivery: StreamDelivery | dict[str, Any] | None) -> dict[str, Any] | None:
    if stream_delivery is None:
        return None
    if isinstance(stream_delivery, StreamDelivery):
        return stream_delivery.model_dump(mode="json")
    return dict(stream_delivery)


class A2aAgentBuilder(Generic[_P]):
    def __init__(self, parent: _P, name: str, **fields: Any) -> None:
        self._parent = parent
        self._fields: dict[str, Any] = {"name": name}
        self._fields.update((key, value) for key, value in fields.items() if value is not None)
        self._skills: list[dict[str, Any]] = [dict(skill) for skill in self._fields.pop("skills", None) or ()]
        self._responses: list[dict[str, Any]] = []

    @property
    def config(self) -> _P:
        """The configuration this agent belongs to."""
        return self._parent

    def a2a_agent(self, name: str, **fields: Any) -> A2aAgentBuilder[Any]:
        """The next agent of the same configuration (``ConfigBuilder.a2a_agent``)."""
        return self._parent.a2a_agent(name, **fields)

    def mcp_server(self, name: str, **fields: Any) -> McpServerBuilder[Any]:
        """An MCP server of the same configuration (``ConfigBuilder.mcp_server``)."""
        return self._parent.mcp_server(name, **fields)

    def build(self) -> SessionConfig:
        return self._parent.build()

    def skill(
        self,
        id: str,
        name: str | None = None,
        *,
        description: str = "",
        tags: Iterable[str] = (),
        examples: Iterable[str] = (),
    ) -> A2aAgentBuilder[_P]:
        """A skill on the agent card (``name`` defaults to ``id``)."""
        skill: dict[str, Any] = {"id": id, "name": name or id, "description": description, "tags": list(tags)}
        if examples:
            skill["examples"] = list(examples)
        self._skills.append(skill)
        return self

    def _add(
        self,
        response: dict[str, Any],
        delay_ms: int,
        stream_delivery: StreamDelivery | dict[str, Any] | None,
    ) -> A2aAgentBuilder[_P]:
        if delay_ms:
            response["delay_ms"] = delay_ms
        plan = _plan(stream_delivery)
        if plan is not None:
            response["stream_delivery"] = plan
        self._responses.append(response)
        return self

    def text(
        self,
        text: str,
        *,
        delay_ms: int = 0,
        stream_delivery: StreamDelivery | dict[str, Any] | None = None,
    ) -> A2aAgentBuilder[_P]:
        """Answer the next message with a message of ``text``."""
        return self._add({"text": text}, delay_ms, stream_delivery)

    def task(
        self,
        *states: str,
        artifacts: Iterable[dict[str, Any]] = (),
        message: str | None = None,
        delay_ms: int = 0,
        stream_delivery: StreamDelivery | dict[str, Any] | None = None,
    ) -> A2aAgentBuilder[_P]:
        """Answer the next message with a task moving through ``states`` (default submitted, working,
        completed), producing ``artifacts`` (each ``{"name", "text" | "data", "description"}``) and ending
        with a status ``message``."""
        task: dict[str, Any] = {}
        if states:
            task["states"] = list(states)
        if artifacts:
            task["artifacts"] = [dict(artifact) for artifact in artifacts]
        if message is not None:
            task["message"] = message
        return self._add({"task": task}, delay_ms, stream_delivery)

    def error(
        self,
        code: int,
        message: str,
        *,
        data: Any = _UNSET,
        delay_ms: int = 0,
        stream_delivery: StreamDelivery | dict[str, Any] | None = None,
    ) -> A2aAgentBuilder[_P]:
        """Answer the next message with a JSON-RPC error (HTTP 200, as A2A servers do)."""
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not _UNSET:
            error["data"] = data
        return self._add({"error": error}, delay_ms, stream_delivery)

    def response(self, response: dict[str, Any]) -> A2aAgentBuilder[_P]:
        """Any scripted response as its JSON."""
        self._responses.append(dict(response))
        return self

    def to_dict(self) -> dict[str, Any]:
        data = dict(self._fields)
        if self._skills:
            data["skills"] = list(self._skills)
        data["responses"] = list(self._responses)
        return data
