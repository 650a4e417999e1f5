"""What a provider adapter gives the server: its routes, its credential header, its error envelope.

Adapters never see werkzeug or sockets. The server hands them a ``ProviderRequest`` (method, path
arguments, raw body and the WSGI environ for headers) and writes back the ``Reply`` they return.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

import orjson

from llmts.errors import InvalidRequest, LlmtsError
from llmts.runtime.determinism import WireIdentity
from llmts.runtime.session import Session
from llmts.schema.faults import FrameKind, StreamDelivery
from llmts.schema.neutral import Completion, NeutralRequest

__all__ = [
    "InferenceRoute",
    "ProviderAdapter",
    "ProviderCall",
    "ProviderRequest",
    "Reply",
    "Route",
    "SimpleRoute",
    "bearer_token",
    "classify_frames",
    "json_reply",
    "load_json_object",
]


class ProviderRequest:
    """The wire request as an adapter sees it. Header lookups read the environ directly (cheap)."""

    __slots__ = ("_query", "args", "body", "environ", "method", "path")

    def __init__(
        self, method: str, path: str, args: Mapping[str, str], body: bytes, environ: Mapping[str, Any]
    ) -> None:
        self.method = method
        self.path = path
        self.args = args
        self.body = body
        self.environ = environ
        self._query: dict[str, list[str]] | None = None

    def header(self, name: str) -> str | None:
        key = name.upper().replace("-", "_")
        if key in ("CONTENT_TYPE", "CONTENT_LENGTH"):
            value = self.environ.get(key)
        else:
            value = self.environ.get("HTTP_" + key)
        return value if isinstance(value, str) else None

    def query(self, name: str) -> str | None:
        if self._query is None:
            self._query = parse_qs(str(self.environ.get("QUERY_STRING", "")))
        values = self._query.get(name)
        return values[0] if values else None


@dataclass(slots=True)
class Reply:
    """A finished HTTP answer: either a whole ``body`` or a list of stream ``frames``.

    ``frame_kinds`` (one per frame) tells delivery plans and evidence which frames are counted content
    and which one is the protocol's terminal marker; without it only the last frame is terminal.
    ``delivery`` is set by the server from the completion, never by adapters.
    """

    status: int
    headers: list[tuple[str, str]]
    body: bytes = b""
    frames: list[bytes] | None = None
    frame_kinds: list[FrameKind] | None = None
    delivery: StreamDelivery | None = None
    # What the ``malformed_frame`` plan inserts: a frame this protocol's parsers reject (default: SSE
    # ``data:`` with cut-off JSON; protocols that skip event-less frames supply their own).
    malformed_frame: bytes | None = None


@dataclass(slots=True)
class ProviderCall:
    """One provider request in flight: the wire request, its session, the id the server assigned
    (rendered in the provider's request-id header and error bodies), and the wire identity its answer's
    ids and timestamps come from (seeded under ``determinism``)."""

    request: ProviderRequest
    session: Session
    request_id: str
    wire: WireIdentity | None = None


@dataclass(frozen=True, slots=True)
class InferenceRoute:
    """A route that asks the runtime for an answer: parse wire -> neutral, render neutral -> wire."""

    rule: str
    methods: tuple[str, ...]
    parse: Callable[[ProviderCall], NeutralRequest]
    render: Callable[[ProviderCall, NeutralRequest, Completion], Reply]
    # Answers some requests without consuming a scripted response (e.g. Anthropic ``max_tokens: 0``
    # cache warm-ups): return a Reply to short-circuit, or None to go on to the runtime.
    shortcut: Callable[[ProviderCall, NeutralRequest], Reply | None] | None = None


@dataclass(frozen=True, slots=True)
class SimpleRoute:
    """A route answered from session state alone (model lists, stored objects, token counts...)."""

    rule: str
    methods: tuple[str, ...]
    handle: Callable[[ProviderCall], Reply]
    # Name recorded in the journal (defaults to the rule).
    operation: str = ""


Route = InferenceRoute | SimpleRoute


@dataclass(frozen=True)
class ProviderAdapter:
    """One provider namespace. ``prefix`` is the first path segment(s) its routes live under."""

    namespace: str
    prefix: str
    routes: tuple[Route, ...]
    credential: Callable[[ProviderRequest], str | None]
    # (error, request id) -> the provider's own error envelope and status.
    render_error: Callable[[LlmtsError, str], Reply]
    # Prefix of the request ids this provider reports (``x-request-id`` and friends).
    request_id_prefix: str = field(default="req_")


def classify_frames(
    frames: list[bytes], content_prefix: bytes, is_terminal: Callable[[bytes], bool]
) -> list[FrameKind]:
    """Frame kinds for delivery plans: frames starting with ``content_prefix`` are counted text frames."""
    return [
        FrameKind.CONTENT
        if frame.startswith(content_prefix)
        else FrameKind.TERMINAL
        if is_terminal(frame)
        else FrameKind.OTHER
        for frame in frames
    ]


def bearer_token(request: ProviderRequest) -> str | None:
    value = request.header("Authorization")
    if value is None:
        return None
    scheme, _, token = value.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def json_reply(status: int, payload: Any, headers: list[tuple[str, str]] | None = None) -> Reply:
    return Reply(status, [("Content-Type", "application/json"), *(headers or [])], orjson.dumps(payload))


def load_json_object(body: bytes) -> dict[str, Any]:
    """Parse a request body that must be a JSON object, or raise a 400 the provider will render."""
    if not body:
        raise InvalidRequest("the request body is empty; expected a JSON object", code="invalid_json")
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise InvalidRequest(f"the request body is not valid JSON: {exc}", code="invalid_json") from None
    if not isinstance(data, dict):
        raise InvalidRequest("the request body must be a JSON object", code="invalid_json")
    return data
