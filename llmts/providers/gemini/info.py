"""The ``gemini`` namespace as data (read without loading the adapter)."""

from __future__ import annotations

from llmts.providers.info import ProviderInfo, SdkClient

__all__ = ["GEMINI_INFO", "PROVIDERS"]

GEMINI_INFO = ProviderInfo(
    namespace="gemini",
    sdk_clients=(
        # google-genai takes the URL and extra headers inside ``http_options``.
        SdkClient(
            "gemini_client",
            "google.genai",
            "Client",
            "/gemini",
            headers_argument="headers",
            options_argument="http_options",
        ),
    ),
)

PROVIDERS = (GEMINI_INFO,)
