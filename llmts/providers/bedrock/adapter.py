"""The ``bedrock`` adapter: Bedrock Runtime under ``/bedrock/model/{model id}/...``.

Credentials (docs/providers.md, "AWS Bedrock"): a SigV4 ``Authorization`` header (its shape is checked,
the signature is not verified; the credential is the access key id of its ``Credential=`` scope) or the
Bedrock API-key form ``Authorization: Bearer <key>``. A request forwarded to a Bedrock upstream is signed
again with the server's AWS credentials (``sigv4.py``).
"""

from __future__ import annotations

import re
from typing import Any

from llmts.errors import ProviderUnauthorized
from llmts.providers.anthropic_messages.strict_rules import MESSAGES_RULES
from llmts.providers.base import (
    InferenceRoute,
    ProviderAdapter,
    ProviderCall,
    ProviderRequest,
    Reply,
    bearer_token,
)
from llmts.providers.bedrock.errors import render_bedrock_error
from llmts.providers.bedrock.info import BEDROCK_INFO
from llmts.providers.bedrock.invoke import INVOKE_STREAM, parse_invoke, render_invoke
from llmts.providers.bedrock.parse import CONVERSE, parse_converse
from llmts.providers.bedrock.render import render_converse
from llmts.providers.bedrock.sigv4 import SigV4Signer
from llmts.providers.bedrock.stream import render_converse_stream
from llmts.providers.bedrock.strict_rules import CONVERSE_RULES
from llmts.providers.strict import StrictRule, Violation
from llmts.runtime.signatures import SignatureBook
from llmts.schema.neutral import Completion, NeutralRequest

__all__ = ["ADAPTERS", "BEDROCK", "CONVERSE_STREAM", "bedrock_credential"]

CONVERSE_STREAM = "converse-stream"
_SIGV4 = "AWS4-HMAC-SHA256"
# Credential=<key id>/<yyyymmdd>/<region>/<service>/aws4_request, SignedHeaders=a;b, Signature=<64 hex>
_SIGV4_FIELDS = re.compile(
    r"Credential=([^/\s,]+)/\d{8}/[a-z0-9-]+/[a-z0-9-]+/aws4_request,\s*"
    r"SignedHeaders=[a-z0-9;-]+,\s*Signature=[0-9a-f]{64}"
)


def bedrock_credential(request: ProviderRequest) -> str | None:
    """The access key id of a well-formed SigV4 header, or the Bedrock API key of a bearer header."""
    value = request.header("Authorization")
    if value is None or not value.startswith(_SIGV4):
        return bearer_token(request)
    match = _SIGV4_FIELDS.fullmatch(value[len(_SIGV4) :].strip())
    if match is None:
        raise ProviderUnauthorized(
            "Authorization header requires 'Credential', 'SignedHeaders' and 'Signature' parameters "
            "in the SigV4 format."
        )
    if not (request.header("X-Amz-Date") or request.header("Date")):
        raise ProviderUnauthorized(
            "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header."
        )
    return match.group(1)


def _parse_converse(call: ProviderCall) -> NeutralRequest:
    return parse_converse(call, CONVERSE, stream=False)


def _parse_converse_stream(call: ProviderCall) -> NeutralRequest:
    return parse_converse(call, CONVERSE_STREAM, stream=True)


def _render_converse(call: ProviderCall, request: NeutralRequest, completion: Completion) -> Reply:
    render = render_converse_stream if request.stream else render_converse
    return render(completion.output, completion.usage, call.request_id)


def _parse_invoke(call: ProviderCall) -> NeutralRequest:
    return parse_invoke(call, stream=False)


def _parse_invoke_stream(call: ProviderCall) -> NeutralRequest:
    return parse_invoke(call, stream=True)


def _for_body(rule: StrictRule, anthropic: bool) -> StrictRule:
    """``rule``, run only on InvokeModel bodies of its family: the parser has already held the body to the
    model's family, and only the Anthropic body has ``anthropic_version``."""
    check = rule.check

    def gated(body: dict[str, Any], signatures: SignatureBook) -> Violation | None:
        return check(body, signatures) if ("anthropic_version" in body) is anthropic else None

    return StrictRule(
        rule.name, gated, code=rule.code, source=rule.source, error_type=rule.error_type, markers=rule.markers
    )


INVOKE_RULES = tuple(_for_body(rule, True) for rule in MESSAGES_RULES) + tuple(
    _for_body(rule, False) for rule in CONVERSE_RULES
)

_MODEL = "/bedrock/model/<path:model>"

BEDROCK = ProviderAdapter(
    info=BEDROCK_INFO,
    prefix="/bedrock",
    routes=(
        InferenceRoute(
            f"{_MODEL}/converse", ("POST",), _parse_converse, _render_converse, strict_rules=CONVERSE_RULES
        ),
        InferenceRoute(
            f"{_MODEL}/converse-stream",
            ("POST",),
            _parse_converse_stream,
            _render_converse,
            in_stream_faults=frozenset({CONVERSE_STREAM}),
            strict_rules=CONVERSE_RULES,
        ),
        # InvokeModel's Anthropic body gets Anthropic's rules (Bedrock passes their messages on unchanged),
        # Nova's Converse-shaped body the Converse rules, Titan's none (it has no messages).
        InferenceRoute(
            f"{_MODEL}/invoke", ("POST",), _parse_invoke, render_invoke, strict_rules=INVOKE_RULES
        ),
        InferenceRoute(
            f"{_MODEL}/invoke-with-response-stream",
            ("POST",),
            _parse_invoke_stream,
            render_invoke,
            in_stream_faults=frozenset({INVOKE_STREAM}),
            unmarked_streams=frozenset({INVOKE_STREAM}),
            strict_rules=INVOKE_RULES,
        ),
    ),
    credential=bedrock_credential,
    render_error=render_bedrock_error,
    # A forwarded request is signed again for the upstream's host and region (docs/recording.md).
    sign_upstream=SigV4Signer("bedrock"),
)

ADAPTERS = (BEDROCK,)
