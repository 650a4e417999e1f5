"""The Gemini Live WebSocket routes (docs/design/gemini-live.md).

``/gemini/ws/google.ai.generativelanguage.{v1|v1alpha|v1beta}.GenerativeService.BidiGenerateContent``
(google-genai 3.x dials ``v1``, older releases ``v1beta``/``v1alpha``) and
``...BidiGenerateContentConstrained`` (ephemeral tokens); each also after ``//ws/``, the path
google-genai builds from a base URL ending in ``/``. The credential is the ``x-goog-api-key`` header
(google-genai), the ``?key=`` query parameter (raw clients, Google's cookbook) or
``Authorization: Token auth_tokens/...`` (an ephemeral token). A refused credential is told after the
101 as the service does, by a close 1008. No subprotocol.

The protocol's modules load on the first connection, not with the adapter.
"""

from __future__ import annotations

from llmts.providers.base import ProviderRequest
from llmts.providers.gemini.live.closes import unauthorized_after_upgrade
from llmts.providers.realtime import RealtimeOpening, RealtimeProtocol, RealtimeRoute

__all__ = ["LIVE_ROUTES", "live_credential", "open_live"]

_METHOD = (
    "ws/google.ai.generativelanguage.<any(v1,v1alpha,v1beta):version>.GenerativeService."
    "<any(BidiGenerateContent,BidiGenerateContentConstrained):method>"
)


def live_credential(request: ProviderRequest) -> str | None:
    key = request.header("x-goog-api-key") or request.query("key")
    if key:
        return key
    authorization = request.header("authorization")
    if authorization is not None and authorization[:6].lower() == "token ":
        return authorization[6:].strip() or None
    return None


def open_live(opening: RealtimeOpening) -> RealtimeProtocol:
    from llmts.providers.gemini.live.protocol import GeminiLiveProtocol

    return GeminiLiveProtocol(opening)


LIVE_ROUTES = tuple(
    RealtimeRoute(
        rule=f"/gemini{slashes}{_METHOD}",
        credential=live_credential,
        open=open_live,
        unauthorized_after_upgrade=unauthorized_after_upgrade,
    )
    for slashes in ("/", "//")
)
