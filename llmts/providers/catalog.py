"""The provider registry: adding a provider is one package under ``llmts/providers/`` and one line in
``PACKAGES`` (docs/contributing.md, "Adding a provider").

A registered package has an ``info.py`` (``PROVIDERS``: its namespaces as ``ProviderInfo`` data, standard
library only) and an ``adapter.py`` (``ADAPTERS``: the same namespaces' routes, loaded by
``llmts/providers/adapters.py``). This module reads only the ``info.py`` modules, so the schema and the
Python API can use it without importing the runtime (docs/architecture.md, "Providers").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import import_module

from llmts.providers.info import ProviderInfo, SdkClient

__all__ = ["CATALOG", "PACKAGES", "RESERVED_NAMESPACES", "Catalog"]

# The registry, in routing and listing order; the first package's first namespace is the default provider.
PACKAGES: tuple[str, ...] = (
    "llmts.providers.openai",
    "llmts.providers.anthropic",
    "llmts.providers.gemini",
    "llmts.providers.cohere",
)

# Planned namespaces without an adapter yet: configurations may already name them (credentials, scenario
# ``provider`` filters), they just receive no requests.
RESERVED_NAMESPACES: tuple[str, ...] = ("ollama", "bedrock")


@dataclass(frozen=True)
class Catalog:
    """The registered providers as data: every name the schema accepts, the default provider and model,
    and the SDK clients of the Python API."""

    packages: tuple[str, ...]
    providers: tuple[ProviderInfo, ...]
    reserved: tuple[str, ...] = ()
    namespaces: tuple[str, ...] = field(init=False)
    _sdk_clients: dict[str, tuple[ProviderInfo, SdkClient]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        namespaces = (*(info.namespace for info in self.providers), *self.reserved)
        if not self.providers or len(set(namespaces)) != len(namespaces):
            raise ValueError(f"provider namespaces must be unique and at least one served: {namespaces}")
        if self.providers[0].default_model is None:
            default = self.providers[0].namespace
            raise ValueError(f"the default provider {default!r} declares no default_model")
        clients = {client.name: (info, client) for info in self.providers for client in info.sdk_clients}
        if len(clients) != sum(len(info.sdk_clients) for info in self.providers):
            raise ValueError("SDK client names must be unique across providers")
        object.__setattr__(self, "namespaces", namespaces)
        object.__setattr__(self, "_sdk_clients", clients)

    @classmethod
    def load(cls, packages: tuple[str, ...], reserved: tuple[str, ...] = ()) -> Catalog:
        """Read ``<package>.info.PROVIDERS`` of every registered package, in order."""
        providers: list[ProviderInfo] = []
        for package in packages:
            declared: tuple[ProviderInfo, ...] = import_module(f"{package}.info").PROVIDERS
            providers.extend(declared)
        return cls(packages, tuple(providers), reserved)

    @property
    def default(self) -> ProviderInfo:
        """The provider an unconfigured session and an unqualified explain request stand for."""
        return self.providers[0]

    @property
    def default_model(self) -> str:
        """The model an unconfigured session serves (and ``SessionConfig.models`` defaults to)."""
        return self.providers[0].default_model or ""

    def sdk_client(self, name: str) -> tuple[ProviderInfo, SdkClient]:
        """The SDK client named ``name`` and the provider it is bound to; ``KeyError`` if none."""
        return self._sdk_clients[name]

    def sdk_client_names(self) -> tuple[str, ...]:
        return tuple(self._sdk_clients)


CATALOG = Catalog.load(PACKAGES, RESERVED_NAMESPACES)
