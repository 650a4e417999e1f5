"""How Gemini Live reports an error: it closes the WebSocket with a code and a reason (google-genai raises
``errors.APIError(code, reason)`` from ``receive()``, and websockets' ``ConnectionClosedError`` from
``connect`` while it waits for ``setupComplete``; docs/design/gemini-live.md, "Errors are closes").

* a refused credential (after the 101, as the service does): 1008, ``API key not valid. Please pass a
  valid API key.``;
* model not found (404 ``model_not_found``): 1008, ``models/<m> is not found for API version <v>, or is
  not supported for bidiGenerateContent.``;
* any other 401, 403 or 404: 1008, the error's message;
* 400, 413, 422 (an invalid argument; an invalid client message is ``client_messages.py``'s): 1007;
* 429 (scripted, or the session's ``rate_limits``): 1011, as the service is reported to close quota
  errors;
* 5xx, and llmts's own diagnostics (409 no matching scenario...): 1011.

The reason is the error's message (``Internal error encountered.`` when it has none).
A reason is at most 123 bytes (RFC 6455): longer messages are cut at a character boundary.
"""

from __future__ import annotations

from llmts.errors import LlmtsError, ModelNotFound, ProviderUnauthorized
from llmts.providers.realtime import Reaction

__all__ = [
    "BAD_KEY",
    "INTERNAL",
    "POLICY",
    "REASON_BYTES",
    "close_reason",
    "error_close",
    "unauthorized_after_upgrade",
]

REASON_BYTES = 123
POLICY = 1008
INTERNAL = 1011
_INVALID = 1007
BAD_KEY = "API key not valid. Please pass a valid API key."
_INTERNAL_MESSAGE = "Internal error encountered."


def close_reason(text: str) -> str:
    """``text`` cut to a close frame's 123 bytes of UTF-8, never inside a character."""
    data = text.encode("utf-8", "replace")
    if len(data) <= REASON_BYTES:
        return text
    return data[:REASON_BYTES].decode("utf-8", "ignore")


def error_close(error: LlmtsError, model: str, version: str) -> tuple[int, str]:
    """The close for ``error`` (see the module docstring)."""
    status = error.http_status
    if isinstance(error, ProviderUnauthorized):
        return POLICY, BAD_KEY
    if isinstance(error, ModelNotFound):
        return POLICY, close_reason(
            f"models/{model} is not found for API version {version}, or is not supported for "
            "bidiGenerateContent."
        )
    message = close_reason(error.message or _INTERNAL_MESSAGE)
    if status in (401, 403, 404):
        return POLICY, message
    if status in (400, 413, 422):
        return _INVALID, message
    return INTERNAL, message


def unauthorized_after_upgrade(error: LlmtsError) -> Reaction:
    """A refused credential: the service accepts the upgrade, then closes 1008."""
    return Reaction(close=(POLICY, BAD_KEY))
