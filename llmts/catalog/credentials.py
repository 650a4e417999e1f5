"""The request headers that carry a credential or a cookie: never recorded (llmts/schema/recorded.py),
never logged (a custom access-log format's header atoms print ``[redacted]``, llmts/server/http/log_text.py).
The standard ones, and each provider's own (``ProviderInfo.secret_headers``: Anthropic's ``x-api-key``,
Gemini's ``x-goog-api-key``...). Plain data, so the server's arbiter reads it without the schema."""

from __future__ import annotations

from collections.abc import Iterable

from llmts.catalog.info import ProviderInfo
from llmts.catalog.registry import CATALOG

__all__ = ["SECRET_HEADERS", "secret_headers"]

# Whatever the provider.
_STANDARD = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie"})


def secret_headers(providers: Iterable[ProviderInfo]) -> frozenset[str]:
    """The standard secret headers and those ``providers`` declare, in lower case."""
    return _STANDARD | frozenset(header.lower() for info in providers for header in info.secret_headers)


SECRET_HEADERS = secret_headers((*CATALOG.providers, *CATALOG.reserved_env))
