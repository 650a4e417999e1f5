"""Google's error envelope (docs/providers.md).

``{"error": {"code": <HTTP status>, "message", "status": <google.rpc.Code name>, "details": [...]}}``.
``details`` always carries a ``google.rpc.ErrorInfo`` whose ``reason`` is llmts's stable error code (domain
``llmts``); a scripted ``retry_after`` adds Google's ``google.rpc.RetryInfo`` beside the ``retry-after``
header, and a request error naming a field adds a ``google.rpc.BadRequest`` field violation. A quota of the
session's ``rate_limits`` that ran out adds Google's ``google.rpc.QuotaFailure`` naming it (quota metric and
id modelled on the Gemini API's, the model as a quota dimension, the limit as ``quotaValue``) before the
``RetryInfo``, the order Google sends them in.

google-genai raises ``errors.ClientError`` (4xx) or ``errors.ServerError`` (5xx) with ``.code``,
``.status``, ``.message`` and ``.details`` (the whole body). It has no "don't retry" header: it retries
only when the client sets ``retry_options``, by status code alone.
"""

from __future__ import annotations

from typing import Any

import orjson

from llmts.errors import BudgetExhausted, LlmtsError, ProviderUnauthorized, RateLimitExceeded, ScriptedError
from llmts.providers.base import Reply, retry_after_headers, retry_after_ms

__all__ = ["google_status", "render_gemini_error"]

# HTTP status -> the google.rpc.Code name Google pairs with it.
_STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    405: "UNIMPLEMENTED",
    408: "DEADLINE_EXCEEDED",
    409: "ABORTED",
    412: "FAILED_PRECONDITION",
    413: "INVALID_ARGUMENT",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    501: "UNIMPLEMENTED",
    502: "UNAVAILABLE",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
_ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
# A ``rate_limits`` quota -> Google's quota metric and quota id for it.
_QUOTAS = {
    "requests_per_minute": ("generate_requests_per_model", "GenerateRequestsPerMinutePerProjectPerModel"),
    "requests_per_day": ("generate_requests_per_model_per_day", "GenerateRequestsPerDayPerProjectPerModel"),
    "tokens_per_minute": ("generate_content_token_count", "GenerateContentTokensPerModelPerMinute"),
    "input_tokens_per_minute": (
        "generate_content_input_token_count",
        "GenerateContentInputTokensPerModelPerMinute",
    ),
    "output_tokens_per_minute": (
        "generate_content_output_token_count",
        "GenerateContentOutputTokensPerModelPerMinute",
    ),
}
# Real Google answers a wrong API key with 400 INVALID_ARGUMENT and this sentence; llmts answers wrong
# credentials with the provider's 401 shape (docs/providers.md), keeping the sentence under
# 401 UNAUTHENTICATED.
_BAD_KEY_MESSAGE = "API key not valid. Please pass a valid API key."


def google_status(http_status: int) -> str:
    named = _STATUS_NAMES.get(http_status)
    if named is not None:
        return named
    return "INTERNAL" if http_status >= 500 else "FAILED_PRECONDITION"


_QUOTA_MESSAGE = (
    "You exceeded your current quota, please check your plan and billing details. For more information on "
    "this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits."
)


def render_gemini_error(error: LlmtsError, request_id: str) -> Reply:
    status = error.http_status
    message = error.message
    if isinstance(error, ProviderUnauthorized):
        status, message = 401, f"{_BAD_KEY_MESSAGE} ({error.message})"
    elif isinstance(error, BudgetExhausted):  # the API's own words for a project out of quota
        message = f"{_QUOTA_MESSAGE} (llmts: {error.message})"
    name = getattr(error, "error_type", None) or google_status(status)
    details: list[dict[str, Any]] = [
        {
            "@type": _ERROR_INFO,
            "reason": error.code,
            "domain": "llmts",
            "metadata": {"request_id": request_id},
        }
    ]
    if error.param is not None:
        details.append(
            {
                "@type": "type.googleapis.com/google.rpc.BadRequest",
                "fieldViolations": [{"field": error.param, "description": error.message}],
            }
        )
    headers = [("Content-Type", "application/json; charset=UTF-8"), ("x-request-id", request_id)]
    if isinstance(error, RateLimitExceeded):
        details.append(_quota_failure(error))
    if isinstance(error, ScriptedError) and error.retry_after is not None:
        headers += retry_after_headers(error.retry_after, milliseconds=False)
        # A protobuf Duration keeps the exact wait (``59.979s``); the header has whole seconds.
        delay = retry_after_ms(error.retry_after) / 1000
        details.append({"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{delay:g}s"})
    body = {"error": {"code": status, "message": message, "status": name, "details": details}}
    return Reply(status, headers, orjson.dumps(body))


def _quota_failure(error: RateLimitExceeded) -> dict[str, Any]:
    metric, quota_id = _QUOTAS.get(error.quota, _QUOTAS["requests_per_minute"])
    violation: dict[str, Any] = {
        "quotaMetric": f"generativelanguage.googleapis.com/{metric}",
        "quotaId": quota_id,
        "quotaDimensions": {"location": "global", **({"model": error.model} if error.model else {})},
    }
    if error.limit is not None:
        violation["quotaValue"] = str(error.limit)
    return {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [violation]}
