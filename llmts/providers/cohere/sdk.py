"""Factories of the official ``cohere.ClientV2`` / ``AsyncClientV2`` for ``SessionClient.sdk_client``.

The Cohere SDK has no keyword for headers sent on every request, so extra headers (the conversation
header of ``for_conversation``) go on an httpx client handed to the SDK. Imported only when a Cohere
client is built, so ``cohere`` and ``httpx`` stay optional for llmts itself.
"""

from __future__ import annotations

from typing import Any

__all__ = ["async_client_v2", "client_v2"]


def client_v2(*, headers: dict[str, str] | None = None, **kwargs: Any) -> Any:
    """``cohere.ClientV2(**kwargs)``, with ``headers`` on every request when given."""
    import cohere
    import httpx

    if headers and "httpx_client" not in kwargs:
        kwargs["httpx_client"] = httpx.Client(headers=headers, timeout=kwargs.get("timeout") or 300)
    return cohere.ClientV2(**kwargs)


def async_client_v2(*, headers: dict[str, str] | None = None, **kwargs: Any) -> Any:
    """``cohere.AsyncClientV2(**kwargs)``, with ``headers`` on every request when given."""
    import cohere
    import httpx

    if headers and "httpx_client" not in kwargs:
        kwargs["httpx_client"] = httpx.AsyncClient(headers=headers, timeout=kwargs.get("timeout") or 300)
    return cohere.AsyncClientV2(**kwargs)
