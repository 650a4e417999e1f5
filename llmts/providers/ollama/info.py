"""The ``ollama`` namespace as data (read without loading the adapter)."""

from __future__ import annotations

from llmts.catalog.info import ProviderInfo, SdkClient, env_url
from llmts.catalog.prices import LOCAL_MODELS_FREE

__all__ = ["OLLAMA_INFO", "PROVIDERS"]

OLLAMA_INFO = ProviderInfo(
    namespace="ollama",
    # What a model listing shows when a configuration neither lists nor names a model.
    listed_models=("llama3.2", "qwen3", "gpt-oss:20b"),
    # ollama.Client() reads the host (a URL with a path works).
    env=(env_url("OLLAMA_HOST", "/ollama", "ollama.Client"),),
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
            summary="An official ``ollama.Client`` bound to this session (the credential as a bearer "
            "header).",
            trust="verify",
            fixture="llmts_ollama",
        ),
        SdkClient(
            "async_ollama_client",
            "ollama",
            "AsyncClient",
            "/ollama",
            url_argument="host",
            headers_argument="headers",
            credential_header="authorization",
            summary="An official ``ollama.AsyncClient`` bound to this session (the credential as a bearer "
            "header).",
            trust="verify",
        ),
        # The openai SDK on Ollama's OpenAI-compatible API, with the ollama namespace's credential.
        SdkClient(
            "ollama_openai_client",
            "openai",
            "OpenAI",
            "/ollama/v1",
            summary="An official ``openai.OpenAI`` bound to this session's Ollama OpenAI-compatible API "
            "(``/ollama/v1``, the ``ollama`` credential).",
            trust="http_client",
            trust_factory="openai.DefaultHttpxClient",
        ),
    ),
    list_prices=LOCAL_MODELS_FREE,
)

PROVIDERS = (OLLAMA_INFO,)
