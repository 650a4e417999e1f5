"""What a provider adapter gives the server: its routes, its credential header, its error envelope.

Adapters never see werkzeug or sockets. The server hands them a ``ProviderRequest`` (method, path
arguments, raw body and the WSGI environ for headers) and writes back the ``Reply`` they return.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import parse_qs

import orjson

from llmts.catalog.info import ProviderInfo
from llmts.errors import InvalidRequest, LlmtsError
from llmts.providers.signing import UpstreamSigner
from llmts.providers.strict import StrictRule
from llmts.runtime.determinism import WireIdentity
from llmts.runtime.rate_limits import RateState
from llmts.schema.config import SessionConfig
from llmts.schema.faults import FrameKind
from llmts.schema.neutral import Completion, NeutralRequest, Usage

__all__ = [
    "InferenceRoute",
    "MultipartForm",
    "ObjectStore",
    "ProviderAdapter",
    "ProviderCall",
    "ProviderRequest",
    "Reply",
    "Route",
    "ServedPlan",
    "SessionView",
    "SimpleRoute",
    "Upload",
    "bearer_token",
    "classify_frames",
    "json_reply",
    "load_json_object",
    "retry_after_headers",
    "retry_after_ms",
]


@dataclass(frozen=True, slots=True)
class Upload:
    """One file part of a ``multipart/form-data`` body."""

    filename: str
    content_type: str
    data: bytes


@dataclass(frozen=True, slots=True)
class MultipartForm:
    """A parsed ``multipart/form-data`` body: text fields and file parts by field name, in body order."""

    fields: Mapping[str, tuple[str, ...]]
    files: Mapping[str, tuple[Upload, ...]]

    def field(self, name: str) -> str | None:
        """The first value of a text field (None when absent)."""
        values = self.fields.get(name)
        return values[0] if values else None

    def rule_body(self) -> dict[str, Any]:
        """The form as strict rules read it: a text field's value (a list when repeated), and per file
        field a list of ``{"filename", "content_type", "size", "data"}``."""
        body: dict[str, Any] = {
            name: values[0] if len(values) == 1 else list(values) for name, values in self.fields.items()
        }
        for name, uploads in self.files.items():
            body[name] = [
                {"filename": u.filename, "content_type": u.content_type, "size": len(u.data), "data": u.data}
                for u in uploads
            ]
        return body


class ProviderRequest:
    """The wire request as an adapter sees it. Header lookups read the environ directly (cheap)."""

    __slots__ = ("_form", "_form_parser", "_json", "_query", "args", "body", "environ", "method", "path")

    def __init__(
        self,
        method: str,
        path: str,
        args: Mapping[str, str],
        body: bytes,
        environ: Mapping[str, Any],
        form_parser: Callable[[ProviderRequest], MultipartForm] | None = None,
    ) -> None:
        self.method = method
        self.path = path
        self.args = args
        self.body = body
        self.environ = environ
        self._query: dict[str, list[str]] | None = None
        self._json: dict[str, Any] | None = None
        # The server's bounded multipart parser (``llmts/server/http/multipart.py``): adapters never import
        # werkzeug, so the composition root hands it in.
        self._form_parser = form_parser
        self._form: MultipartForm | None = None

    def form(self) -> MultipartForm:
        """The body as ``multipart/form-data`` (parsed once), or the 400 of a body that is not one."""
        if self._form is None:
            if self._form_parser is None:
                raise InvalidRequest(
                    "multipart/form-data bodies are not accepted here", code="invalid_multipart"
                )
            self._form = self._form_parser(self)
        return self._form

    def json_object(self) -> dict[str, Any]:
        """The body as a JSON object (parsed once: the parser and the strict rules share it)."""
        if self._json is None:
            self._json = load_json_object(self.body)
        return self._json

    def rule_body(self) -> dict[str, Any]:
        """What strict rules read: the parsed multipart form when the route parsed one, else the JSON
        object."""
        if self._form is not None:
            return self._form.rule_body()
        return self.json_object()

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
    A reply holds what the provider rendered; how the server delivers it (the fault plan, pacing) is the
    server's exchange's (llmts/server/exchange.py).
    """

    status: int
    headers: list[tuple[str, str]]
    body: bytes = b""
    frames: list[bytes] | None = None
    frame_kinds: list[FrameKind] | None = None
    # What the ``malformed_frame`` plan inserts: a frame this protocol's parsers reject (default: SSE
    # ``data:`` with cut-off JSON; protocols that skip event-less frames supply their own).
    malformed_frame: bytes | None = None


class ServedPlan(Protocol):
    """What adapters read of the session's configuration (``session.plan``, llmts/runtime/session_plan.py)."""

    @property
    def configuration(self) -> SessionConfig | None: ...

    def serves_model(self, model: str) -> bool: ...

    def model_ids(self, defaults: Sequence[str] = ()) -> list[str]: ...


class ObjectStore(Protocol):
    """The session's bounded object store per namespace (``session.store``, runtime/session_store.py)."""

    def put(self, namespace: str, key: str, value: Any, size: int) -> None: ...

    def get(self, namespace: str, key: str) -> Any | None: ...

    def delete(self, namespace: str, key: str) -> bool: ...


class SessionView(Protocol):
    """The part of a session adapters use: served models and the configuration (``plan``), the prompt
    cache and the per-namespace object store (``store``). Adapters never admit, complete or journal; the
    server does."""

    # The session's id (``ses_...`` or ``default``): what a URL llmts hands out names (image URLs).
    id: str

    @property
    def plan(self) -> ServedPlan: ...

    @property
    def store(self) -> ObjectStore: ...

    def warm_cache(self, request: NeutralRequest) -> Usage: ...


@dataclass(slots=True)
class ProviderCall:
    """One provider request in flight: the wire request, its session, the id the server assigned
    (rendered in the provider's request-id header and error bodies), and the wire identity its answer's
    ids and timestamps come from (seeded under ``determinism``)."""

    request: ProviderRequest
    session: SessionView
    request_id: str
    wire: WireIdentity | None = None

    @property
    def strict_requests(self) -> bool:
        """The session's ``strict_requests`` (on unless configured off), for the few rules that need what
        only the parser knows (the model an Azure deployment maps to) and so cannot be table rows."""
        config = self.session.plan.configuration
        return config is None or config.strict_requests


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
    # The operations (``NeutralRequest.operation``) of this route whose streams are plain text frames (SSE
    # events, NDJSON lines) that in-stream ``stream_delivery`` plans act on; connection-level plans fit
    # every route.
    in_stream_faults: frozenset[str] = frozenset()
    # The provider's request rules (``llmts/providers/strict.py``), run after ``parse`` and before
    # admission while the session's ``strict_requests`` is on.
    strict_rules: tuple[StrictRule, ...] = ()
    # The streamed operations of this route whose protocol has no terminal marker (the stream just ends at
    # EOF): verification that requires one is refused for them instead of failing as "not written".
    unmarked_streams: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class SimpleRoute:
    """A route answered from session state alone (model lists, stored objects, token counts...)."""

    rule: str
    methods: tuple[str, ...]
    handle: Callable[[ProviderCall], Reply]
    # Name recorded in the journal (defaults to the rule).
    operation: str = ""
    # Answered without the session's provider credential: a URL llmts handed out (an image of
    # ``response_format: url``) is fetched by browsers and image loaders that send none. The session id
    # in the URL's path is the capability.
    credential_free: bool = False


Route = InferenceRoute | SimpleRoute


@dataclass(frozen=True)
class ProviderAdapter:
    """One provider namespace: its ``info`` (namespace, default model, SDK clients, shared with the Python
    API without loading this module), the first path segment(s) its routes live under, its routes, how it
    reads the credential and how it renders errors. Registered by one line in ``llmts/catalog/registry.py``.
    """

    info: ProviderInfo
    prefix: str
    routes: tuple[Route, ...]
    credential: Callable[[ProviderRequest], str | None]
    # (error, request id) -> the provider's own error envelope and status.
    render_error: Callable[[LlmtsError, str], Reply]
    # Prefix of the request ids this provider reports (``x-request-id`` and friends).
    request_id_prefix: str = field(default="req_")
    # The provider's rate-limit headers for a session with ``rate_limits`` (None: the provider has none).
    rate_limit_headers: Callable[[RateState], list[tuple[str, str]]] | None = None
    # (path prefix, renderer) for sub-trees that speak another wire's errors (Ollama's OpenAI-compatible
    # ``/ollama/v1``); the first matching prefix wins, ``render_error`` answers everything else.
    error_renderers: tuple[tuple[str, Callable[[LlmtsError, str], Reply]], ...] = ()
    # Signs a request forwarded to the namespace's upstream again when its credential is bound to the host
    # it was sent to (Bedrock's SigV4; ``llmts/providers/signing.py``). None: the client's credential goes
    # as sent. A signer may keep per-process state (resolved credentials), never per-session state.
    sign_upstream: UpstreamSigner | None = None
    # WebSocket routes (llmts/providers/realtime.py; docs/realtime.md), served by llmts/server/realtime/.
    # ``RealtimeRoute``s; typed Any because that module builds on this one.
    realtime_routes: tuple[Any, ...] = ()

    def render_error_for(self, path: str) -> Callable[[LlmtsError, str], Reply]:
        """The error renderer of the route tree ``path`` lies in."""
        for prefix, render in self.error_renderers:
            if path == prefix or path.startswith(prefix + "/"):
                return render
        return self.render_error

    @property
    def namespace(self) -> str:
        return self.info.namespace

    def in_stream_operations(self) -> frozenset[tuple[str, str]]:
        """(namespace, operation) pairs whose streams in-stream delivery plans act on."""
        return frozenset(
            (self.namespace, operation)
            for route in self.routes
            if isinstance(route, InferenceRoute)
            for operation in route.in_stream_faults
        )

    def unmarked_stream_operations(self) -> frozenset[tuple[str, str]]:
        """(namespace, operation) pairs whose streams end without a terminal marker."""
        return frozenset(
            (self.namespace, operation)
            for route in self.routes
            if isinstance(route, InferenceRoute)
            for operation in route.unmarked_streams
        )


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


def retry_after_ms(seconds: float) -> int:
    """A wait in whole milliseconds, rounded up (the exact wait the rate window computed, or a fixture's)."""
    return math.ceil(round(seconds * 1000, 6))


def retry_after_headers(seconds: float, *, milliseconds: bool) -> list[tuple[str, str]]:
    """``retry-after`` in whole seconds rounded up (RFC 9110's delay-seconds, which OpenAI's published spec
    types as an integer; a client that waits that long is never early) and, with ``milliseconds``, the
    exact wait as ``retry-after-ms``, which the OpenAI, Anthropic and Cohere SDKs read first."""
    exact_ms = retry_after_ms(seconds)
    headers = [("retry-after", str(math.ceil(exact_ms / 1000)))]
    if milliseconds:
        headers.append(("retry-after-ms", str(exact_ms)))
    return headers


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
