"""The ``gemini`` adapter: the Gemini Developer API under ``/gemini/v1beta`` and ``/gemini/v1``
(google-genai 3.x defaults to ``v1``, 1.x and 2.x to ``v1beta``).

Auth: the ``x-goog-api-key`` header (what google-genai sends) or the ``?key=`` query parameter (curl).
Gemini Live (``BidiGenerateContent`` over a WebSocket) is ``live/`` (``live/routes.py``).
"""

from __future__ import annotations

from llmts.providers.base import InferenceRoute, ProviderAdapter, ProviderRequest, SimpleRoute
from llmts.providers.gemini.embeddings import (
    EMBED_RULES,
    parse_batch_embed,
    parse_embed,
    render_batch_embed,
    render_embed,
)
from llmts.providers.gemini.errors import render_gemini_error
from llmts.providers.gemini.images import parse_generate_or_image, render_generate_or_image
from llmts.providers.gemini.info import GEMINI_INFO
from llmts.providers.gemini.live.routes import LIVE_ROUTES
from llmts.providers.gemini.models import count_tokens, get_model, list_models, unknown_method
from llmts.providers.gemini.parse import STREAM_SSE, parse_stream
from llmts.providers.gemini.render import render_generate
from llmts.providers.gemini.strict_rules import GENERATE_RULES

__all__ = ["ADAPTERS", "GEMINI"]

_MODELS = "/gemini/<any(v1,v1beta):version>/models"


def _api_key(request: ProviderRequest) -> str | None:
    return request.header("x-goog-api-key") or request.query("key")


GEMINI = ProviderAdapter(
    info=GEMINI_INFO,
    prefix="/gemini",
    routes=(
        InferenceRoute(
            f"{_MODELS}/<model>:generateContent",
            ("POST",),
            parse_generate_or_image,
            render_generate_or_image,
            strict_rules=GENERATE_RULES,
        ),
        # Only the ``?alt=sse`` stream is SSE text; the JSON-array stream has no frames to act on.
        InferenceRoute(
            f"{_MODELS}/<model>:streamGenerateContent",
            ("POST",),
            parse_stream,
            render_generate,
            in_stream_faults=frozenset({STREAM_SSE}),
            strict_rules=GENERATE_RULES,
        ),
        InferenceRoute(
            f"{_MODELS}/<model>:embedContent", ("POST",), parse_embed, render_embed, strict_rules=EMBED_RULES
        ),
        InferenceRoute(
            f"{_MODELS}/<model>:batchEmbedContents",
            ("POST",),
            parse_batch_embed,
            render_batch_embed,
            strict_rules=EMBED_RULES,
        ),
        SimpleRoute(f"{_MODELS}/<model>:countTokens", ("POST",), count_tokens, "count_tokens"),
        SimpleRoute(_MODELS, ("GET",), list_models, "models.list"),
        SimpleRoute(f"{_MODELS}/<model>", ("GET",), get_model, "models.get"),
        # Other ``:method`` suffixes (batchGenerateContent...): 404 rather than 405.
        SimpleRoute(f"{_MODELS}/<model>", ("POST",), unknown_method),
    ),
    credential=_api_key,
    render_error=render_gemini_error,
    realtime_routes=LIVE_ROUTES,
)

ADAPTERS = (GEMINI,)
