"""The ``bedrock`` namespace as data (read without loading the adapter).

boto3 and ``AnthropicBedrock`` take neither ``api_key`` nor ``default_headers`` the way the other SDKs do,
so their factories are the small functions of ``llmts/providers/bedrock/sdk.py`` (imported only when a
client is built).
"""

from __future__ import annotations

from llmts.providers.info import ProviderInfo, SdkClient

__all__ = ["BEDROCK_INFO", "PROVIDERS"]

BEDROCK_INFO = ProviderInfo(
    namespace="bedrock",
    sdk_clients=(
        SdkClient(
            "bedrock_client", "llmts.providers.bedrock.sdk", "bedrock_client", "/bedrock", "endpoint_url"
        ),
        SdkClient(
            "anthropic_bedrock_client", "llmts.providers.bedrock.sdk", "anthropic_bedrock_client", "/bedrock"
        ),
    ),
)

PROVIDERS = (BEDROCK_INFO,)
