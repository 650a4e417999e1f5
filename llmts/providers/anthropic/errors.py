"""Anthropic's error envelope, request-id and retry headers (docs/providers.md).

``{"type": "error", "error": {"type", "message", "code", "details": {"error_code"}}, "request_id"}``:
``type`` comes from the status (a scripted fixture's ``type`` wins); llmts's stable code is in
``error.code`` and in ``error.details.error_code`` (anthropic 2.x exposes the latter as
``APIStatusError.error_code``; no llmts code collides with a code the SDK maps to a more specific
exception class).
"""

from __future__ import annotations

import orjson

from llmts.errors import BudgetExhausted, LlmtsError, ScriptedError
from llmts.providers.base import Reply, retry_after_headers

__all__ = ["error_type_for", "render_anthropic_error"]

_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    409: "conflict_error",
    413: "request_too_large",
    429: "rate_limit_error",
    504: "timeout_error",
    529: "overloaded_error",
}


def error_type_for(status: int) -> str:
    return _TYPES.get(status) or ("api_error" if status >= 500 else "invalid_request_error")


# Anthropic's answer to an account out of credit (a session past its ``budget``): a 400, not a 429.
_CREDIT_MESSAGE = (
    "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or "
    "purchase credits."
)


def render_anthropic_error(error: LlmtsError, request_id: str) -> Reply:
    status, message = error.http_status, error.message
    if isinstance(error, BudgetExhausted):  # a 400 in Anthropic's words (never retried: its should_retry)
        status, message = 400, _CREDIT_MESSAGE
    error_type = getattr(error, "error_type", None) or error_type_for(status)
    body = {
        "type": "error",
        "error": {
            "type": error_type,
            "message": message,
            "code": error.code,
            "details": {"error_code": error.code},
        },
        "request_id": request_id,
    }
    headers = [("Content-Type", "application/json"), ("request-id", request_id)]
    if isinstance(error, ScriptedError) and error.retry_after is not None:
        headers += retry_after_headers(error.retry_after, milliseconds=True)
    if error.should_retry is not None:
        headers.append(("x-should-retry", "true" if error.should_retry else "false"))
    return Reply(status, headers, orjson.dumps(body))
