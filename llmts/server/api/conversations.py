"""Control routes over conversation graphs: ``GET /admin-api/conversations`` (status) and
``POST /admin-api/match/explain`` (what a request would select, without changing anything).

A ``wire`` request is explained as the provider route would handle it: the route's parser, then its
strict rules while the session's ``strict_requests`` is on (a broken rule is the outcome ``rejected``
with the rule's code and message, before any selection), then the selection without commit.

``X-Llm-Test-Server-Conversation`` filters the status list, and selects the identity an explanation uses
(absent: every conversation, and ``default``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import orjson
from pydantic import ValidationError
from werkzeug.exceptions import HTTPException
from werkzeug.routing import Map

from llmts.catalog.registry import CATALOG
from llmts.errors import InvalidRequest, LlmtsError, StrictRequestRejected
from llmts.providers.adapters import ADAPTERS, in_stream_surfaces
from llmts.providers.base import InferenceRoute, ProviderAdapter, ProviderCall, ProviderRequest, SessionView
from llmts.providers.strict import check_strict
from llmts.runtime import Session
from llmts.runtime.conversations import (
    CONVERSATION_ENVIRON,
    Caller,
    conversation_id_from,
    neutral_from_explained,
)
from llmts.schema.config import SessionConfig
from llmts.schema.conversations import ExplainedWire, ExplainRequest
from llmts.schema.neutral import NeutralRequest
from llmts.schema.validation import format_location
from llmts.server.http.routing import MatchRule

__all__ = ["conversations_listing", "explain_match"]

# What the routes declare, so an explained request fits delivery plans exactly as the real one would.
_IN_STREAM_SURFACES = in_stream_surfaces(ADAPTERS)
# The model an explained request gets when it names none and the session lists or names none.
_FALLBACK_MODEL = (CATALOG.default_model,)
# The provider routes a ``wire`` request names (POST inference routes only), matched as the app does.
_WIRE_ROUTES = Map(
    [
        MatchRule(route.rule, methods=["POST"], endpoint=(adapter, route))
        for adapter in ADAPTERS
        for route in adapter.routes
        if isinstance(route, InferenceRoute) and "POST" in route.methods
    ],
    strict_slashes=False,
    merge_slashes=False,
).bind("llmts")


def conversations_listing(session: Session, environ: Mapping[str, Any]) -> list[dict[str, Any]]:
    raw = environ.get(CONVERSATION_ENVIRON)
    conversation_id = conversation_id_from(raw) if raw is not None else None
    return [status.model_dump(mode="json") for status in session.conversations.status(conversation_id)]


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


def _wire_route(wire: ExplainedWire) -> tuple[ProviderAdapter, InferenceRoute, ProviderRequest]:
    path, _, query = wire.path.partition("?")
    try:
        (adapter, route), args = _WIRE_ROUTES.match(path, "POST")
    except HTTPException:
        message = f"wire.path {path!r} is no provider route llmts answers with a model's answer"
        raise _invalid(message, [{"path": "wire.path", "message": message}]) from None
    environ = {"REQUEST_METHOD": "POST", "PATH_INFO": path, "QUERY_STRING": query}
    return adapter, route, ProviderRequest("POST", path, args, orjson.dumps(wire.body), environ)


class _LenientPlan:
    """A session's ``plan`` with ``strict_requests`` off (everything else read from the real one)."""

    def __init__(self, plan: Any) -> None:
        self._plan = plan
        config = plan.configuration
        base = config if config is not None else SessionConfig()
        self.configuration = base.model_copy(update={"strict_requests": False})

    def __getattr__(self, name: str) -> Any:
        return getattr(self._plan, name)


class _WithoutStrictRules:
    """The session as a parser sees it, with ``strict_requests`` off: explains a request that a rule the
    parser itself runs (one that needs the resolved model, ``native_tool_model``) rejected."""

    def __init__(self, session: Session) -> None:
        self._session = session
        self.plan = _LenientPlan(session.plan)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)


def _in_stream(route: InferenceRoute, neutral: NeutralRequest) -> bool:
    return neutral.stream and neutral.operation in route.in_stream_faults


def _parse_wire(
    session: Session, wire: ExplainedWire
) -> tuple[str, NeutralRequest, bool, StrictRequestRejected | None]:
    """Parse as the route would, then run its strict rules; a parse error is a bad explain request. A
    strict rule the parser runs is reported like the table's rules (outcome ``rejected``). Also whether
    in-stream delivery plans act on the request's stream, by the route's own word (as the provider path)."""
    adapter, route, request = _wire_route(wire)
    call = ProviderCall(request, session, "req_explain", None)
    try:
        neutral = route.parse(call)
    except StrictRequestRejected as rejected:
        lenient = cast(SessionView, _WithoutStrictRules(session))
        neutral = route.parse(ProviderCall(request, lenient, "req_explain", None))
        return adapter.namespace, neutral, _in_stream(route, neutral), rejected
    except LlmtsError as exc:
        detail = {"path": "wire.body", "message": exc.message, "code": exc.code}
        raise _invalid(f"the provider would refuse wire.body: {exc.message}", [detail]) from None
    if route.strict_rules and call.strict_requests:
        try:
            check_strict(route.strict_rules, request.body, request.json_object(), session.plan.signatures)
        except StrictRequestRejected as rejected:
            return adapter.namespace, neutral, _in_stream(route, neutral), rejected
    return adapter.namespace, neutral, _in_stream(route, neutral), None


def explain_match(session: Session, environ: Mapping[str, Any], body: bytes) -> dict[str, Any]:
    conversation_id = conversation_id_from(environ.get(CONVERSATION_ENVIRON))
    parsed = _parse(body)
    rejected: StrictRequestRejected | None = None
    if parsed.wire is not None:
        provider, neutral, in_stream, rejected = _parse_wire(session, parsed.wire)
    else:
        assert parsed.request is not None  # the schema requires one of the two
        provider = parsed.provider_namespace
        try:
            neutral = neutral_from_explained(
                parsed.request, provider, session.plan.model_ids(_FALLBACK_MODEL)[0]
            )
        except ValueError as exc:
            raise _invalid(str(exc), [{"path": "request.tool_choice", "message": str(exc)}]) from None
        # No route named: the provider's routes together say which streams in-stream plans act on.
        in_stream = neutral.stream and (provider, neutral.operation) in _IN_STREAM_SURFACES
    credential = parsed.credential if parsed.credential is not None else session.plan.credential_for(provider)
    explanation = session.explain(neutral, Caller(conversation_id, credential), in_stream=in_stream)
    if rejected is not None:  # the provider's 400 comes before any selection
        explanation = explanation.model_copy(
            update={
                "outcome": "rejected",
                "selected_scenario": None,
                "selected_step": None,
                "error_code": rejected.code,
                "error_message": rejected.message,
                "matched_candidates": [],
                "shadowed_candidates": [],
                "candidates": [],
                "strict_rule": rejected.rule,
            }
        )
    payload: dict[str, Any] = explanation.model_dump(mode="json")
    return payload
