"""The ``ollama`` namespace as data (read without loading the adapter)."""

from __future__ import annotations

from llmts.providers.info import ProviderInfo, SdkClient

__all__ = ["OLLAMA_INFO", "PROVIDERS"]

OLLAMA_INFO = ProviderInfo(
    namespace="ollama",
    sdk_clients=(
        # ollama.Client(host=..., headers=...): no api_key keyword; the credential goes as a bearer header.
        SdkClient(
            "ollama_client",
            "ollama",
            "Client",
            "/ollama",
            url_argument="host",
            headers_argument="headers",
            credential_header="authorization",
        ),
        SdkClient(
            "async_ollama_client",
            "ollama",
            "AsyncClient",
            "/ollama",
            url_argument="host",
            headers_argument="headers",
            credential_header="authorization",
        ),
        # The openai SDK on Ollama's OpenAI-compatible API, with the ollama namespace's credential.
        SdkClient("ollama_openai_client", "openai", "OpenAI", "/ollama/v1"),
    ),
)

PROVIDERS = (OLLAMA_INFO,)
