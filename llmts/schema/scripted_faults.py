"""Ready-made faults for the builders: stream delivery plans and scripted provider errors, so a test needs
no raw dict for the common ones (docs/python-api.md, "Faults and errors").

    from llmts import ConfigBuilder
    from llmts.schema.scripted_faults import early_clean_end

    config = (
        ConfigBuilder()
        .scenario()
        .text("Hello there.", chunks=["Hello", " there."], stream_delivery=early_clean_end(1))
        .rate_limited(retry_after=2)
        .build()
    )

One factory per row of the mode table (``llmts.schema.faults.MODES``), each declared with the mode it
makes; ``STREAM_FAULTS`` maps the modes to them and the import fails unless they name exactly the
table's modes, so a new mode cannot ship without its helper. Each returns a validated ``StreamDelivery``
(a bad parameter raises ``ConfigurationInvalid`` at the call). Error factories return an
``ErrorFixture`` whose status each provider renders as its own error (docs/python-api.md has the table of
what each official SDK raises); the scenario and step builders have a method per error factory
(``llmts/schema/response_builder.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, TypeVar

from llmts.schema.faults import MODES, StreamDelivery
from llmts.schema.fixtures import ErrorFixture
from llmts.schema.validation import parse_part

__all__ = [
    "ERRORS",
    "STREAM_FAULTS",
    "abort_connection",
    "bad_request",
    "context_length_exceeded",
    "delay_then_continue",
    "early_clean_end",
    "empty_response",
    "http_error_page",
    "malformed_event",
    "malformed_frame",
    "overloaded",
    "quota_exceeded",
    "rate_limited",
    "reset_before_headers",
    "server_error",
    "service_unavailable",
    "slow_drip",
    "stall",
    "truncate_bytes",
    "websocket_close",
]

_F = TypeVar("_F", bound=Callable[..., StreamDelivery])
_found: dict[str, Callable[..., StreamDelivery]] = {}


def _makes(mode: str) -> Callable[[_F], _F]:
    """Declare the factory of ``mode`` (checked against the mode table below)."""

    def register(factory: _F) -> _F:
        if mode in _found:
            raise RuntimeError(f"two factories make stream_delivery mode {mode!r}")
        _found[mode] = factory
        return factory

    return register


def _plan(mode: str, **parameters: Any) -> StreamDelivery:
    given = {key: value for key, value in parameters.items() if value is not None}
    return parse_part(StreamDelivery, {"mode": mode, **given}, "stream_delivery")


# --- in-stream faults: after ``after_content_frames`` content frames of a streamed plain-text answer ------


@_makes("early_clean_end")
def early_clean_end(after_content_frames: int = 1) -> StreamDelivery:
    """The stream ends cleanly after that many content frames, without the rest and the terminal marker."""
    return _plan("early_clean_end", after_content_frames=after_content_frames)


@_makes("abort_connection")
def abort_connection(after_content_frames: int = 1) -> StreamDelivery:
    """A TCP reset after that many content frames (on a WebSocket: no close frame)."""
    return _plan("abort_connection", after_content_frames=after_content_frames)


@_makes("delay_then_continue")
def delay_then_continue(after_content_frames: int = 1, *, delay_ms: int) -> StreamDelivery:
    """A pause of ``delay_ms`` (1-60000) after that many content frames, then the rest."""
    return _plan("delay_then_continue", after_content_frames=after_content_frames, delay_ms=delay_ms)


@_makes("stall")
def stall(after_content_frames: int = 1, *, delay_ms: int) -> StreamDelivery:
    """Nothing more after that many content frames for ``delay_ms`` (1-300000) or until the client
    leaves, then a clean end without the terminal marker."""
    return _plan("stall", after_content_frames=after_content_frames, delay_ms=delay_ms)


@_makes("truncate_bytes")
def truncate_bytes(after_content_frames: int = 1, *, cut_bytes: int) -> StreamDelivery:
    """After that many content frames, only the first ``cut_bytes`` (1-65536) bytes of the next frame."""
    return _plan("truncate_bytes", after_content_frames=after_content_frames, cut_bytes=cut_bytes)


@_makes("malformed_frame")
def malformed_frame(after_content_frames: int = 1) -> StreamDelivery:
    """One syntactically broken frame after that many content frames, then the rest."""
    return _plan("malformed_frame", after_content_frames=after_content_frames)


@_makes("close")
def websocket_close(code: int, reason: str | None = None, *, after_content_frames: int = 1) -> StreamDelivery:
    """Realtime turns: a WebSocket close frame with ``code`` and ``reason`` after that many content
    events."""
    return _plan("close", code=code, reason=reason, after_content_frames=after_content_frames)


@_makes("malformed_event")
def malformed_event(after_content_frames: int = 1) -> StreamDelivery:
    """Realtime turns: one text frame that is not JSON after that many content events."""
    return _plan("malformed_event", after_content_frames=after_content_frames)


# --- pacing and connection faults ---------------------------------------------------------------------------


@_makes("slow_drip")
def slow_drip(bytes_per_second: int) -> StreamDelivery:
    """The whole stream, paced at ``bytes_per_second``."""
    return _plan("slow_drip", bytes_per_second=bytes_per_second)


@_makes("reset_before_headers")
def reset_before_headers() -> StreamDelivery:
    """A TCP reset before any byte of the response (fits every successful response, streamed or not)."""
    return _plan("reset_before_headers")


@_makes("empty_response")
def empty_response() -> StreamDelivery:
    """The connection closed without a status line."""
    return _plan("empty_response")


@_makes("http_error_page")
def http_error_page(status: int = 502) -> StreamDelivery:
    """A proxy's HTML error page with ``status`` (502, 503 or 504) instead of the provider's answer."""
    return _plan("http_error_page", status=status)


def _check_against_table() -> Mapping[str, Callable[..., StreamDelivery]]:
    missing, extra = set(MODES) - set(_found), set(_found) - set(MODES)
    if missing or extra:
        raise RuntimeError(
            "llmts.schema.scripted_faults and the mode table disagree: "
            f"no factory for {sorted(missing)}, factories of unknown modes {sorted(extra)}"
        )
    return MappingProxyType({mode: _found[mode] for mode in MODES})


# Mode -> its factory, in the mode table's order.
STREAM_FAULTS = _check_against_table()


# --- scripted errors ---------------------------------------------------------------------------------------


def _error(
    status: int,
    code: str,
    message: str,
    *,
    retry_after: float | None = None,
    should_retry: bool | None = None,
) -> ErrorFixture:
    given = {"retry_after": retry_after, "should_retry": should_retry}
    fields = {"status": status, "code": code, "message": message, **given}
    return parse_part(ErrorFixture, {k: v for k, v in fields.items() if v is not None}, "error")


def rate_limited(
    retry_after: float | None = None,
    *,
    message: str | None = None,
    should_retry: bool | None = None,
) -> ErrorFixture:
    """429 ``rate_limit_exceeded``, with ``retry-after`` (and each provider's own retry header) when
    ``retry_after`` is given."""
    text = message or "Rate limit reached. Please try again later."
    return _error(429, "rate_limit_exceeded", text, retry_after=retry_after, should_retry=should_retry)


def quota_exceeded(
    *,
    message: str | None = None,
    should_retry: bool | None = False,
) -> ErrorFixture:
    """429 ``insufficient_quota``: out of credit, so retrying does not help (``x-should-retry: false``)."""
    text = message or "You exceeded your current quota, please check your plan and billing details."
    return _error(429, "insufficient_quota", text, should_retry=should_retry)


def server_error(
    *,
    message: str | None = None,
    retry_after: float | None = None,
    should_retry: bool | None = None,
) -> ErrorFixture:
    """500 ``server_error``."""
    text = message or "The server had an error while processing your request."
    return _error(500, "server_error", text, retry_after=retry_after, should_retry=should_retry)


def service_unavailable(
    *,
    message: str | None = None,
    retry_after: float | None = None,
    should_retry: bool | None = None,
) -> ErrorFixture:
    """503 ``service_unavailable`` (Gemini ``UNAVAILABLE``, Bedrock ``ServiceUnavailableException``)."""
    text = message or "The service is temporarily unavailable. Please try again later."
    return _error(503, "service_unavailable", text, retry_after=retry_after, should_retry=should_retry)


def overloaded(
    *,
    message: str | None = None,
    retry_after: float | None = None,
    should_retry: bool | None = None,
) -> ErrorFixture:
    """529 ``overloaded_error``: Anthropic's overloaded answer (other SDKs raise their 5xx error)."""
    return _error(
        529, "overloaded_error", message or "Overloaded", retry_after=retry_after, should_retry=should_retry
    )


def bad_request(message: str, *, code: str = "invalid_request_error") -> ErrorFixture:
    """400 with ``message``: a request the provider refuses; no SDK retries it."""
    return _error(400, code, message)


def context_length_exceeded(
    *,
    message: str | None = None,
) -> ErrorFixture:
    """400 ``context_length_exceeded``: the prompt is too long for the model."""
    text = message or (
        "This model's maximum context length is 128000 tokens. However, your messages resulted in more "
        "tokens. Please reduce the length of the messages."
    )
    return _error(400, "context_length_exceeded", text)


# Name -> factory, for the builder methods and the docs' table.
ERRORS: Mapping[str, Callable[..., ErrorFixture]] = MappingProxyType(
    {
        "rate_limited": rate_limited,
        "quota_exceeded": quota_exceeded,
        "server_error": server_error,
        "service_unavailable": service_unavailable,
        "overloaded": overloaded,
        "bad_request": bad_request,
        "context_length_exceeded": context_length_exceeded,
    }
)
