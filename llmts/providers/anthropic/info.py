"""The ``anthropic`` namespace as data (read without loading the adapter)."""

from __future__ import annotations

from llmts.providers.info import ProviderInfo, SdkClient

__all__ = ["ANTHROPIC_INFO", "PROVIDERS"]

ANTHROPIC_INFO = ProviderInfo(
    namespace="anthropic",
    sdk_clients=(
        SdkClient("anthropic_client", "anthropic", "Anthropic", "/anthropic"),
        SdkClient("async_anthropic_client", "anthropic", "AsyncAnthropic", "/anthropic"),
    ),
)

PROVIDERS = (ANTHROPIC_INFO,)
