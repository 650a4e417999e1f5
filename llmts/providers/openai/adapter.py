"""The ``openai`` adapter: Chat Completions, Responses, embeddings, moderations and models under
``/openai/v1``, the Realtime WebSocket at ``/openai/v1/realtime`` (``realtime/``); and the
``azure-openai`` namespace (the same wire under Azure's routes, see ``azure.py``)."""

from __future__ import annotations

from llmts.providers.base import (
    InferenceRoute,
    ProviderAdapter,
    ProviderCall,
    Reply,
    SimpleRoute,
    bearer_token,
)
from llmts.providers.chat_completions.embeddings import EMBEDDINGS_RULES, parse_embeddings, render_embeddings
from llmts.providers.chat_completions.errors import render_openai_error
from llmts.providers.chat_completions.parse import parse_chat_request
from llmts.providers.chat_completions.render import render_chat_completion, render_chat_stream
from llmts.providers.openai.audio import (
    parse_speech,
    parse_transcription,
    parse_translation,
    render_speech,
    render_transcript,
)
from llmts.providers.openai.azure import AZURE_OPENAI
from llmts.providers.openai.images import (
    parse_image_edit,
    parse_image_generation,
    render_images,
    serve_image_file,
)
from llmts.providers.openai.info import OPENAI_INFO
from llmts.providers.openai.media_strict import (
    IMAGE_EDIT_RULES,
    IMAGE_GENERATION_RULES,
    SPEECH_RULES,
    TRANSCRIPTION_RULES,
    TRANSLATION_RULES,
)
from llmts.providers.openai.models import list_models, retrieve_model
from llmts.providers.openai.moderation import MODERATION_RULES, parse_moderation, render_moderation
from llmts.providers.openai.native_parse import NATIVE_TOOL_TYPES
from llmts.providers.openai.rate_limits import openai_rate_limit_headers
from llmts.providers.openai.realtime.routes import OPENAI_REALTIME_ROUTES
from llmts.providers.openai.responses_routes import ResponsesSurface, responses_routes
from llmts.providers.openai.stream_faults import (
    CHAT_STREAM_FAULTS,
    IMAGE_STREAM_FAULTS,
    SPEECH_STREAM_FAULTS,
    TRANSCRIPTION_STREAM_FAULTS,
)
from llmts.providers.openai.strict_rules import CHAT_RULES
from llmts.schema.neutral import Completion, NeutralRequest

__all__ = ["ADAPTERS", "AZURE_OPENAI", "OPENAI"]


def _parse_chat(call: ProviderCall) -> NeutralRequest:
    return parse_chat_request(call, refused_tool_types=NATIVE_TOOL_TYPES)


def _parse_embeddings(call: ProviderCall) -> NeutralRequest:
    return parse_embeddings(call, OPENAI_INFO.namespace)


def _parse_moderation(call: ProviderCall) -> NeutralRequest:
    return parse_moderation(call, OPENAI_INFO.namespace)


def _render_chat(call: ProviderCall, request: NeutralRequest, completion: Completion) -> Reply:
    if request.stream:
        return render_chat_stream(request, completion, call.request_id)
    return render_chat_completion(request, completion, call.request_id)


OPENAI = ProviderAdapter(
    info=OPENAI_INFO,
    prefix="/openai",
    routes=(
        InferenceRoute(
            "/openai/v1/chat/completions",
            ("POST",),
            _parse_chat,
            _render_chat,
            in_stream_faults=CHAT_STREAM_FAULTS,
            strict_rules=CHAT_RULES,
        ),
        InferenceRoute(
            "/openai/v1/embeddings",
            ("POST",),
            _parse_embeddings,
            render_embeddings,
            strict_rules=EMBEDDINGS_RULES,
        ),
        InferenceRoute(
            "/openai/v1/moderations",
            ("POST",),
            _parse_moderation,
            render_moderation,
            strict_rules=MODERATION_RULES,
        ),
        InferenceRoute(
            "/openai/v1/images/generations",
            ("POST",),
            parse_image_generation,
            render_images,
            in_stream_faults=IMAGE_STREAM_FAULTS,
            strict_rules=IMAGE_GENERATION_RULES,
        ),
        InferenceRoute(
            "/openai/v1/images/edits",
            ("POST",),
            parse_image_edit,
            render_images,
            in_stream_faults=IMAGE_STREAM_FAULTS,
            strict_rules=IMAGE_EDIT_RULES,
        ),
        SimpleRoute(
            "/openai/v1/images/files/<image_id>",
            ("GET",),
            serve_image_file,
            "images.file",
            credential_free=True,
        ),
        InferenceRoute(
            "/openai/v1/audio/transcriptions",
            ("POST",),
            parse_transcription,
            render_transcript,
            in_stream_faults=TRANSCRIPTION_STREAM_FAULTS,
            strict_rules=TRANSCRIPTION_RULES,
        ),
        InferenceRoute(
            "/openai/v1/audio/translations",
            ("POST",),
            parse_translation,
            render_transcript,
            strict_rules=TRANSLATION_RULES,
        ),
        InferenceRoute(
            "/openai/v1/audio/speech",
            ("POST",),
            parse_speech,
            render_speech,
            in_stream_faults=SPEECH_STREAM_FAULTS,
            strict_rules=SPEECH_RULES,
        ),
        SimpleRoute("/openai/v1/models", ("GET",), list_models, "models.list"),
        SimpleRoute("/openai/v1/models/<path:model>", ("GET",), retrieve_model, "models.get"),
        *responses_routes(
            "/openai/v1",
            ResponsesSurface(provider=OPENAI_INFO.namespace, store_namespace="openai.responses"),
        ),
    ),
    credential=bearer_token,
    render_error=render_openai_error,
    rate_limit_headers=openai_rate_limit_headers,
    realtime_routes=OPENAI_REALTIME_ROUTES,
)

ADAPTERS = (OPENAI, AZURE_OPENAI)
