"""The ``cohere`` namespace as data (read without loading the adapter)."""

from __future__ import annotations

from llmts.catalog.info import ProviderInfo, SdkClient, env_key, env_url
from llmts.catalog.prices import COHERE_PRICES

__all__ = ["COHERE_INFO", "PROVIDERS"]

COHERE_INFO = ProviderInfo(
    namespace="cohere",
    # What a model listing shows when a configuration neither lists nor names a model.
    listed_models=("command-a-03-2025", "command-r-plus-08-2024", "command-r7b-12-2024"),
    # cohere.ClientV2() reads the base URL and key.
    env=(env_url("CO_API_URL", "/cohere", "cohere.ClientV2"), env_key("CO_API_KEY", "cohere.ClientV2")),
    sdk_clients=(
        # ``cohere.ClientV2`` takes no extra-headers keyword: ``sdk.py`` builds it with an httpx client
        # that carries them (the conversation header of ``for_conversation``).
        SdkClient(
            "cohere_client",
            "llmts.providers.cohere.sdk",
            "client_v2",
            "/cohere",
            headers_argument="headers",
            summary="An official ``cohere.ClientV2`` bound to this session (Bearer credential).",
            trust="verify",
            fixture="llmts_cohere",
            distribution="cohere",
        ),
        SdkClient(
            "async_cohere_client",
            "llmts.providers.cohere.sdk",
            "async_client_v2",
            "/cohere",
            headers_argument="headers",
            summary="An official ``cohere.AsyncClientV2`` bound to this session (Bearer credential).",
            trust="verify",
        ),
    ),
    list_prices=COHERE_PRICES,
)

PROVIDERS = (COHERE_INFO,)
