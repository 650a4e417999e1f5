"""What the rest of llmts knows about a provider before (or without) loading its adapter.

Each provider package declares its namespaces in its own ``info.py`` with these classes: plain frozen
data and the standard library only, so the schema (which validates namespace names), the Python API
(which builds SDK clients and their environment) and the catalog read it without importing the runtime or
the adapter (docs/architecture.md, "Providers and the adapter registry").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from llmts.catalog.prices import ListPrice

__all__ = ["EnvVariable", "ProviderInfo", "SdkClient", "Trust", "env_key", "env_url", "env_value"]

# How an SDK client trusts an https server's certificate (``SdkClient.trust``).
Trust = Literal["http_client", "verify", "ca_file", "http_options"]


@dataclass(frozen=True, slots=True)
class SdkClient:
    """How ``SessionClient.sdk_client(name)`` builds one official SDK client bound to a session.

    The client is ``<module>.<factory>(**kwargs)`` with the session's credential as ``api_key`` and
    ``<provider base><path>`` as the ``url_argument`` keyword. When ``options_argument`` is set
    (google-genai's ``http_options``), the URL and the extra headers go inside that dict instead of being
    keyword arguments; ``defaults`` are keyword arguments the caller may override. When
    ``credential_header`` is set (the ``ollama`` client has no ``api_key``), the credential is sent as
    ``<credential_header>: Bearer <credential>`` among the extra headers instead of as ``api_key``.

    ``trust`` says how the client is made to trust the certificate of a server on ``https`` (``llmts serve
    --tls``, docs/tls.md), with ``ctx`` an ``ssl.SSLContext`` trusting it: ``"http_client"`` passes
    ``http_client=<trust_factory>(verify=ctx)`` (openai's and anthropic's ``DefaultHttpxClient``),
    ``"verify"`` passes ``verify=ctx`` (an httpx-based client or factory), ``"ca_file"`` passes
    ``verify=<the certificate file>`` (boto3), ``"http_options"`` puts google-genai's ``client_args`` and
    ``async_client_args`` in the options dict. A caller's own argument of that name wins.

    ``SessionClient`` and the conversation client have a method of the same ``name`` for each
    (``llmts/client/sdk_shortcuts.py``, generated from these declarations): ``summary`` is its docstring
    (default: "An official ``<module>.<factory>`` bound to this session."), and ``option_keywords``
    its keyword-only arguments (``str | None``) that go inside the ``options_argument`` dict when given
    (google-genai's ``api_version``); ``sdk_client(name, ...)`` takes them too.

    ``fixture`` names the pytest plugin's fixture that returns this client for ``llmts_session``
    (``llmts_openai``; one per provider's own SDK, docs/pytest-plugin.md), and ``distribution`` the
    package its message names when the SDK is not installed (default: ``module``'s top-level package).
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
    summary: str = ""
    option_keywords: tuple[str, ...] = ()
    trust: Trust | None = None
    trust_factory: str = ""
    fixture: str = ""
    distribution: str = ""

    def __post_init__(self) -> None:
        if self.fixture and not self.fixture.startswith("llmts_"):
            raise ValueError(f"SDK client {self.name!r}: its fixture's name starts with llmts_")
        if self.option_keywords and self.options_argument is None:
            raise ValueError(f"SDK client {self.name!r}: option_keywords need an options_argument")
        if (self.trust == "http_client") != bool(self.trust_factory):
            raise ValueError(f"SDK client {self.name!r}: trust 'http_client' and a trust_factory go together")
        if self.trust == "http_options" and self.options_argument is None:
            raise ValueError(f"SDK client {self.name!r}: trust 'http_options' needs an options_argument")

    def doc(self) -> str:
        """The named method's docstring."""
        return self.summary or f"An official ``{self.module}.{self.factory}`` bound to this session."

    def package(self) -> str:
        """What to install for this client."""
        return self.distribution or self.module.partition(".")[0]


@dataclass(frozen=True, slots=True)
class EnvVariable:
    """One environment variable an official SDK reads, which ``llmts env``, the ``llmts_env`` fixture and
    ``SessionClient.sdk_environment()`` set for a session (docs/server.md, "llmts env"): a path under the
    session's provider base (``url``), the session's credential for the namespace (``key``), or the
    constant ``value`` (``value``). ``reader`` names who reads it, for the docs."""

    name: str
    kind: Literal["url", "key", "value"]
    value: str
    reader: str


def env_url(name: str, path: str, reader: str) -> EnvVariable:
    return EnvVariable(name, "url", path, reader)


def env_key(name: str, reader: str) -> EnvVariable:
    return EnvVariable(name, "key", "", reader)


def env_value(name: str, value: str, reader: str) -> EnvVariable:
    return EnvVariable(name, "value", value, reader)


@dataclass(frozen=True, slots=True)
class ProviderInfo:
    """One provider namespace as data: its name, the model an unconfigured session serves when it is the
    default provider (the first one the catalog lists), the SDK clients the Python API offers, the models
    its model listing shows when a configuration neither lists nor names any (any name is served then),
    and the environment its official SDKs read: the variables to set and the ambient ones to remove
    (they would send a client built from the environment elsewhere or with another credential)."""

    namespace: str
    default_model: str | None = None
    sdk_clients: tuple[SdkClient, ...] = ()
    listed_models: tuple[str, ...] = ()
    env: tuple[EnvVariable, ...] = ()
    env_overridden: tuple[str, ...] = ()
    # Checks an upstream URL for the namespace when a session is configured (docs/recording.md): the
    # reason it is refused, or None.
    upstream_check: Callable[[str], str | None] | None = None
    # What a replay of the namespace's recorded answers needs in its configuration besides their
    # scenarios, from the models they were recorded for (docs/recording.md; Azure: the deployments).
    replay_config: Callable[[Sequence[str]], dict[str, Any]] | None = None
    # The list prices its models are billed by (llmts/catalog/prices.py, docs/prices.md): a session's
    # ``pricing`` overrides them; a model none matches has no cost (``cost_usd: null``).
    list_prices: tuple[ListPrice, ...] = ()
    # The request headers (any case) its clients may send a credential in besides ``Authorization``:
    # never recorded, never logged (llmts/catalog/credentials.py).
    secret_headers: tuple[str, ...] = ()
