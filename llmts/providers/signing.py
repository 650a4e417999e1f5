"""The upstream-signing hook a provider may declare on its adapter (``ProviderAdapter.sign_upstream``;
docs/recording.md, "Forwarding", and docs/architecture.md, "Record and replay").

A request forwarded to a session's upstream carries the client's own credential, which is all a provider
whose credential is a key needs. A credential bound to the host it was made for (an AWS SigV4 signature
names llmts's host) must be made again for the upstream's: the adapter's signer does that, so the server
forwards without knowing any signing scheme or provider.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

__all__ = ["SignedRequest", "UpstreamRequest", "UpstreamSigner"]


@dataclass(frozen=True, slots=True)
class UpstreamRequest:
    """A request on its way to the upstream, as the server will send it: the upstream's URL, the client's
    end-to-end headers (lower-case names) and the body as it came."""

    method: str
    url: str
    headers: Mapping[str, str]
    body: bytes


@dataclass(frozen=True, slots=True)
class SignedRequest:
    """The headers to send instead of the request's, and the signer's own secrets they carry (a key id, a
    session token), which a recording of the exchange redacts should the upstream echo them."""

    headers: Mapping[str, str]
    secrets: tuple[str, ...] = ()


# Called in the request's greenlet after gevent patched the process; raises an ``LlmtsError`` (rendered in
# the provider's envelope, nothing forwarded) when the request cannot be signed.
UpstreamSigner = Callable[[UpstreamRequest], SignedRequest]
