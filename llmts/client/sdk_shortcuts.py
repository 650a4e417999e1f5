"""The named SDK-client methods of ``SessionClient`` and ``ConversationClient`` (llmts/client/).

Generated from the providers' ``SdkClient`` declarations (their ``info.py``: the name, the docstring, the
keyword-only arguments) by ``python -m tests.client.test_sdk_shortcuts``; do not edit by hand, that test
fails while this file differs from what the declarations give. Each method is one line over
``sdk_client(name)``. They are written out rather than made at run time so that type checkers and editors
see each one with its signature (docs/architecture.md, "Providers and the adapter registry").
"""

from __future__ import annotations

from typing import Any

__all__ = ["SdkClientShortcuts"]


class SdkClientShortcuts:
    """One-line conveniences over ``sdk_client``, one per SDK client the providers declare, shared
    by ``SessionClient`` and ``ConversationClient``."""

    def sdk_client(self, name: str, /, **kwargs: Any) -> Any:
        raise NotImplementedError

    def openai_client(self, **kwargs: Any) -> Any:
        """An official ``openai.OpenAI`` bound to this session (extra kwargs go to the constructor)."""
        return self.sdk_client("openai_client", **kwargs)

    def async_openai_client(self, **kwargs: Any) -> Any:
        """An official ``openai.AsyncOpenAI`` bound to this session."""
        return self.sdk_client("async_openai_client", **kwargs)

    def azure_openai_client(self, **kwargs: Any) -> Any:
        """An official ``openai.AzureOpenAI`` bound to this session (deployment routes, ``api-key`` auth;
        ``api_version`` defaults to 2024-10-21)."""
        return self.sdk_client("azure_openai_client", **kwargs)

    def anthropic_client(self, **kwargs: Any) -> Any:
        """An official ``anthropic.Anthropic`` bound to this session."""
        return self.sdk_client("anthropic_client", **kwargs)

    def async_anthropic_client(self, **kwargs: Any) -> Any:
        """An official ``anthropic.AsyncAnthropic`` bound to this session."""
        return self.sdk_client("async_anthropic_client", **kwargs)

    def gemini_client(self, *, api_version: str | None = None, **kwargs: Any) -> Any:
        """An official ``google.genai.Client`` bound to this session (``api_version``: the SDK's default)."""
        return self.sdk_client("gemini_client", api_version=api_version, **kwargs)

    def ollama_client(self, **kwargs: Any) -> Any:
        """An official ``ollama.Client`` bound to this session (the credential as a bearer header)."""
        return self.sdk_client("ollama_client", **kwargs)

    def async_ollama_client(self, **kwargs: Any) -> Any:
        """An official ``ollama.AsyncClient`` bound to this session (the credential as a bearer header)."""
        return self.sdk_client("async_ollama_client", **kwargs)

    def ollama_openai_client(self, **kwargs: Any) -> Any:
        """An official ``openai.OpenAI`` bound to this session's Ollama OpenAI-compatible API (``/ollama/v1``,
        the ``ollama`` credential)."""
        return self.sdk_client("ollama_openai_client", **kwargs)

    def cohere_client(self, **kwargs: Any) -> Any:
        """An official ``cohere.ClientV2`` bound to this session (Bearer credential)."""
        return self.sdk_client("cohere_client", **kwargs)

    def async_cohere_client(self, **kwargs: Any) -> Any:
        """An official ``cohere.AsyncClientV2`` bound to this session (Bearer credential)."""
        return self.sdk_client("async_cohere_client", **kwargs)

    def bedrock_client(self, **kwargs: Any) -> Any:
        """A ``boto3`` ``bedrock-runtime`` client bound to this session (SigV4-signed with the session's
        ``bedrock`` credential as access key id; extra kwargs go to ``boto3.client``, e.g. ``config=``)."""
        return self.sdk_client("bedrock_client", **kwargs)

    def anthropic_bedrock_client(self, **kwargs: Any) -> Any:
        """An official ``anthropic.AnthropicBedrock`` bound to this session's ``/bedrock`` root."""
        return self.sdk_client("anthropic_bedrock_client", **kwargs)
