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
    "ConfigurationInvalid",
    "ControlUnauthorized",
    "ConversationBusy",
    "ConversationCapacityExceeded",
    "ConversationCompleted",
    "ConversationExhausted",
    "ConversationStepMismatch",
    "ConversationTurnNotAdvanced",
    "FixtureMismatch",
    "InvalidConversationId",
    "InvalidRequest",
    "LlmtsError",
    "MalformedHttp",
    "MethodNotAllowed",
    "ModelNotFound",
    "NoMatchingScenario",
    "ProviderUnauthorized",
    "RequestLineTooLong",
    "RequestSuperseded",
    "RouteNotFound",
    "ScenarioExhausted",
    "ScriptedError",
    "SessionCapacityExceeded",
    "SessionNotFound",
]


class LlmtsError(Exception):
    """Base of every error the server reports on purpose."""

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
    code = "invalid_request"
    http_status = 400


class ConfigurationInvalid(LlmtsError):
    code = "invalid_configuration"
    http_status = 400


class BodyTooLarge(LlmtsError):
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


class ProviderUnauthorized(LlmtsError):
    code = "invalid_api_key"
    http_status = 401


class ControlUnauthorized(LlmtsError):
    code = "unauthorized"
    http_status = 401


class SessionNotFound(LlmtsError):
    should_retry = False
    code = "llm_test_server_session_not_found"
    http_status = 404


class SessionCapacityExceeded(LlmtsError):
    should_retry = False
    code = "llm_test_server_session_capacity_exceeded"
    http_status = 409


class ModelNotFound(LlmtsError):
    code = "model_not_found"
    http_status = 404


class RouteNotFound(LlmtsError):
    code = "not_found"
    http_status = 404


class MethodNotAllowed(LlmtsError):
    code = "method_not_allowed"
    http_status = 405


class ScenarioExhausted(LlmtsError):
    should_retry = False
    code = "llm_test_server_scenario_exhausted"
    http_status = 409


class NoMatchingScenario(LlmtsError):
    should_retry = False
    code = "llm_test_server_no_matching_scenario"
    http_status = 409


class FixtureMismatch(LlmtsError):
    should_retry = False
    code = "llm_test_server_fixture_mismatch"
    http_status = 409


class RequestSuperseded(LlmtsError):
    should_retry = False
    code = "llm_test_server_request_superseded"
    http_status = 409


class InvalidConversationId(LlmtsError):
    should_retry = False
    code = "invalid_conversation_id"
    http_status = 400


class ConversationBusy(LlmtsError):
    """Another step of the same conversation identity is still in flight."""

    should_retry = False
    code = "conversation_busy"
    http_status = 409


class ConversationStepMismatch(LlmtsError):
    should_retry = False
    code = "conversation_step_mismatch"
    http_status = 409


class ConversationTurnNotAdvanced(LlmtsError):
    should_retry = False
    code = "conversation_turn_not_advanced"
    http_status = 409


class ConversationCompleted(LlmtsError):
    should_retry = False
    code = "conversation_completed"
    http_status = 409


class ConversationExhausted(LlmtsError):
    should_retry = False
    code = "conversation_exhausted"
    http_status = 409


class ConversationCapacityExceeded(LlmtsError):
    should_retry = False
    code = "conversation_capacity_exceeded"
    http_status = 409


class ScriptedError(LlmtsError):
    """An ``error`` response fixture: status, code and headers come from the configuration."""

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
