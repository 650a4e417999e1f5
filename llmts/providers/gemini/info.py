"""The ``gemini`` namespace as data (read without loading the adapter)."""

from __future__ import annotations

from llmts.catalog.info import ProviderInfo, SdkClient, env_key, env_url, env_value
from llmts.catalog.prices import GEMINI_PRICES

__all__ = ["GEMINI_INFO", "PROVIDERS"]

GEMINI_INFO = ProviderInfo(
    namespace="gemini",
    secret_headers=("x-goog-api-key",),
    sdk_clients=(
        # google-genai takes the URL and extra headers inside ``http_options``.
        SdkClient(
            "gemini_client",
            "google.genai",
            "Client",
            "/gemini",
            headers_argument="headers",
            options_argument="http_options",
            summary="An official ``google.genai.Client`` bound to this session (``api_version``: the SDK's "
            "default).",
            option_keywords=("api_version",),
            trust="http_options",
            fixture="llmts_gemini",
            distribution="google-genai",
        ),
    ),
    listed_models=("gemini-2.5-flash", "gemini-2.5-pro", "gemini-2.0-flash"),
    # google-genai reads GOOGLE_GEMINI_BASE_URL and GEMINI_API_KEY (an ambient GOOGLE_API_KEY would win, so
    # it is removed); GOOGLE_GENAI_USE_VERTEXAI=false keeps an ambient Vertex setting off. litellm's gemini/
    # route (and dspy and smolagents through it) reads GEMINI_API_BASE and appends /models/... itself.
    env=(
        env_url("GOOGLE_GEMINI_BASE_URL", "/gemini", "google.genai.Client"),
        env_key("GEMINI_API_KEY", "google.genai.Client"),
        env_value("GOOGLE_GENAI_USE_VERTEXAI", "false", "google.genai.Client"),
        env_url("GEMINI_API_BASE", "/gemini/v1beta", "litellm (gemini/), dspy, smolagents"),
    ),
    env_overridden=("GOOGLE_API_KEY", "GOOGLE_GENAI_USE_ENTERPRISE"),
    list_prices=GEMINI_PRICES,
)

PROVIDERS = (GEMINI_INFO,)
