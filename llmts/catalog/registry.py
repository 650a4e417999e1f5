"""The provider registry: adding a provider is one package under ``llmts/providers/`` and one line in
``PACKAGES`` (docs/contributing.md, "Adding a provider").

A registered package has an ``info.py`` (``PROVIDERS``: its namespaces as ``ProviderInfo`` data, standard
library only) and an ``adapter.py`` (``ADAPTERS``: the same namespaces' routes, loaded by
``llmts/providers/adapters.py``). This module reads only the ``info.py`` modules, so the schema and the
Python API can use it without importing the runtime (docs/architecture.md, "Providers and the adapter
registry").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import import_module

from llmts.catalog.info import EnvVariable, ProviderInfo, SdkClient

__all__ = ["CATALOG", "PACKAGES", "RESERVED_ENV", "RESERVED_NAMESPACES", "Catalog"]

# The registry, in routing and listing order; the first package's first namespace is the default provider.
PACKAGES: tuple[str, ...] = (
    "llmts.providers.openai",
    "llmts.providers.anthropic",
    "llmts.providers.gemini",
    "llmts.providers.ollama",
    "llmts.providers.cohere",
    "llmts.providers.bedrock",
)

# Planned namespaces without an adapter yet: configurations may already name them (credentials, scenario
# ``provider`` filters), they just receive no requests.
RESERVED_NAMESPACES: tuple[str, ...] = ()

# The environment the reserved namespaces' official SDKs read, so ``llmts env`` already points them at a
# session; each entry moves to its provider's ``info.py`` when the package is added.
RESERVED_ENV: tuple[ProviderInfo, ...] = ()


@dataclass(frozen=True)
class Catalog:
    """The registered providers as data: every name the schema accepts, the default provider and model,
    and the SDK clients of the Python API."""

    packages: tuple[str, ...]
    providers: tuple[ProviderInfo, ...]
    reserved: tuple[str, ...] = ()
    # Environment declarations of reserved namespaces (``RESERVED_ENV``).
    reserved_env: tuple[ProviderInfo, ...] = ()
    namespaces: tuple[str, ...] = field(init=False)
    # Every provider's SDK environment as (namespace, variable), registered providers first; and the
    # ambient variables to remove.
    env_variables: tuple[tuple[str, EnvVariable], ...] = field(init=False)
    env_overridden: tuple[str, ...] = field(init=False)
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
        if any(info.namespace not in self.reserved for info in self.reserved_env):
            raise ValueError("reserved_env may only declare reserved namespaces")
        declared = (*self.providers, *self.reserved_env)
        env = tuple((info.namespace, variable) for info in declared for variable in info.env)
        names = [variable.name for _, variable in env]
        if len(set(names)) != len(names):
            raise ValueError(f"SDK environment variable names must be unique across providers: {names}")
        object.__setattr__(self, "namespaces", namespaces)
        object.__setattr__(self, "env_variables", env)
        overridden = dict.fromkeys(name for info in declared for name in info.env_overridden)
        object.__setattr__(self, "env_overridden", tuple(overridden))
        object.__setattr__(self, "_sdk_clients", clients)

    @classmethod
    def load(
        cls,
        packages: tuple[str, ...],
        reserved: tuple[str, ...] = (),
        reserved_env: tuple[ProviderInfo, ...] = (),
    ) -> Catalog:
        """Read ``<package>.info.PROVIDERS`` of every registered package, in order."""
        providers: list[ProviderInfo] = []
        for package in packages:
            declared: tuple[ProviderInfo, ...] = import_module(f"{package}.info").PROVIDERS
            providers.extend(declared)
        return cls(packages, tuple(providers), reserved, reserved_env)

    @property
    def default(self) -> ProviderInfo:
        """The provider an unconfigured session and an unqualified explain request stand for."""
        return self.providers[0]

    @property
    def default_model(self) -> str:
        """The model an explained request names when neither it nor the session names one."""
        return self.providers[0].default_model or ""

    def sdk_client(self, name: str) -> tuple[ProviderInfo, SdkClient]:
        """The SDK client named ``name`` and the provider it is bound to; ``KeyError`` if none."""
        return self._sdk_clients[name]

    def sdk_client_names(self) -> tuple[str, ...]:
        return tuple(self._sdk_clients)


CATALOG = Catalog.load(PACKAGES, RESERVED_NAMESPACES, RESERVED_ENV)
