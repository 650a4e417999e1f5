"""Trusting a server on ``https`` (``llmts serve --tls``, docs/tls.md): the ``ssl.SSLContext`` the Python
API builds from the server's certificate file, how each official SDK client is handed it (as its provider
declares in ``SdkClient.trust``), and a CA bundle for code that builds its clients from the environment.

Standard library only; an SDK's httpx client class is imported when a client of that SDK is asked for.
"""

from __future__ import annotations

import importlib
import os
import ssl
from pathlib import Path
from typing import Any

from llmts.catalog.info import SdkClient

__all__ = [
    "CA_BUNDLE_VARIABLES",
    "NODE_CA_VARIABLE",
    "default_client_context",
    "sharing_default_context",
    "trust_context",
    "trusting_kwargs",
    "write_ca_bundle",
]

# Adds a certificate to Node's trust store (read when node starts); it replaces nothing.
NODE_CA_VARIABLE = "NODE_EXTRA_CA_CERTS"
# Replace a process's CA bundle: httpx (openai, anthropic, cohere, ollama) and google-genai read
# SSL_CERT_FILE, botocore AWS_CA_BUNDLE. Set only to a bundle that keeps the usual CAs (``write_ca_bundle``).
CA_BUNDLE_VARIABLES = ("SSL_CERT_FILE", "AWS_CA_BUNDLE")


def trust_context(ca_file: str | None, verify: bool = True) -> ssl.SSLContext:
    """A client-side context trusting ``ca_file`` (a PEM certificate or bundle) alone, or the system's CAs
    when it is None; ``verify=False`` checks nothing (a server whose certificate you cannot get)."""
    if not verify:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        return context
    return ssl.create_default_context(cafile=ca_file)


def _http_client(spec: SdkClient, context: ssl.SSLContext) -> Any:
    """The SDK's own default httpx client class (``spec.trust_factory``) verifying with ``context``."""
    module, _, name = spec.trust_factory.rpartition(".")
    return getattr(importlib.import_module(module), name)(verify=context)


def trusting_kwargs(
    spec: SdkClient, kwargs: dict[str, Any], context: ssl.SSLContext, ca_file: str | None, verify: bool
) -> None:
    """Add to ``kwargs`` (an SDK client's constructor arguments, its options dict already built) what
    makes that client trust the server (``spec.trust``); arguments the caller gave win."""
    if spec.trust == "http_client":
        if "http_client" not in kwargs:
            kwargs["http_client"] = _http_client(spec, context)
    elif spec.trust == "verify":
        kwargs.setdefault("verify", context)
    elif spec.trust == "ca_file":  # boto3 takes a file (or False), not a context
        kwargs.setdefault("verify", ca_file if verify and ca_file else verify)
    elif spec.trust == "http_options" and spec.options_argument is not None:
        # google-genai: ``verify`` for its httpx clients, ``ssl`` for the Live API's websockets and aiohttp;
        # each client drops the key it does not take.
        options = kwargs[spec.options_argument]
        options["client_args"] = {"verify": context, **(options.get("client_args") or {})}
        options["async_client_args"] = {
            "verify": context,
            "ssl": context,
            **(options.get("async_client_args") or {}),
        }


# What decides the SDKs' own default context (httpx reads them when it builds one): the shared context
# is rebuilt when any of them changes.
_CONTEXT_VARIABLES = ("SSL_CERT_FILE", "SSL_CERT_DIR", "SSLKEYLOGFILE")
_shared_default: tuple[tuple[str | None, ...], ssl.SSLContext] | None = None


def default_client_context() -> ssl.SSLContext:
    """One context per process, built as httpx builds its default (certifi's CAs, or ``SSL_CERT_FILE``):
    building one loads a CA bundle, about 20 ms of CPU, which every ``openai.OpenAI()`` pays and a test
    suite creating a client per test pays thousands of times."""
    global _shared_default
    environment = tuple(os.environ.get(name) for name in _CONTEXT_VARIABLES)
    shared = _shared_default
    if shared is not None and shared[0] == environment:
        return shared[1]
    try:
        import httpx
    except ImportError:
        context = ssl.create_default_context(cafile=_default_bundle())
    else:
        context = httpx.create_ssl_context()
    _shared_default = (environment, context)
    return context


def sharing_default_context(spec: SdkClient, kwargs: dict[str, Any]) -> None:
    """Hand a client for a plain ``http`` server the process's shared context (``default_client_context``)
    where its SDK would build its own; arguments the caller gave win. No ``http`` connection uses it (a
    client you point at an ``https`` URL yourself should get its own ``http_client``). A factory of llmts's
    own (``module`` under ``llmts.``, cohere's) is left alone: given ``verify``, it would build a plain
    httpx client in place of the SDK's default one."""
    if spec.trust == "http_client":
        if "http_client" not in kwargs:
            kwargs["http_client"] = _http_client(spec, default_client_context())
    elif spec.trust == "verify":
        if not spec.module.startswith("llmts."):
            kwargs.setdefault("verify", default_client_context())
    elif spec.trust == "http_options" and spec.options_argument is not None:
        # google-genai: ``verify`` for its httpx clients, ``ssl`` for aiohttp and its Live API's websockets.
        options = kwargs[spec.options_argument]
        context = default_client_context()
        options["client_args"] = {"verify": context, **(options.get("client_args") or {})}
        options["async_client_args"] = {
            "verify": context,
            "ssl": context,
            **(options.get("async_client_args") or {}),
        }


def _default_bundle() -> str | None:
    """The CA bundle the SDKs use by default: certifi's (httpx, google-genai, botocore), else OpenSSL's."""
    try:
        import certifi
    except ImportError:
        return ssl.get_default_verify_paths().cafile
    return str(certifi.where())


def write_ca_bundle(ca_file: str, target: str | Path) -> Path:
    """Write the usual CAs plus ``ca_file`` to ``target``: a bundle ``SSL_CERT_FILE``/``AWS_CA_BUNDLE`` may
    point at without breaking the process's other TLS connections (those variables replace the bundle)."""
    parts = []
    default = _default_bundle()
    if default and os.path.isfile(default):
        parts.append(Path(default).read_bytes().rstrip(b"\n") + b"\n")
    parts.append(Path(ca_file).read_bytes())
    path = Path(target)
    path.write_bytes(b"".join(parts))
    return path
