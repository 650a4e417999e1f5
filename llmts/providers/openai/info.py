"""The ``openai`` and ``azure-openai`` namespaces as data (read without loading the adapters)."""

from __future__ import annotations

from llmts.providers.info import ProviderInfo, SdkClient

__all__ = ["AZURE_OPENAI_INFO", "OPENAI_INFO", "PROVIDERS"]

OPENAI_INFO = ProviderInfo(
    namespace="openai",
    default_model="gpt-4.1-mini",
    sdk_clients=(
        SdkClient("openai_client", "openai", "OpenAI", "/openai/v1"),
        SdkClient("async_openai_client", "openai", "AsyncOpenAI", "/openai/v1"),
    ),
)

AZURE_OPENAI_INFO = ProviderInfo(
    namespace="azure-openai",
    sdk_clients=(
        SdkClient(
            "azure_openai_client",
            "openai",
            "AzureOpenAI",
            "/azure-openai",
            url_argument="azure_endpoint",
            defaults=(("api_version", "2024-10-21"),),
        ),
    ),
)

PROVIDERS = (OPENAI_INFO, AZURE_OPENAI_INFO)
