"""The ``anthropic`` adapter: Messages (JSON and SSE), count_tokens and models under ``/anthropic/v1``.

Credentials: ``x-api-key`` (anthropic 0.x/1.x) or ``Authorization: Bearer`` (anthropic 2.x, and
``auth_token=`` in every major); any ``anthropic-version`` is accepted. The Messages wire itself is the
shared ``llmts/providers/anthropic_messages/`` (Bedrock's InvokeModel speaks it too).
"""

from __future__ import annotations

from llmts.providers.anthropic.errors import render_anthropic_error
from llmts.providers.anthropic.info import ANTHROPIC_INFO
from llmts.providers.anthropic.models import count_tokens, list_models, model_not_found, retrieve_model
from llmts.providers.anthropic.rate_limits import anthropic_rate_limit_headers
from llmts.providers.anthropic_messages.parse import OPERATION, WARMUP_OPERATION, parse_messages_request
from llmts.providers.anthropic_messages.render import render_message
from llmts.providers.anthropic_messages.stream import render_message_stream
from llmts.providers.anthropic_messages.strict_rules import MESSAGES_RULES
from llmts.providers.base import (
    InferenceRoute,
    ProviderAdapter,
    ProviderCall,
    ProviderRequest,
    Reply,
    SimpleRoute,
    bearer_token,
)
from llmts.schema.neutral import Completion, NeutralRequest

__all__ = ["ADAPTERS", "ANTHROPIC", "anthropic_credential"]


def anthropic_credential(request: ProviderRequest) -> str | None:
    key = request.header("x-api-key")
    if key is not None and key.strip():
        return key.strip()
    return bearer_token(request)


def _parse(call: ProviderCall) -> NeutralRequest:
    return parse_messages_request(call, provider=ANTHROPIC_INFO.namespace)


def _render(call: ProviderCall, request: NeutralRequest, completion: Completion) -> Reply:
    render = render_message_stream if request.stream else render_message
    message_id = "msg_" + completion.response_id
    return render(request.model, message_id, completion.output, completion.usage, call.request_id)


def _warm_cache(call: ProviderCall, request: NeutralRequest) -> Reply | None:
    """``max_tokens: 0`` only writes/reads the prompt cache: no scripted answer is consumed."""
    if request.operation != WARMUP_OPERATION:
        return None
    if not call.session.plan.serves_model(request.model):
        raise model_not_found(request.model)
    usage = call.session.warm_cache(request)
    render = render_message_stream if request.stream else render_message
    # No runtime completion here: the message id comes from the request's wire identity.
    message_id = "msg_" + (call.wire.id_for() if call.wire is not None else call.request_id[4:])
    return render(request.model, message_id, None, usage, call.request_id)


ANTHROPIC = ProviderAdapter(
    info=ANTHROPIC_INFO,
    prefix="/anthropic",
    routes=(
        InferenceRoute(
            "/anthropic/v1/messages",
            ("POST",),
            _parse,
            _render,
            _warm_cache,
            in_stream_faults=frozenset({OPERATION}),
            strict_rules=MESSAGES_RULES,
        ),
        SimpleRoute("/anthropic/v1/messages/count_tokens", ("POST",), count_tokens, "messages.count_tokens"),
        SimpleRoute("/anthropic/v1/models", ("GET",), list_models, "models.list"),
        SimpleRoute("/anthropic/v1/models/<path:model>", ("GET",), retrieve_model, "models.get"),
    ),
    credential=anthropic_credential,
    render_error=render_anthropic_error,
    rate_limit_headers=anthropic_rate_limit_headers,
)

ADAPTERS = (ANTHROPIC,)
