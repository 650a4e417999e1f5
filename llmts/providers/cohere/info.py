"""The ``cohere`` namespace as data (read without loading the adapter)."""

from __future__ import annotations

from llmts.providers.info import ProviderInfo, SdkClient

__all__ = ["COHERE_INFO", "PROVIDERS"]

COHERE_INFO = ProviderInfo(
    namespace="cohere",
    sdk_clients=(
        # ``cohere.ClientV2`` takes no extra-headers keyword: ``sdk.py`` builds it with an httpx client
        # that carries them (the conversation header of ``for_conversation``).
        SdkClient(
            "cohere_client", "llmts.providers.cohere.sdk", "client_v2", "/cohere", headers_argument="headers"
        ),
        SdkClient(
            "async_cohere_client",
            "llmts.providers.cohere.sdk",
            "async_client_v2",
            "/cohere",
            headers_argument="headers",
        ),
    ),
)

PROVIDERS = (COHERE_INFO,)
