"""The ``ollama`` adapter: the native API under ``/ollama/api`` (JSON or NDJSON streams, ``{"error"}``
envelope) and the OpenAI-compatible API under ``/ollama/v1`` (the shared Chat Completions wire of
``llmts/providers/chat_completions/``, OpenAI's error envelope).

Credentials: ``Authorization: Bearer`` (the ``ollama`` client sends it from ``OLLAMA_API_KEY`` or its
``headers``; the OpenAI SDK from ``api_key``).
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
from llmts.providers.chat_completions.embeddings import parse_embeddings, render_embeddings
from llmts.providers.chat_completions.errors import render_openai_error
from llmts.providers.chat_completions.parse import parse_chat_request
from llmts.providers.chat_completions.render import render_chat_completion, render_chat_stream
from llmts.providers.ollama.embed import (
    model_dimensions,
    parse_embed,
    parse_legacy_embeddings,
    render_embed,
    render_legacy_embeddings,
)
from llmts.providers.ollama.errors import render_ollama_error
from llmts.providers.ollama.info import OLLAMA_INFO
from llmts.providers.ollama.models import (
    list_openai_models,
    list_running,
    list_tags,
    model_not_found,
    retrieve_openai_model,
    show_model,
    version,
)
from llmts.providers.ollama.parse import CHAT, GENERATE, parse_chat, parse_generate
from llmts.providers.ollama.render import render_chat, render_generate, render_load
from llmts.schema.neutral import Completion, NeutralRequest

__all__ = ["ADAPTERS", "OLLAMA"]

_COMPAT = "chat.completions"


def _render_native(call: ProviderCall, request: NeutralRequest, completion: Completion) -> Reply:
    render = render_chat if request.operation == CHAT else render_generate
    return render(request, completion, call.request_id)


def _load(call: ProviderCall, request: NeutralRequest) -> Reply | None:
    """A request without a prompt only loads the model (``done_reason: "load"``): nothing is consumed."""
    if request.messages:
        return None
    if not call.session.plan.serves_model(request.model):
        raise model_not_found(request.model)
    timestamp = call.wire.created_at() if call.wire is not None else 0
    return render_load(request, timestamp, call.request_id)


def _parse_compat(call: ProviderCall) -> NeutralRequest:
    return parse_chat_request(call, provider=OLLAMA_INFO.namespace)


def _parse_compat_embeddings(call: ProviderCall) -> NeutralRequest:
    return parse_embeddings(call, OLLAMA_INFO.namespace, dimensions_of=model_dimensions)


def _render_compat(call: ProviderCall, request: NeutralRequest, completion: Completion) -> Reply:
    # Ollama's OpenAI-compatible API shows a model's thinking as ``reasoning`` on the message and in
    # stream deltas (ollama's openai/openai.go, ``Message.Reasoning``).
    if request.stream:
        return render_chat_stream(request, completion, call.request_id, _COMPAT_REASONING)
    return render_chat_completion(request, completion, call.request_id, _COMPAT_REASONING)


_COMPAT_REASONING = "reasoning"


OLLAMA = ProviderAdapter(
    info=OLLAMA_INFO,
    prefix="/ollama",
    routes=(
        InferenceRoute(
            "/ollama/api/chat",
            ("POST",),
            parse_chat,
            _render_native,
            _load,
            in_stream_faults=frozenset({CHAT}),
        ),
        InferenceRoute(
            "/ollama/api/generate",
            ("POST",),
            parse_generate,
            _render_native,
            _load,
            in_stream_faults=frozenset({GENERATE}),
        ),
        InferenceRoute("/ollama/api/embed", ("POST",), parse_embed, render_embed),
        InferenceRoute(
            "/ollama/api/embeddings", ("POST",), parse_legacy_embeddings, render_legacy_embeddings
        ),
        SimpleRoute("/ollama/api/tags", ("GET",), list_tags, "models.list"),
        SimpleRoute("/ollama/api/show", ("POST",), show_model, "models.show"),
        SimpleRoute("/ollama/api/ps", ("GET",), list_running, "models.running"),
        SimpleRoute("/ollama/api/version", ("GET",), version, "version"),
        InferenceRoute(
            "/ollama/v1/chat/completions",
            ("POST",),
            _parse_compat,
            _render_compat,
            in_stream_faults=frozenset({_COMPAT}),
        ),
        InferenceRoute("/ollama/v1/embeddings", ("POST",), _parse_compat_embeddings, render_embeddings),
        SimpleRoute("/ollama/v1/models", ("GET",), list_openai_models, "models.list"),
        SimpleRoute("/ollama/v1/models/<path:model>", ("GET",), retrieve_openai_model, "models.get"),
    ),
    credential=bearer_token,
    render_error=render_ollama_error,
    error_renderers=(("/ollama/v1", render_openai_error),),
)

ADAPTERS = (OLLAMA,)
