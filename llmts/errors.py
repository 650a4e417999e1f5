"""One error tree for the whole server.

Every error carries a stable ``code`` (what tests assert on) and the ``http_status`` it maps to.
Provider adapters render these in their own envelope; control routes render
``{"error": {"code", "message", "details"}}``.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "BodyIncomplete",
    "BodyReadTimeout",
    "BodyTooLarge",
    "BudgetExhausted",
    "ConfigurationInvalid",
    "ControlKeyThrottled",
    "ControlUnauthorized",
    "ConversationBusy",
    "ConversationCapacityExceeded",
    "ConversationCompleted",
    "ConversationExhausted",
    "ConversationStepMismatch",
    "ConversationTurnNotAdvanced",
    "EncoderMissing",
    "FixtureMismatch",
    "HostNotAllowed",
    "InvalidConversationId",
    "InvalidRequest",
    "LlmtsError",
    "MalformedHttp",
    "MemoryBudgetExceeded",
    "MethodNotAllowed",
    "ModelNotFound",
    "NoMatchingScenario",
    "NoRecordedMatch",
    "Overloaded",
    "ProviderUnauthorized",
    "RateLimitExceeded",
    "RecordingFull",
    "RequestLineTooLong",
    "RequestSuperseded",
    "RouteNotFound",
    "ScenarioExhausted",
    "ScriptedError",
    "SessionCapacityExceeded",
    "SessionNotFound",
    "StrictRequestRejected",
    "UpstreamTimeout",
    "UpstreamUnreachable",
    "UpstreamUnsigned",
    "WebSocketHandshakeInvalid",
    "WebSocketNotSupported",
    "WorkerRestarted",
]


class LlmtsError(Exception):
    """500 unless a subclass sets another status: the base of every error llmts reports on purpose."""

    code: str = "llm_test_server_error"
    http_status: int = 500
    # Whether an SDK should retry (``x-should-retry`` where the provider has it); None keeps the SDK's rule.
    # llmts's own diagnostics say False: a retry cannot change the answer and only slows the failing test.
    should_retry: bool | None = None

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        http_status: int | None = None,
        details: list[dict[str, Any]] | None = None,
        param: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        if http_status is not None:
            self.http_status = http_status
        self.details: list[dict[str, Any]] = details or []
        # The request field the error is about (OpenAI's ``param``), when there is one.
        self.param = param

    def to_control_body(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, "details": self.details}}


class InvalidRequest(LlmtsError):
    """400: the request body or a parameter is malformed or breaks a rule the provider enforces."""

    code = "invalid_request"
    http_status = 400


class StrictRequestRejected(InvalidRequest):
    """400: the request breaks a rule the real provider enforces (``strict_requests``); consumes nothing."""

    should_retry = False

    def __init__(
        self, message: str, *, rule: str, code: str, error_type: str | None = None, param: str | None = None
    ) -> None:
        super().__init__(message, code=code, param=param, details=[{"rule": rule}])
        self.rule = rule
        # The provider's error ``type``/``status`` when it differs from its default for a 400.
        self.error_type = error_type


class ConfigurationInvalid(LlmtsError):
    """400: a configuration (or a builder part) fails validation; nothing changes."""

    code = "invalid_configuration"
    http_status = 400


class BodyTooLarge(LlmtsError):
    """413: the request body exceeds ``--max-body-bytes``; the connection closes."""

    code = "request_too_large"
    http_status = 413


class BodyReadTimeout(LlmtsError):
    """408: the request body did not arrive completely within the body-read timeout; the connection closes."""

    should_retry = False
    code = "llm_test_server_body_timeout"
    http_status = 408


class BodyIncomplete(InvalidRequest):
    """400 ``invalid_request``: the body ended before its Content-Length or broke chunked framing."""


class MalformedHttp(LlmtsError):
    """400 ``malformed_http_request``: the HTTP server rejected the request before the app saw it."""

    code = "malformed_http_request"
    http_status = 400


class RequestLineTooLong(LlmtsError):
    """414 ``request_line_too_long``: the request line is longer than the HTTP server reads (8 KiB)."""

    code = "request_line_too_long"
    http_status = 414


class WebSocketNotSupported(LlmtsError):
    """400 ``websocket_not_supported``: a WebSocket upgrade on a route that serves no WebSocket."""

    code = "websocket_not_supported"
    http_status = 400


class WebSocketHandshakeInvalid(LlmtsError):
    """400 ``invalid_websocket_handshake`` (426 for an unsupported ``Sec-WebSocket-Version``): a realtime
    route's upgrade request is not a valid WebSocket handshake; answered before any 101."""

    code = "invalid_websocket_handshake"
    http_status = 400


class ProviderUnauthorized(LlmtsError):
    """401: a provider route got a missing or wrong credential, or the control key as one."""

    code = "invalid_api_key"
    http_status = 401


class ControlUnauthorized(LlmtsError):
    """401: a control route got no control key or a wrong one (or ``/metrics`` its metrics key)."""

    code = "unauthorized"
    http_status = 401


class ControlKeyThrottled(LlmtsError):
    """429: this client address sent too many wrong control keys (login or bearer); every key it presents
    is refused for ``retry_after`` more seconds (docs/dashboard.md, "Login")."""

    should_retry = False
    code = "control_key_throttled"
    http_status = 429

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class HostNotAllowed(LlmtsError):
    """403: the request's ``Host`` is not a name this server answers: a loopback-bound server answers
    loopback names and ``--allowed-hosts`` only, against DNS rebinding (docs/server.md, "Allowed hosts")."""

    should_retry = False
    code = "llm_test_server_host_not_allowed"
    http_status = 403


class SessionNotFound(LlmtsError):
    """404: the session named by the path prefix or the session header does not exist."""

    should_retry = False
    code = "llm_test_server_session_not_found"
    http_status = 404


class SessionCapacityExceeded(LlmtsError):
    """409: creating a session would exceed ``--max-sessions``."""

    should_retry = False
    code = "llm_test_server_session_capacity_exceeded"
    http_status = 409


class ModelNotFound(LlmtsError):
    """404: the request names a model the session's configuration does not serve."""

    code = "model_not_found"
    http_status = 404


class RouteNotFound(LlmtsError):
    """404: no route matches the method and path."""

    code = "not_found"
    http_status = 404


class MethodNotAllowed(LlmtsError):
    """405: the path exists, but not for this HTTP method."""

    code = "method_not_allowed"
    http_status = 405


class ScenarioExhausted(LlmtsError):
    """409: the owning scenario's queue is used up and its terminal policy is ``reject``."""

    should_retry = False
    code = "llm_test_server_scenario_exhausted"
    http_status = 409


class NoMatchingScenario(LlmtsError):
    """409: no conversation graph or scenario of the session serves the request."""

    should_retry = False
    code = "llm_test_server_no_matching_scenario"
    http_status = 409


class FixtureMismatch(LlmtsError):
    """409: the scripted answer does not fit the request (tools, tool_choice, JSON mode, plan)."""

    should_retry = False
    code = "llm_test_server_fixture_mismatch"
    http_status = 409


class NoRecordedMatch(FixtureMismatch):
    """409: in a session replaying a recording, no recorded request matches (the message names the closest
    recorded request and the first difference; docs/recording.md)."""

    code = "llm_test_server_no_recorded_match"


class EncoderMissing(LlmtsError):
    """501: a generated answer asks for a media format whose encoder, the optional extra ``llmts[media]``
    (PyAV, Pillow), is not installed where the server runs (docs/audio.md, docs/images.md)."""

    should_retry = False
    code = "llm_test_server_encoder_missing"
    http_status = 501


class UpstreamUnreachable(LlmtsError):
    """502: the session's upstream for the provider could not be reached (connect error, reset) while
    forwarding a request (docs/recording.md)."""

    should_retry = False
    code = "llm_test_server_upstream_unreachable"
    http_status = 502


class UpstreamUnsigned(LlmtsError):
    """502: a request for a Bedrock upstream could not be signed (no botocore, no AWS credentials in the
    server process, or no region); nothing was forwarded (docs/recording.md)."""

    should_retry = False
    code = "llm_test_server_upstream_unsigned"
    http_status = 502


class UpstreamTimeout(LlmtsError):
    """504: the session's upstream did not answer within the recording's read timeout while forwarding."""

    should_retry = False
    code = "llm_test_server_upstream_timeout"
    http_status = 504


class WorkerRestarted(LlmtsError):
    """500: the request names a session (or the default session's lost state) that this server process
    lost when its gunicorn worker died and was replaced (docs/deployment.md, "When a worker dies")."""

    should_retry = False
    code = "llm_test_server_worker_restarted"
    http_status = 500


class RecordingFull(LlmtsError):
    """507: the session already keeps ``recording.max_exchanges`` exchanges; nothing is forwarded."""

    should_retry = False
    code = "llm_test_server_recording_full"
    http_status = 507


class RequestSuperseded(LlmtsError):
    """409: the session was reset, reconfigured or deleted while the request waited."""

    should_retry = False
    code = "llm_test_server_request_superseded"
    http_status = 409


class InvalidConversationId(LlmtsError):
    """400: the conversation header is blank, too long or holds a comma."""

    should_retry = False
    code = "invalid_conversation_id"
    http_status = 400


class ConversationBusy(LlmtsError):
    """409: another step of the same conversation identity is still in flight."""

    should_retry = False
    code = "conversation_busy"
    http_status = 409


class ConversationStepMismatch(LlmtsError):
    """409: the request matches none of the steps the conversation may take next."""

    should_retry = False
    code = "conversation_step_mismatch"
    http_status = 409


class ConversationTurnNotAdvanced(LlmtsError):
    """409: the request repeats a turn without a new message or tool result."""

    should_retry = False
    code = "conversation_turn_not_advanced"
    http_status = 409


class ConversationCompleted(LlmtsError):
    """409: the conversation reached a ``complete`` step and takes no more turns."""

    should_retry = False
    code = "conversation_completed"
    http_status = 409


class ConversationExhausted(LlmtsError):
    """409: the conversation ran out of steps (``max_steps`` or its terminal policy)."""

    should_retry = False
    code = "conversation_exhausted"
    http_status = 409


class ConversationCapacityExceeded(LlmtsError):
    """409: a new conversation would exceed the configured conversation capacity."""

    should_retry = False
    code = "conversation_capacity_exceeded"
    http_status = 409


class MemoryBudgetExceeded(LlmtsError):
    """507: stored objects or conversation state would exceed the process memory budget (--max-memory)
    even after every journal entry was evicted."""

    should_retry = False
    code = "llm_test_server_memory_exhausted"
    http_status = 507


class ScriptedError(LlmtsError):
    """The scripted status (4xx/5xx): an ``error`` response fixture; code and headers come from it."""

    def __init__(
        self,
        message: str,
        *,
        code: str,
        http_status: int,
        error_type: str | None,
        retry_after: float | None,
        should_retry: bool | None,
    ) -> None:
        super().__init__(message, code=code, http_status=http_status)
        self.error_type = error_type
        self.retry_after = retry_after
        self.should_retry = should_retry  # as scripted; None leaves the SDK's own rule


class BudgetExhausted(LlmtsError):
    """429 ``insufficient_quota``: the session's ``budget`` is used up; the request consumed nothing.

    Each provider answers it as it answers an account out of credit (docs/configuration.md, ``budget``):
    a retry cannot help, so ``x-should-retry: false`` where the provider has the header."""

    code = "insufficient_quota"
    http_status = 429
    should_retry = False


class RateLimitExceeded(ScriptedError):
    """429: the session's ``rate_limits`` window is used up; ``retry_after`` is the time until it resets.
    ``quota`` names the limit (``requests_per_minute``, ``requests_per_day``, ``tokens_per_minute``,
    ``input_tokens_per_minute``, ``output_tokens_per_minute``) for providers that say which quota ran out."""

    code = "rate_limit_exceeded"
    http_status = 429

    def __init__(
        self,
        message: str,
        retry_after: float,
        *,
        quota: str = "requests_per_minute",
        limit: int | None = None,
        model: str | None = None,
    ) -> None:
        super().__init__(
            message,
            code="rate_limit_exceeded",
            http_status=429,
            error_type=None,
            retry_after=retry_after,
            should_retry=None,
        )
        self.quota = quota
        self.limit = limit
        self.model = model


class Overloaded(ScriptedError):
    """529 ``overloaded_error``: the session's scripted ``rate_limits.overloaded`` condition is on."""

    code = "overloaded_error"
    http_status = 529

    def __init__(self, retry_after: float | None) -> None:
        super().__init__(
            "Overloaded",
            code="overloaded_error",
            http_status=529,
            error_type=None,
            retry_after=retry_after,
            should_retry=None,
        )
