"""The Responses API routes under one root (``/openai/v1``, and Azure's roots): create, retrieve (also as a
stream), delete, input items and input-token counts. A ``ResponsesSurface`` says which neutral provider
they report, which store namespace they use, and how the body's ``model`` becomes a served model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from llmts.errors import InvalidRequest
from llmts.providers.base import (
    InferenceRoute,
    ProviderCall,
    Reply,
    Route,
    SimpleRoute,
    json_reply,
)
from llmts.providers.openai.responses_parse import ResponsesRequest, parse_responses_body
from llmts.providers.openai.responses_render import render_response
from llmts.providers.openai.responses_store import load_stored
from llmts.providers.openai.responses_stream import SSE_HEADERS, replay_frames
from llmts.providers.openai.stream_faults import RESPONSES_STREAM_FAULTS
from llmts.providers.openai.strict_rules import RESPONSES_RULES
from llmts.runtime.admission import input_tokens as request_input_tokens
from llmts.schema.neutral import Completion, NeutralRequest

__all__ = ["ResponsesSurface", "body_model", "responses_routes"]

_MAX_LIST_LIMIT = 100
_DEFAULT_LIST_LIMIT = 20


def body_model(call: ProviderCall, raw: Any) -> str:
    """OpenAI: the body's ``model`` as it is (the runtime answers 404 for models the session lacks)."""
    if not isinstance(raw, str) or not raw:
        raise InvalidRequest(
            "you must provide a model parameter", code="missing_required_parameter", param="model"
        )
    return raw


@dataclass(frozen=True, slots=True)
class ResponsesSurface:
    provider: str
    store_namespace: str
    # (call, the body's model) -> the model the request is for; raises the provider's 404 for unknown ones.
    resolve_model: Callable[[ProviderCall, Any], str] = body_model


def _parse(surface: ResponsesSurface) -> Callable[[ProviderCall], NeutralRequest]:
    def parse(call: ProviderCall) -> NeutralRequest:
        body = call.request.json_object()
        model = surface.resolve_model(call, body.get("model"))
        return parse_responses_body(
            call, body, provider=surface.provider, model=model, store_namespace=surface.store_namespace
        )

    return parse


def _render(surface: ResponsesSurface) -> Callable[[ProviderCall, NeutralRequest, Completion], Reply]:
    def render(call: ProviderCall, request: NeutralRequest, completion: Completion) -> Reply:
        assert isinstance(request, ResponsesRequest)
        return render_response(call, request, completion, surface.store_namespace)

    return render


def _flag(value: str | None) -> bool:
    return value is not None and value.lower() in ("true", "1")


def _retrieve(surface: ResponsesSurface) -> Callable[[ProviderCall], Reply]:
    def retrieve(call: ProviderCall) -> Reply:
        stored = load_stored(call.session, surface.store_namespace, call.request.args["response_id"], None)
        headers = [("x-request-id", call.request_id)]
        if _flag(call.request.query("stream")):
            after = call.request.query("starting_after")
            if after is not None and not after.lstrip("-").isdigit():
                raise InvalidRequest("starting_after must be an integer", param="starting_after")
            frames, kinds = replay_frames(stored.body, int(after) if after is not None else None)
            return Reply(200, [*SSE_HEADERS, *headers], frames=frames, frame_kinds=kinds)
        return Reply(200, [("Content-Type", "application/json"), *headers], stored.body)

    return retrieve


def _delete(surface: ResponsesSurface) -> Callable[[ProviderCall], Reply]:
    def delete(call: ProviderCall) -> Reply:
        response_id = call.request.args["response_id"]
        if not call.session.store.delete(surface.store_namespace, response_id):
            load_stored(call.session, surface.store_namespace, response_id, None)  # raises the 404
        return json_reply(200, {"id": response_id, "object": "response", "deleted": True})

    return delete


def _list_limit(raw: str | None) -> int:
    if raw is None:
        return _DEFAULT_LIST_LIMIT
    if not raw.isdigit() or not 1 <= int(raw) <= _MAX_LIST_LIMIT:
        raise InvalidRequest(f"limit must be an integer from 1 to {_MAX_LIST_LIMIT}", param="limit")
    return int(raw)


def _input_items(surface: ResponsesSurface) -> Callable[[ProviderCall], Reply]:
    def input_items(call: ProviderCall) -> Reply:
        stored = load_stored(call.session, surface.store_namespace, call.request.args["response_id"], None)
        order = call.request.query("order") or "desc"
        if order not in ("asc", "desc"):
            raise InvalidRequest("order must be asc or desc", param="order")
        items = list(stored.input_items if order == "asc" else reversed(stored.input_items))
        after = call.request.query("after")
        if after is not None:
            ids = [item["id"] for item in items]
            items = items[ids.index(after) + 1 :] if after in ids else []
        limit = _list_limit(call.request.query("limit"))
        page = items[:limit]
        return json_reply(
            200,
            {
                "object": "list",
                "data": page,
                "first_id": page[0]["id"] if page else "",
                "last_id": page[-1]["id"] if page else "",
                "has_more": len(items) > limit,
            },
        )

    return input_items


def _input_tokens(surface: ResponsesSurface) -> Callable[[ProviderCall], Reply]:
    parse = _parse(surface)

    def input_tokens(call: ProviderCall) -> Reply:
        request = parse(call)
        count = request_input_tokens(request)  # the usage of the same request (docs/tokens.md)
        return json_reply(200, {"object": "response.input_tokens", "input_tokens": count})

    return input_tokens


def responses_routes(root: str, surface: ResponsesSurface) -> tuple[Route, ...]:
    by_id = f"{root}/responses/<response_id>"
    return (
        InferenceRoute(
            f"{root}/responses",
            ("POST",),
            _parse(surface),
            _render(surface),
            in_stream_faults=RESPONSES_STREAM_FAULTS,
            strict_rules=RESPONSES_RULES,
        ),
        SimpleRoute(
            f"{root}/responses/input_tokens", ("POST",), _input_tokens(surface), "responses.input_tokens"
        ),
        SimpleRoute(by_id, ("GET",), _retrieve(surface), "responses.retrieve"),
        SimpleRoute(by_id, ("DELETE",), _delete(surface), "responses.delete"),
        SimpleRoute(f"{by_id}/input_items", ("GET",), _input_items(surface), "responses.input_items"),
    )
