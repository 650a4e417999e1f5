"""The ``cohere`` adapter: v2 chat (JSON and SSE), embed and rerank under ``/cohere/v2``; models and the
v1 client's rerank under ``/cohere/v1``. Embed and rerank are the shared Cohere retrieval wire
(``llmts/providers/cohere_retrieval/``, which Bedrock's ``cohere.*`` models speak too).

Credentials: ``Authorization: Bearer <key>`` (what ``cohere.ClientV2`` sends).
"""

from __future__ import annotations

from llmts.providers.base import (
    InferenceRoute,
    ProviderAdapter,
    ProviderCall,
    Reply,
    SimpleRoute,
    bearer_token,
)
from llmts.providers.cohere.citations import citations_for
from llmts.providers.cohere.errors import render_cohere_error
from llmts.providers.cohere.info import COHERE_INFO
from llmts.providers.cohere.models import get_model, list_models
from llmts.providers.cohere.parse import OPERATION, parse_chat_request
from llmts.providers.cohere.render import render_chat, render_chat_stream
from llmts.providers.cohere.strict_rules import CHAT_RULES
from llmts.providers.cohere_retrieval.embed import EMBED_RULES, parse_embed, render_embed
from llmts.providers.cohere_retrieval.rerank import RERANK_RULES, parse_rerank, render_rerank
from llmts.schema.neutral import Completion, NeutralRequest

__all__ = ["ADAPTERS", "COHERE"]


def _render(call: ProviderCall, request: NeutralRequest, completion: Completion) -> Reply:
    render = render_chat_stream if request.stream else render_chat
    output = completion.output
    citations = citations_for(call.request.body, output.text) if output.kind == "text" else []
    return render(completion.response_id, output, completion.usage, call.request_id, citations)


def _parse_embed(call: ProviderCall) -> NeutralRequest:
    return parse_embed(call, provider=COHERE_INFO.namespace)


def _parse_rerank(call: ProviderCall) -> NeutralRequest:
    return parse_rerank(call, provider=COHERE_INFO.namespace)


COHERE = ProviderAdapter(
    info=COHERE_INFO,
    prefix="/cohere",
    routes=(
        InferenceRoute(
            "/cohere/v2/chat",
            ("POST",),
            parse_chat_request,
            _render,
            in_stream_faults=frozenset({OPERATION}),
            strict_rules=CHAT_RULES,
        ),
        InferenceRoute("/cohere/v2/embed", ("POST",), _parse_embed, render_embed, strict_rules=EMBED_RULES),
        InferenceRoute(
            "/cohere/v2/rerank", ("POST",), _parse_rerank, render_rerank, strict_rules=RERANK_RULES
        ),
        InferenceRoute(
            "/cohere/v1/rerank", ("POST",), _parse_rerank, render_rerank, strict_rules=RERANK_RULES
        ),
        SimpleRoute("/cohere/v1/models", ("GET",), list_models, "models.list"),
        SimpleRoute("/cohere/v1/models/<path:model>", ("GET",), get_model, "models.get"),
    ),
    credential=bearer_token,
    render_error=render_cohere_error,
)

ADAPTERS = (COHERE,)
