"""Cohere's error envelope: ``{"id", "message"}`` with the status the SDK maps to its typed errors
(400 ``BadRequestError``, 401 ``UnauthorizedError``, 404 ``NotFoundError``, 429 ``TooManyRequestsError``,
500 ``InternalServerError``, ...; docs/providers.md "Cohere").

llmts adds its stable ``code`` beside ``message`` (the SDK exposes the parsed body as ``error.body``).
The SDK retries 408, 409, 429 and every 5xx twice by default and has no ``x-should-retry``: it waits
``retry-after-ms``, else ``retry-after``, else backs off exponentially from one second. A scripted
``retry_after`` is sent in both headers; errors that say "do not retry" (llmts's own 409 diagnostics, a
fixture's ``should_retry: false``) carry ``retry-after-ms: 1`` so the SDK's unavoidable retries cost
milliseconds instead of seconds.
"""

from __future__ import annotations

import orjson

from llmts.errors import LlmtsError, ScriptedError
from llmts.providers.base import Reply, retry_after_headers

__all__ = ["render_cohere_error"]


def render_cohere_error(error: LlmtsError, request_id: str) -> Reply:
    body = {"id": request_id, "message": error.message, "code": error.code}
    headers = [("Content-Type", "application/json"), ("x-request-id", request_id)]
    if isinstance(error, ScriptedError) and error.retry_after is not None:
        # At least 1 ms: the SDK reads 0 as "no header" and falls back to its exponential backoff.
        headers += retry_after_headers(max(0.001, error.retry_after), milliseconds=True)
    elif error.should_retry is False:
        headers.append(("retry-after-ms", "1"))
    return Reply(error.http_status, headers, orjson.dumps(body))
