"""OpenAI's error envelope and retry headers (docs/providers.md)."""

from __future__ import annotations

import orjson

from llmts.errors import BudgetExhausted, LlmtsError, ScriptedError
from llmts.providers.base import Reply, retry_after_headers

__all__ = ["render_openai_error"]


def _default_type(status: int) -> str:
    if status >= 500:
        return "server_error"
    if status == 429:
        return "rate_limit_error"
    if status == 401:
        return "invalid_request_error"
    if status == 403:
        return "permission_error"
    return "invalid_request_error"


# OpenAI's answer to an account out of credit (a session past its ``budget``): type and code alike.
_QUOTA_MESSAGE = (
    "You exceeded your current quota, please check your plan and billing details. For more information on "
    "this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors."
)


def render_openai_error(error: LlmtsError, request_id: str) -> Reply:
    status, message = error.http_status, error.message
    if isinstance(error, BudgetExhausted):  # OpenAI's words (never retried: its should_retry)
        message, error_type = _QUOTA_MESSAGE, "insufficient_quota"
    else:
        error_type = getattr(error, "error_type", None) or _default_type(status)
    body = {"error": {"message": message, "type": error_type, "param": error.param, "code": error.code}}
    headers = [("Content-Type", "application/json"), ("x-request-id", request_id)]
    if isinstance(error, ScriptedError) and error.retry_after is not None:
        headers += retry_after_headers(error.retry_after, milliseconds=True)
    if error.should_retry is not None:
        headers.append(("x-should-retry", "true" if error.should_retry else "false"))
    return Reply(status, headers, orjson.dumps(body))
