"""The ``openai`` and ``azure-openai`` namespaces as data (read without loading the adapters)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llmts.catalog.info import ProviderInfo, SdkClient, env_key, env_url, env_value
from llmts.catalog.prices import OPENAI_PRICES

__all__ = ["AZURE_API_VERSION", "AZURE_OPENAI_INFO", "OPENAI_INFO", "PROVIDERS"]

# The Azure OpenAI API version the SDK clients send (``api_version``, ``OPENAI_API_VERSION``); llmts
# accepts any.
AZURE_API_VERSION = "2024-10-21"

OPENAI_INFO = ProviderInfo(
    namespace="openai",
    default_model="gpt-4.1-mini",
    sdk_clients=(
        SdkClient(
            "openai_client",
            "openai",
            "OpenAI",
            "/openai/v1",
            summary="An official ``openai.OpenAI`` bound to this session (extra kwargs go to the "
            "constructor).",
            trust="http_client",
            trust_factory="openai.DefaultHttpxClient",
            fixture="llmts_openai",
        ),
        SdkClient(
            "async_openai_client",
            "openai",
            "AsyncOpenAI",
            "/openai/v1",
            trust="http_client",
            trust_factory="openai.DefaultAsyncHttpxClient",
        ),
    ),
    listed_models=("gpt-4.1-mini", "gpt-4.1", "gpt-4o", "gpt-4o-mini"),
    # OpenAI() reads both (the base URL includes the API version segment).
    env=(
        env_url("OPENAI_BASE_URL", "/openai/v1", "openai.OpenAI"),
        env_key("OPENAI_API_KEY", "openai.OpenAI"),
    ),
    list_prices=OPENAI_PRICES,
)

# ``azure_deployments`` bounds (docs/configuration.md): 256 entries, names of 1..128 characters, no "/".
_DEPLOYMENTS = 256
_DEPLOYMENT_CHARS = 128


def _azure_replay_config(models: Sequence[str]) -> dict[str, Any]:
    """A recording session served each deployment it forwarded as a model of that name: a replay maps
    the deployments it holds answers for the same way (an unmapped one would be Azure's 404)."""
    names = [m for m in models if 0 < len(m) <= _DEPLOYMENT_CHARS and "/" not in m][:_DEPLOYMENTS]
    return {"azure_deployments": {name: name for name in names}} if names else {}


AZURE_OPENAI_INFO = ProviderInfo(
    namespace="azure-openai",
    secret_headers=("api-key", "ocp-apim-subscription-key"),
    sdk_clients=(
        SdkClient(
            "azure_openai_client",
            "openai",
            "AzureOpenAI",
            "/azure-openai",
            url_argument="azure_endpoint",
            defaults=(("api_version", AZURE_API_VERSION),),
            summary="An official ``openai.AzureOpenAI`` bound to this session (deployment routes, "
            f"``api-key`` auth; ``api_version`` defaults to {AZURE_API_VERSION}).",
            trust="http_client",
            trust_factory="openai.DefaultHttpxClient",
            fixture="llmts_azure_openai",
        ),
    ),
    # AzureOpenAI() reads the endpoint, key and api version; an ambient Entra token would win over the key.
    env=(
        env_url("AZURE_OPENAI_ENDPOINT", "/azure-openai", "openai.AzureOpenAI"),
        env_key("AZURE_OPENAI_API_KEY", "openai.AzureOpenAI"),
        env_value("OPENAI_API_VERSION", AZURE_API_VERSION, "openai.AzureOpenAI"),
    ),
    replay_config=_azure_replay_config,
    env_overridden=("AZURE_OPENAI_AD_TOKEN",),
    list_prices=OPENAI_PRICES,
)

PROVIDERS = (OPENAI_INFO, AZURE_OPENAI_INFO)
