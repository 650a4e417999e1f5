"""Factories of the official ``cohere.ClientV2`` / ``AsyncClientV2`` for ``SessionClient.sdk_client``.

Two gaps between the SDK's majors and the other factories are bridged here, so ``cohere_client()`` takes
the same arguments on cohere 5.x to 7.x:

* The SDK has no keyword for headers sent on every request, nor for the certificate to trust: extra
  headers (the conversation header of ``for_conversation``) and ``verify`` (an https server's
  ``ssl.SSLContext``, docs/tls.md) go on an httpx client handed to the SDK as ``httpx_client``.
* cohere 5.x and 6.x take ``max_retries`` per request only (``request_options``); given to the factory, it
  becomes the default of every request the client's HTTP wrapper sends.

Imported only when a Cohere client is built, so ``cohere`` and ``httpx`` stay optional for llmts itself.
"""

from __future__ import annotations

import inspect
from typing import Any

__all__ = ["async_client_v2", "client_v2"]


def _build(
    factory: Any, http_factory: Any, headers: dict[str, str] | None, verify: Any, kwargs: dict[str, Any]
) -> Any:
    if (headers or verify is not None) and "httpx_client" not in kwargs:
        options: dict[str, Any] = {"timeout": kwargs.get("timeout") or 300}
        if headers:
            options["headers"] = headers
        if verify is not None:
            options["verify"] = verify
        kwargs["httpx_client"] = http_factory(**options)
    if "max_retries" not in kwargs or "max_retries" in inspect.signature(factory.__init__).parameters:
        return factory(**kwargs)
    retries = kwargs.pop("max_retries")
    client = factory(**kwargs)
    wrapper = client._client_wrapper.httpx_client
    send = wrapper.request

    def request(*args: Any, request_options: Any = None, **rest: Any) -> Any:
        options = {"max_retries": retries, **(request_options or {})}
        return send(*args, request_options=options, **rest)

    wrapper.request = request
    return client


def client_v2(*, headers: dict[str, str] | None = None, verify: Any = None, **kwargs: Any) -> Any:
    """``cohere.ClientV2(**kwargs)``, with ``headers`` on every request and ``verify`` (httpx's: a
    context, a CA file or False) when given."""
    import cohere
    import httpx

    return _build(cohere.ClientV2, httpx.Client, headers, verify, kwargs)


def async_client_v2(*, headers: dict[str, str] | None = None, verify: Any = None, **kwargs: Any) -> Any:
    """``cohere.AsyncClientV2(**kwargs)``, with ``headers`` on every request and ``verify`` when given."""
    import cohere
    import httpx

    return _build(cohere.AsyncClientV2, httpx.AsyncClient, headers, verify, kwargs)
