"""The ``anthropic`` namespace as data (read without loading the adapter)."""

from __future__ import annotations

from llmts.catalog.info import ProviderInfo, SdkClient, env_key, env_url
from llmts.catalog.prices import ANTHROPIC_PRICES

__all__ = ["ANTHROPIC_INFO", "PROVIDERS"]

ANTHROPIC_INFO = ProviderInfo(
    namespace="anthropic",
    secret_headers=("x-api-key",),
    sdk_clients=(
        SdkClient(
            "anthropic_client",
            "anthropic",
            "Anthropic",
            "/anthropic",
            trust="http_client",
            trust_factory="anthropic.DefaultHttpxClient",
            fixture="llmts_anthropic",
        ),
        SdkClient(
            "async_anthropic_client",
            "anthropic",
            "AsyncAnthropic",
            "/anthropic",
            trust="http_client",
            trust_factory="anthropic.DefaultAsyncHttpxClient",
        ),
    ),
    listed_models=("claude-sonnet-4-6", "claude-haiku-4-5", "claude-opus-4-7"),
    # Anthropic() appends /v1 itself; an ambient auth token would be sent beside the key.
    env=(
        env_url("ANTHROPIC_BASE_URL", "/anthropic", "anthropic.Anthropic"),
        env_key("ANTHROPIC_API_KEY", "anthropic.Anthropic"),
    ),
    env_overridden=("ANTHROPIC_AUTH_TOKEN",),
    list_prices=ANTHROPIC_PRICES,
)

PROVIDERS = (ANTHROPIC_INFO,)
