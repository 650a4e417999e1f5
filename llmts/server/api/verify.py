"""``POST /admin-api/verify``: parse the expectations strictly, evaluate them over one journal snapshot."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from pydantic import ValidationError

from llmts.errors import InvalidRequest
from llmts.providers.adapters import ADAPTERS, unmarked_stream_surfaces
from llmts.runtime import Session
from llmts.runtime.conversations.identity import CONVERSATION_ENVIRON, conversation_id_from
from llmts.runtime.verify import verify
from llmts.schema.validation import format_location
from llmts.schema.verify import VerificationRequest

__all__ = ["INVALID_VERIFICATION", "parse_verification", "verify_session"]

INVALID_VERIFICATION = "invalid_verification"
# Streams that end without a terminal marker, as the routes declare them (docs/journal.md, verification).
_UNMARKED_STREAMS = unmarked_stream_surfaces(ADAPTERS)


def parse_verification(body: bytes) -> VerificationRequest:
    """The request body as a ``VerificationRequest``, or a 400 ``invalid_verification`` naming the fields."""
    try:
        data = orjson.loads(body) if body.strip() else None
    except orjson.JSONDecodeError as exc:
        raise InvalidRequest(
            "the verification request is not valid JSON",
            code=INVALID_VERIFICATION,
            details=[{"path": "", "message": str(exc)}],
        ) from None
    if not isinstance(data, dict):
        raise InvalidRequest(
            "the verification request must be a JSON object",
            code=INVALID_VERIFICATION,
            details=[{"path": "", "message": "expected an object"}],
        )
    try:
        return VerificationRequest.model_validate(data)
    except ValidationError as exc:
        details = [
            {"path": format_location(tuple(err["loc"])), "message": err["msg"]}
            for err in exc.errors(include_url=False)
        ]
        where = f" at {details[0]['path']}" if details[0]["path"] else ""
        raise InvalidRequest(
            f"invalid verification request{where}: {details[0]['message']}",
            code=INVALID_VERIFICATION,
            details=details,
        ) from None


def verify_session(session: Session, environ: Mapping[str, Any], body: bytes) -> dict[str, Any]:
    request = parse_verification(body)
    header = environ.get(CONVERSATION_ENVIRON)
    conversation = conversation_id_from(header) if header is not None else None
    statuses = session.conversations.status() if request.conversations else ()
    result = verify(
        session.journal.snapshot(),
        request,
        conversation=conversation,
        statuses=statuses,
        unmarked=_UNMARKED_STREAMS,
    )
    return result.model_dump(mode="json")
