"""The ``bedrock`` namespace as data (read without loading the adapter).

boto3 and ``AnthropicBedrock`` take neither ``api_key`` nor ``default_headers`` the way the other SDKs do,
so their factories are the small functions of ``llmts/providers/bedrock/sdk.py`` (imported only when a
client is built).
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from llmts.catalog.info import ProviderInfo, SdkClient, env_key, env_url, env_value
from llmts.catalog.prices import BEDROCK_PRICES

__all__ = ["BEDROCK_INFO", "PROVIDERS", "check_upstream", "upstream_region"]

# An AWS host of Bedrock Runtime names its region: bedrock-runtime[-fips].<region>.amazonaws.com[.cn], also
# behind an interface endpoint (vpce-....bedrock-runtime.<region>.vpce.amazonaws.com).
_AWS_HOST = re.compile(r"(?:^|\.)amazonaws\.com(?:\.cn)?$")
_RUNTIME_HOST = re.compile(
    r"(?:^|\.)bedrock-runtime(?:-fips)?\.([a-z]{2}(?:-[a-z]+)+-[0-9]+)\.(?:vpce\.)?amazonaws\.com(?:\.cn)?$"
)


def upstream_region(url: str) -> str | None:
    """The AWS region a Bedrock upstream's host names, or None (a proxy or test double: the request is
    then signed for the region the client signed for, docs/recording.md "Bedrock upstreams")."""
    match = _RUNTIME_HOST.search((urlsplit(url).hostname or "").lower())
    return match.group(1) if match else None


def check_upstream(url: str) -> str | None:
    """An ``amazonaws.com`` upstream must name the region its requests are signed for."""
    host = (urlsplit(url).hostname or "").lower()
    if _AWS_HOST.search(host) and upstream_region(url) is None:
        return (
            f"the AWS host {host[:128]!r} names no region to sign for; "
            "use https://bedrock-runtime.<region>.amazonaws.com"
        )
    return None


BEDROCK_INFO = ProviderInfo(
    namespace="bedrock",
    secret_headers=("x-amz-security-token",),
    sdk_clients=(
        SdkClient(
            "bedrock_client",
            "llmts.providers.bedrock.sdk",
            "bedrock_client",
            "/bedrock",
            "endpoint_url",
            summary="A ``boto3`` ``bedrock-runtime`` client bound to this session (SigV4-signed with the "
            "session's ``bedrock`` credential as access key id; extra kwargs go to ``boto3.client``, e.g. "
            "``config=``).",
            trust="ca_file",
            fixture="llmts_bedrock",
            distribution="boto3",
        ),
        SdkClient(
            "anthropic_bedrock_client",
            "llmts.providers.bedrock.sdk",
            "anthropic_bedrock_client",
            "/bedrock",
            summary="An official ``anthropic.AnthropicBedrock`` bound to this session's ``/bedrock`` root.",
            trust="http_client",
            trust_factory="anthropic.DefaultHttpxClient",
        ),
    ),
    # bedrock-runtime has no model listing (ListFoundationModels is the control-plane ``bedrock`` service);
    # declared like every provider's, for a future listing route.
    listed_models=(
        "anthropic.claude-sonnet-4-5-20250929-v1:0",
        "us.anthropic.claude-3-7-sonnet-20250219-v1:0",
        "amazon.nova-pro-v1:0",
        "meta.llama3-1-70b-instruct-v1:0",
    ),
    # botocore's service-specific endpoint variable; the access key id is the session's credential
    # (SigV4 is not verified), the secret any value.
    env=(
        env_url("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", "/bedrock", "boto3 bedrock-runtime"),
        env_url("ANTHROPIC_BEDROCK_BASE_URL", "/bedrock", "anthropic.AnthropicBedrock"),
        env_key("AWS_ACCESS_KEY_ID", "boto3, AnthropicBedrock"),
        env_value("AWS_SECRET_ACCESS_KEY", "llmts-secret-key", "boto3, AnthropicBedrock"),
        env_value("AWS_REGION", "us-east-1", "AnthropicBedrock, AWS SDKs"),
        env_value("AWS_DEFAULT_REGION", "us-east-1", "boto3"),
    ),
    # A Bedrock API key in the environment would replace SigV4 with another credential.
    env_overridden=("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK"),
    # A forwarded request is signed again for the upstream's region (the adapter's ``sign_upstream``).
    upstream_check=check_upstream,
    list_prices=BEDROCK_PRICES,
)

PROVIDERS = (BEDROCK_INFO,)
