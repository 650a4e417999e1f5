"""What every peer protocol's HTTP handler is given: the request (``PeerRequest``) and the process-level
parts it shares with the provider path (``PeerServices``): body limits, write deadlines, the shutdown
registry, metrics and request ids."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, MutableSet
from dataclasses import dataclass, field
from typing import Any

import orjson

from llmts.providers.base import Reply
from llmts.runtime import RandomIds, Session
from llmts.runtime.journal import JournalRecord
from llmts.schema.faults import FrameKind, StreamDelivery
from llmts.server.api.metrics import ProcessMetrics
from llmts.server.http.wsgi import StartResponse, read_body
from llmts.server.respond import respond
from llmts.transport import WaitOutcome, client_socket, wait
from llmts.transport.deadline import ActiveDelivery

__all__ = ["SSE_HEADERS", "PeerRequest", "PeerServices", "client_gone", "sse_frames", "wait_delay"]

# The head of every SSE answer of both peers (a JSON-RPC stream is never cached).
SSE_HEADERS = [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")]


@dataclass(slots=True)
class PeerServices:
    """Built once per process by ``PeerPath``."""

    metrics: ProcessMetrics
    max_body_bytes: int
    body_timeout: float | None
    write_timeout: float | None
    request_ids: RandomIds = field(default_factory=RandomIds)
    # Set by the app: the worker's shutdown registry (a graceful stop ends open streams cleanly).
    deliveries: MutableSet[ActiveDelivery] | None = None

    def new_request_id(self, prefix: str) -> str:
        return prefix + self.request_ids.new_hex(12)


@dataclass(slots=True)
class PeerRequest:
    """One HTTP request to a peer: ``name`` is the MCP server or A2A agent, ``rest`` the path after it
    (``""``, ``"/sse"``, ``"/.well-known/agent-card.json"``...), ``mount`` the URL path the peer answers
    at (with the ``/sessions/{id}`` prefix when the request used one)."""

    environ: dict[str, Any]
    start_response: StartResponse
    method: str
    session: Session
    protocol: str
    name: str
    rest: str
    mount: str
    services: PeerServices
    entry: JournalRecord | None = None

    def header(self, name: str) -> str | None:
        value = self.environ.get("HTTP_" + name.upper().replace("-", "_"))
        return value if isinstance(value, str) else None

    def read_body(self) -> bytes:
        services = self.services
        return read_body(self.environ, services.max_body_bytes, services.body_timeout)

    def journal(self, operation: str | None, request_id: str, body: bytes | None = None) -> JournalRecord:
        """Open this request's journal entry (provider ``mcp`` / ``a2a``; ``operation`` None: the body
        named no method of the protocol)."""
        journal = self.session.journal
        entry = self.entry = journal.start(request_id, self.protocol, self.method, self.mount + self.rest)
        if operation is not None:
            entry.parsed(operation)
        if body is not None:
            entry.capture_request(body, journal.preview_bytes)
        if self.protocol == "mcp":
            entry.peer_call(mcp_server=self.name, limit=journal.preview_bytes)
        else:
            entry.peer_call(a2a_agent=self.name, limit=journal.preview_bytes)
        return entry

    def reply(
        self,
        reply: Reply,
        *,
        plan: StreamDelivery | None = None,
        entry: JournalRecord | None = None,
        start_response: StartResponse | None = None,
    ) -> Iterable[bytes]:
        """Write ``reply`` through the transport (with ``plan``'s faults on a stream) and complete the
        journal entry with what was really delivered. ``start_response``: another one than the request's
        (a stream whose head the handler already sent continues with this reply's frames, each written on
        its own)."""
        services = self.services
        return respond(
            start_response or self.start_response,
            reply,
            self.environ,
            self.session if entry is not None else None,
            entry,
            plan=plan,
            keep_frames=start_response is not None,
            write_timeout=services.write_timeout,
            active=services.deliveries,
            metrics=services.metrics,
        )

    def json(
        self,
        status: int,
        payload: Any,
        headers: list[tuple[str, str]] | None = None,
        entry: JournalRecord | None = None,
    ) -> Iterable[bytes]:
        reply = Reply(status, [("Content-Type", "application/json"), *(headers or [])], orjson.dumps(payload))
        return self.reply(reply, entry=entry)


def sse_frames(
    messages: Iterable[Mapping[str, Any]], *, event: str | None = None
) -> tuple[list[bytes], list[FrameKind]]:
    """JSON-RPC messages as SSE frames (``data: <json>``); the last one is the answer's terminal frame
    (the result), the others content (notifications, requests)."""
    prefix = f"event: {event}\n".encode() if event else b""
    frames = [prefix + b"data: " + orjson.dumps(message) + b"\n\n" for message in messages]
    kinds = [FrameKind.CONTENT] * (len(frames) - 1) + [FrameKind.TERMINAL] if frames else []
    return frames, kinds


def wait_delay(request: PeerRequest, seconds: float, cancelled: Callable[[], bool]) -> WaitOutcome:
    """A scripted ``delay_ms`` before an answer, outside every lock: ended early by the client leaving
    (``CLIENT_GONE``) or by ``cancelled`` (``CANCELLED``)."""
    return wait(seconds, client_socket(request.environ), cancelled)


def client_gone(request: PeerRequest, entry: JournalRecord) -> Iterable[bytes]:
    """The client left before anything was written: the entry ends as 499 ``client_gone``."""
    entry.client_gone()
    request.session.journal.finish(entry)
    request.services.metrics.record(entry)
    request.start_response("499 Client Closed Request", [("Content-Length", "0")])
    return []
