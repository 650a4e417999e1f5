"""SDK client factories for the ``bedrock`` namespace (``SessionClient.bedrock_client()`` and
``anthropic_bedrock_client()``, declared in ``info.py``).

The session's credential is the AWS access key id (llmts reads it from the SigV4 ``Authorization``
header's ``Credential=`` scope and never verifies the signature), so any secret key works. boto3 has no
``default_headers``: extra headers are added by a ``before-sign`` event handler. Part of the provider
metadata leaf: it imports nothing of llmts, and boto3/anthropic only when called.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["DEFAULT_REGION", "DEFAULT_SECRET_KEY", "anthropic_bedrock_client", "bedrock_client"]

DEFAULT_REGION = "us-east-1"
DEFAULT_SECRET_KEY = "llmts-secret-key"


def bedrock_client(
    *,
    endpoint_url: str,
    api_key: str,
    default_headers: dict[str, str] | None = None,
    **kwargs: Any,
) -> Any:
    """A ``boto3`` ``bedrock-runtime`` client bound to ``endpoint_url`` (extra kwargs go to
    ``boto3.client``: ``config=botocore.config.Config(retries=...)``, ``region_name``...)."""
    boto3 = importlib.import_module("boto3")
    kwargs.setdefault("region_name", DEFAULT_REGION)
    kwargs.setdefault("aws_access_key_id", api_key)
    kwargs.setdefault("aws_secret_access_key", DEFAULT_SECRET_KEY)
    client = boto3.client("bedrock-runtime", endpoint_url=endpoint_url, **kwargs)
    if default_headers:
        headers = dict(default_headers)

        def _add_headers(request: Any, **_: Any) -> None:
            for name, value in headers.items():
                request.headers[name] = value

        client.meta.events.register("before-sign.bedrock-runtime", _add_headers)
    return client


def anthropic_bedrock_client(*, base_url: str, api_key: str, **kwargs: Any) -> Any:
    """An ``anthropic.AnthropicBedrock`` bound to ``base_url`` (SigV4-signed with the session's credential
    as the access key id; extra kwargs go to the constructor)."""
    anthropic = importlib.import_module("anthropic")
    kwargs.setdefault("aws_region", DEFAULT_REGION)
    kwargs.setdefault("aws_access_key", api_key)
    kwargs.setdefault("aws_secret_key", DEFAULT_SECRET_KEY)
    return anthropic.AnthropicBedrock(base_url=base_url, **kwargs)
