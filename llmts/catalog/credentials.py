"""The request headers that carry a credential or a cookie, whichever provider's SDK sends them: never
recorded (llmts/schema/recorded.py), never logged (a custom access-log format's header atoms print
``[redacted]``, llmts/server/http/log_text.py). Plain data, so the server's arbiter reads it without
the schema."""

from __future__ import annotations

__all__ = ["SECRET_HEADERS"]

SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "x-goog-api-key",
        "ocp-apim-subscription-key",
        "cookie",
        "set-cookie",
        "x-amz-security-token",
    }
)
