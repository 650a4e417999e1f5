"""What the rest of llmts knows about a provider before (or without) loading its adapter.

Each provider package declares its namespaces in its own ``info.py`` with these two classes: plain frozen
data and the standard library only, so the schema (which validates namespace names), the Python API
(which builds SDK clients) and the catalog read it without importing the runtime or the adapter
(docs/architecture.md, "Providers").
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ProviderInfo", "SdkClient"]


@dataclass(frozen=True, slots=True)
class SdkClient:
    """How ``SessionClient.sdk_client(name)`` builds one official SDK client bound to a session.

    The client is ``<module>.<factory>(**kwargs)`` with the session's credential as ``api_key`` and
    ``<provider base><path>`` as the ``url_argument`` keyword. When ``options_argument`` is set
    (google-genai's ``http_options``), the URL and the extra headers go inside that dict instead of being
    keyword arguments; ``defaults`` are keyword arguments the caller may override. When
    ``credential_header`` is set (the ``ollama`` client has no ``api_key``), the credential is sent as
    ``<credential_header>: Bearer <credential>`` among the extra headers instead of as ``api_key``.
    """

    name: str
    module: str
    factory: str
    path: str
    url_argument: str = "base_url"
    headers_argument: str = "default_headers"
    options_argument: str | None = None
    defaults: tuple[tuple[str, str], ...] = ()
    credential_header: str | None = None


@dataclass(frozen=True, slots=True)
class ProviderInfo:
    """One provider namespace as data: its name, the model an unconfigured session serves when it is the
    default provider (the first one the catalog lists), and the SDK clients the Python API offers."""

    namespace: str
    default_model: str | None = None
    sdk_clients: tuple[SdkClient, ...] = ()
