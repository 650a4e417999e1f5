"""Ollama's error envelope: ``{"error": "<message>"}`` with the HTTP status (docs/providers.md, "Ollama").

The ``ollama`` client raises ``ollama.ResponseError`` with ``.error`` (the text under ``error``) and
``.status_code``; it never retries, but a scripted ``retry_after`` is still sent as ``retry-after``.
"""

from __future__ import annotations

import orjson

from llmts.errors import LlmtsError, ScriptedError
from llmts.providers.base import Reply, retry_after_headers

__all__ = ["render_ollama_error"]


def render_ollama_error(error: LlmtsError, request_id: str) -> Reply:
    headers = [("Content-Type", "application/json; charset=utf-8"), ("x-request-id", request_id)]
    if isinstance(error, ScriptedError) and error.retry_after is not None:
        headers += retry_after_headers(error.retry_after, milliseconds=False)
    return Reply(error.http_status, headers, orjson.dumps({"error": error.message}))
