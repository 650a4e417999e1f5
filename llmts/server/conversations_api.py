"""Control routes over conversation graphs: ``GET /admin-api/conversations`` (status) and
``POST /admin-api/match/explain`` (what a request would select, without changing anything).

``X-Llm-Test-Server-Conversation`` filters the status list, and selects the identity an explanation uses
(absent: every conversation, and ``default``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from pydantic import ValidationError

from llmts.errors import InvalidRequest
from llmts.providers.adapters import ADAPTERS, in_stream_surfaces
from llmts.providers.catalog import CATALOG
from llmts.runtime import Session
from llmts.runtime.conversations import (
    CONVERSATION_ENVIRON,
    Caller,
    conversation_id_from,
    neutral_from_explained,
)
from llmts.schema.conversations import ExplainRequest
from llmts.schema.validation import format_location

__all__ = ["conversations_listing", "explain_match"]

# What the routes declare, so an explained request fits delivery plans exactly as the real one would.
_IN_STREAM_SURFACES = in_stream_surfaces(ADAPTERS)
# The model an explained request gets when it names none and the session lists or names none.
_FALLBACK_MODEL = (CATALOG.default_model,)


def conversations_listing(session: Session, environ: Mapping[str, Any]) -> list[dict[str, Any]]:
    raw = environ.get(CONVERSATION_ENVIRON)
    conversation_id = conversation_id_from(raw) if raw is not None else None
    return [status.model_dump(mode="json") for status in session.conversation_status(conversation_id)]


def _invalid(message: str, details: list[dict[str, Any]]) -> InvalidRequest:
    return InvalidRequest(message, code="invalid_request", details=details)


def _parse(body: bytes) -> ExplainRequest:
    try:
        data = orjson.loads(body) if body.strip() else None
    except orjson.JSONDecodeError as exc:
        raise _invalid("the body is not valid JSON", [{"path": "", "message": str(exc)}]) from None
    if not isinstance(data, dict):
        raise _invalid(
            'the body must be an object: {"provider_namespace", "request": {"model", "messages"}}',
            [{"path": "", "message": "expected an object"}],
        )
    try:
        return ExplainRequest.model_validate(data)
    except ValidationError as exc:
        details = [
            {"path": format_location(tuple(err["loc"])), "message": err["msg"]}
            for err in exc.errors(include_url=False)
        ]
        raise _invalid(
            f"invalid explain request at {details[0]['path']}: {details[0]['message']}", details
        ) from None


def explain_match(session: Session, environ: Mapping[str, Any], body: bytes) -> dict[str, Any]:
    conversation_id = conversation_id_from(environ.get(CONVERSATION_ENVIRON))
    parsed = _parse(body)
    provider = parsed.provider_namespace
    try:
        neutral = neutral_from_explained(parsed.request, provider, session.model_ids(_FALLBACK_MODEL)[0])
    except ValueError as exc:
        raise _invalid(str(exc), [{"path": "request.tool_choice", "message": str(exc)}]) from None
    if neutral.stream and (provider, neutral.operation) in _IN_STREAM_SURFACES:
        neutral = neutral.model_copy(update={"in_stream_faults": True})
    credential = parsed.credential if parsed.credential is not None else session.credential_for(provider)
    explanation = session.explain(neutral, Caller(conversation_id, credential))
    payload: dict[str, Any] = explanation.model_dump(mode="json")
    return payload
