"""The response methods the scenario and step builders share (docs/python-api.md, "ConfigBuilder").

A ``ScenarioBuilder`` appends each response to its queue, a ``StepBuilder`` takes exactly one; both say
how in ``_respond`` and get the rest here: the chat answers (``text``, ``json``, ``tool_call``,
``tool_calls``), scripted errors (``error``, ``fail`` and one method per ready-made error of
``llmts.schema.scripted_faults``), and ``response`` for any fixture as its JSON. ``stream_delivery`` takes a
``StreamDelivery`` (``early_clean_end(1)``...) or its JSON.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

from llmts.schema.faults import StreamDelivery
from llmts.schema.fixtures import ErrorFixture
from llmts.schema.scripted_faults import (
    bad_request,
    context_length_exceeded,
    overloaded,
    quota_exceeded,
    rate_limited,
    server_error,
    service_unavailable,
)

__all__ = ["ResponseMethods", "fixture_json"]

_R = TypeVar("_R", bound="ResponseMethods")


def fixture_json(fixture: dict[str, Any]) -> dict[str, Any]:
    """A response fixture's JSON, with any typed part (``StreamDelivery``, ``ErrorFixture``...) dumped."""
    return {
        key: value.model_dump(mode="json") if isinstance(value, BaseModel) else value
        for key, value in fixture.items()
    }


class ResponseMethods:
    """Response methods for a builder that implements ``_respond``."""

    def _respond(self: _R, fixture: dict[str, Any]) -> _R:
        raise NotImplementedError

    def _answer(
        self: _R,
        fixture: dict[str, Any],
        delay_ms: int,
        usage: dict[str, int] | None = None,
        stream_delivery: StreamDelivery | dict[str, Any] | None = None,
    ) -> _R:
        if delay_ms:
            fixture["delay_ms"] = delay_ms
        if usage:
            fixture["usage"] = usage
        if stream_delivery is not None:
            fixture["stream_delivery"] = stream_delivery
        return self._respond(fixture_json(fixture))

    # --- answers -------------------------------------------------------------------------------------

    def text(
        self: _R,
        text: str,
        *,
        chunks: list[str] | None = None,
        delay_ms: int = 0,
        usage: dict[str, int] | None = None,
        stream_delivery: StreamDelivery | dict[str, Any] | None = None,
    ) -> _R:
        response: dict[str, Any] = {"text": text}
        if chunks is not None:
            response["chunks"] = chunks
        return self._answer(response, delay_ms, usage, stream_delivery)

    def json(
        self: _R,
        value: Any,
        *,
        delay_ms: int = 0,
        usage: dict[str, int] | None = None,
        stream_delivery: StreamDelivery | dict[str, Any] | None = None,
    ) -> _R:
        return self._answer({"json": value}, delay_ms, usage, stream_delivery)

    def tool_call(
        self: _R,
        name: str,
        arguments: Any = None,
        *,
        id: str | None = None,
        delay_ms: int = 0,
        usage: dict[str, int] | None = None,
        stream_delivery: StreamDelivery | dict[str, Any] | None = None,
    ) -> _R:
        call: dict[str, Any] = {"name": name, "arguments": {} if arguments is None else arguments}
        if id is not None:
            call["id"] = id
        return self._answer({"tool_calls": [call]}, delay_ms, usage, stream_delivery)

    def tool_calls(
        self: _R,
        *calls: dict[str, Any],
        delay_ms: int = 0,
        usage: dict[str, int] | None = None,
        stream_delivery: StreamDelivery | dict[str, Any] | None = None,
    ) -> _R:
        """Parallel tool calls, each ``{"name", "arguments", "id"?}``."""
        return self._answer({"tool_calls": [dict(call) for call in calls]}, delay_ms, usage, stream_delivery)

    def response(self: _R, fixture: dict[str, Any]) -> _R:
        """Any response fixture as its JSON, e.g. a realistic answer (docs/realistic-answers.md):
        ``{"reasoning": {...}, "text": ..., "tool_calls": [...]}``, ``{"refusal": ...}``; typed parts
        (``"stream_delivery": stall(1, delay_ms=500)``, ``"error": rate_limited()``) are dumped."""
        return self._respond(fixture_json(dict(fixture)))

    # --- scripted errors -----------------------------------------------------------------------------

    def error(
        self: _R,
        status: int,
        code: str,
        message: str,
        *,
        retry_after: float | None = None,
        type: str | None = None,
        should_retry: bool | None = None,
        delay_ms: int = 0,
    ) -> _R:
        error: dict[str, Any] = {"status": status, "code": code, "message": message}
        for key, value in (("retry_after", retry_after), ("type", type), ("should_retry", should_retry)):
            if value is not None:
                error[key] = value
        return self._answer({"error": error}, delay_ms)

    def fail(self: _R, error: ErrorFixture | dict[str, Any], *, delay_ms: int = 0) -> _R:
        """An error fixture as the response: a ready-made one (``rate_limited(2)``...) or any other."""
        return self._answer({"error": error}, delay_ms)

    def rate_limited(
        self: _R,
        retry_after: float | None = None,
        *,
        message: str | None = None,
        should_retry: bool | None = None,
        delay_ms: int = 0,
    ) -> _R:
        """429 ``rate_limit_exceeded``; ``retry_after`` seconds in ``retry-after`` and the provider's own
        retry header."""
        made = rate_limited(retry_after, message=message, should_retry=should_retry)
        return self.fail(made, delay_ms=delay_ms)

    def quota_exceeded(self: _R, *, message: str | None = None, delay_ms: int = 0) -> _R:
        """429 ``insufficient_quota`` with ``x-should-retry: false``."""
        return self.fail(quota_exceeded(message=message), delay_ms=delay_ms)

    def server_error(
        self: _R, *, message: str | None = None, retry_after: float | None = None, delay_ms: int = 0
    ) -> _R:
        """500 ``server_error``."""
        return self.fail(server_error(message=message, retry_after=retry_after), delay_ms=delay_ms)

    def service_unavailable(
        self: _R, *, message: str | None = None, retry_after: float | None = None, delay_ms: int = 0
    ) -> _R:
        """503 ``service_unavailable``."""
        made = service_unavailable(message=message, retry_after=retry_after)
        return self.fail(made, delay_ms=delay_ms)

    def overloaded(
        self: _R, *, message: str | None = None, retry_after: float | None = None, delay_ms: int = 0
    ) -> _R:
        """529 ``overloaded_error`` (Anthropic's overloaded answer; other SDKs raise their 5xx error)."""
        return self.fail(overloaded(message=message, retry_after=retry_after), delay_ms=delay_ms)

    def bad_request(self: _R, message: str, *, code: str = "invalid_request_error", delay_ms: int = 0) -> _R:
        """400 with ``message``."""
        return self.fail(bad_request(message, code=code), delay_ms=delay_ms)

    def context_length_exceeded(self: _R, *, message: str | None = None, delay_ms: int = 0) -> _R:
        """400 ``context_length_exceeded``."""
        return self.fail(context_length_exceeded(message=message), delay_ms=delay_ms)
