"""Forward a request the session's fixtures cannot answer to its upstream, answer the client with what
the upstream sent, and keep it when the session records (docs/recording.md).

A whole answer (an unstreamed request, or any non-2xx answer) is read completely and goes out through
the ordinary ``respond`` path as a ``Reply``. A 2xx answer to a streaming request is relayed as it
arrives: each chunk the upstream wrote is one write to the client (its chunk boundaries are the
recording's frames), and nothing of it is buffered beyond the chunk in hand. Upstream failures before the
status arrived are the provider's 502/504 (``upstream.py``); during a relayed stream the stream ends
where it is, journaled with the failure's code, and nothing is kept. An exchange is kept at the place
its request took when it was admitted (``ordinal``), not when it completed: a relayed stream ends after
the client read its last frame, so the client's next request may complete first.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping, MutableSet
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from llmts.errors import UpstreamUnreachable
from llmts.providers.base import ProviderAdapter, ProviderRequest, Reply
from llmts.providers.signing import UpstreamRequest
from llmts.runtime import Session
from llmts.runtime.journal import JournalRecord
from llmts.runtime.recording import Exchange, recorded_request
from llmts.schema.neutral import NeutralRequest, RecordedOutput
from llmts.schema.recorded import HOP_BY_HOP_HEADERS, RECORDING_LIMITS, RecordingSettings
from llmts.server.api.metrics import ProcessMetrics
from llmts.server.http.wsgi import StartResponse, status_line
from llmts.server.upstream.client import (
    UpstreamClient,
    forwarded_headers,
    upstream_chunks,
    upstream_error,
    upstream_failures,
    upstream_url,
)
from llmts.transport import DeliveryEvidence, client_socket
from llmts.transport.deadline import SERVER_WRITE_DEADLINE, ActiveDelivery, guard_writes

if TYPE_CHECKING:
    import urllib3

__all__ = ["Forwarded", "forward", "recorded_reply", "relay", "replayed_exchange"]

# Response headers not passed to the client: the connection's own, and the ones the serving side sets.
_NOT_RELAYED = HOP_BY_HOP_HEADERS | {"date", "server"}
_DEFAULT_SETTINGS = RecordingSettings()


@dataclass(slots=True)
class _Pending:
    """What keeping a forwarded exchange needs besides the answer."""

    session: Session
    neutral: NeutralRequest
    conversation: str | None
    # The secrets a recording of this exchange must not hold (the client's credential, a signer's own).
    secrets: tuple[str, ...]
    generation: int
    # The request's place in the recording (``SessionRecorder.reserve``), taken when it was admitted.
    ordinal: int | None
    started: float

    def keep(
        self,
        status: int,
        headers: list[tuple[str, str]],
        body: bytes | None,
        frames: tuple[bytes, ...] | None,
        first_byte: float,
    ) -> None:
        if not self.session.recorder.active:
            return
        exchange = Exchange(
            provider=self.neutral.provider,
            conversation_id=self.conversation,
            request=recorded_request(self.neutral),
            status=status,
            headers=tuple(headers),
            body=body,
            frames=frames,
            first_byte_seconds=first_byte - self.started,
            duration_seconds=time.monotonic() - self.started,
        )
        self.session.recorder.keep(exchange, self.secrets, self.generation, self.ordinal)


@dataclass(slots=True)
class Forwarded:
    """A 2xx streamed answer whose status and headers arrived; ``relay`` writes its body as it comes."""

    response: urllib3.BaseHTTPResponse
    status: int
    headers: list[tuple[str, str]]
    pending: _Pending
    url: str
    read_timeout: float


def forward(
    client: UpstreamClient,
    session: Session,
    adapter: ProviderAdapter,
    request: ProviderRequest,
    neutral: NeutralRequest,
    upstream: str,
    *,
    conversation: str | None,
    credential: str | None,
    ordinal: int | None,
) -> Reply | Forwarded:
    """Send the request upstream (signed again by the adapter's ``sign_upstream`` when it has one: the
    client's credential names llmts's host); a whole answer comes back as a ``Reply``, a stream as
    ``Forwarded``. A recording keeps the exchange at ``ordinal``, the place the request took when it was
    admitted (``SessionRecorder.reserve``)."""
    config = session.plan.configuration
    settings = (config.recording if config is not None else None) or _DEFAULT_SETTINGS
    session.recorder.room()  # 507 before anything leaves when the recording is full
    path = request.path[len(adapter.prefix) :]
    url = upstream_url(upstream, path, str(request.environ.get("QUERY_STRING", "")))
    outgoing = forwarded_headers(request.environ)
    secrets: tuple[str, ...] = (credential,) if credential else ()
    sign = adapter.sign_upstream
    if sign is not None:
        signed = sign(UpstreamRequest(request.method, url, outgoing, request.body))
        outgoing, secrets = dict(signed.headers), (*secrets, *signed.secrets)
    pending = _Pending(session, neutral, conversation, secrets, session.generation, ordinal, time.monotonic())
    response = client.send(
        request.method,
        url,
        outgoing,
        request.body,
        connect_timeout=settings.connect_timeout_seconds,
        read_timeout=settings.read_timeout_seconds,
    )
    first_byte = time.monotonic()
    status = response.status
    headers = [(name, value) for name, value in response.headers.items() if name.lower() not in _NOT_RELAYED]
    if neutral.stream and 200 <= status < 300:
        return Forwarded(response, status, headers, pending, url, settings.read_timeout_seconds)
    body = _whole(response, url, settings.read_timeout_seconds)
    pending.keep(status, headers, body, None, first_byte)
    return Reply(status, headers, body)


def _whole(response: urllib3.BaseHTTPResponse, url: str, read_timeout: float) -> bytes:
    limit = RECORDING_LIMITS["recorded_bytes"]
    pieces: list[bytes] = []
    size = 0
    try:
        for chunk in upstream_chunks(response):
            size += len(chunk)
            if size > limit:
                response.close()
                raise UpstreamUnreachable(f"the upstream's answer is over {limit} bytes")
            pieces.append(chunk)
    except upstream_failures() as error:
        response.close()
        raise upstream_error(error, url, read_timeout) from None
    response.release_conn()
    return b"".join(pieces)


def relay(
    start_response: StartResponse,
    forwarded: Forwarded,
    environ: Mapping[str, Any],
    session: Session,
    entry: JournalRecord,
    *,
    write_timeout: float | None,
    active: MutableSet[ActiveDelivery] | None,
    metrics: ProcessMetrics | None = None,
) -> Iterable[bytes]:
    """Start the response with the upstream's status and headers and return the body iterator that
    passes each upstream chunk on as it arrives (``metrics`` counts it once it is over, as ``respond``
    does for every other answer)."""
    entry.answered(forwarded.status)
    start_response(status_line(forwarded.status), forwarded.headers)
    evidence = DeliveryEvidence(None)
    body = _relayed(forwarded, session, entry, evidence, metrics)
    if write_timeout is None and active is None:
        return body
    sock = client_socket(environ)
    return guard_writes(body, evidence, sock, write_timeout, active, environ.get(SERVER_WRITE_DEADLINE))


def _relayed(
    forwarded: Forwarded,
    session: Session,
    entry: JournalRecord,
    evidence: DeliveryEvidence,
    metrics: ProcessMetrics | None,
) -> Iterator[bytes]:
    response = forwarded.response
    # Chunks are kept only for a recording, and only within what a recorded answer may hold; the journal
    # preview keeps its own first ``preview_bytes`` (the relay itself buffers nothing).
    recording = session.recorder.active
    frames: list[bytes] = []
    preview: list[bytes] = []
    preview_room = session.journal.preview_bytes
    first_byte: float | None = None
    try:
        for chunk in upstream_chunks(response):
            if first_byte is None:
                first_byte = time.monotonic()
            yield chunk
            now = time.monotonic()
            evidence.headers_committed = True
            evidence.first_frame_at = evidence.first_frame_at or now
            evidence.last_frame_at = now
            evidence.emitted_frames += 1
            evidence.emitted_bytes += len(chunk)
            if preview_room > 0:
                preview.append(chunk[:preview_room])
                preview_room -= len(preview[-1])
            if recording:
                frames.append(chunk)
                if (
                    len(frames) > RECORDING_LIMITS["recorded_frames"]
                    or evidence.emitted_bytes > RECORDING_LIMITS["recorded_bytes"]
                ):
                    recording = False  # too large to replay: relayed, not kept
                    frames.clear()
                    session.recorder.drop()
        evidence.headers_committed = True
        evidence.terminal_marker_observed = evidence.emitted_frames > 0
        evidence.transport_outcome = "completed"
    except upstream_failures() as error:  # the upstream failed mid-stream: end the relay where it is
        entry.failed(upstream_error(error, forwarded.url, forwarded.read_timeout).code)
        evidence.transport_outcome = "early_end"
    finally:
        completed = evidence.transport_outcome == "completed"
        if evidence.transport_outcome is None:
            evidence.transport_outcome = "client_gone"
        if completed:
            response.release_conn()
        else:
            response.close()
        entry.capture_response(b"".join(preview), None, session.journal.preview_bytes, evidence.emitted_bytes)
        entry.apply_evidence(evidence, False)
        session.journal.finish(entry)
        if metrics is not None:
            metrics.record(entry)
        if completed and recording and frames:
            forwarded.pending.keep(
                forwarded.status, forwarded.headers, None, tuple(frames), first_byte or time.monotonic()
            )


def recorded_reply(recorded: RecordedOutput) -> Reply:
    """A ``recorded`` fixture's answer as it was recorded (the exchange writes its frames one by one)."""
    if recorded.frames is None:
        return Reply(recorded.status, list(recorded.headers), recorded.body or b"")
    return Reply(recorded.status, list(recorded.headers), frames=list(recorded.frames))


def replayed_exchange(
    recorded: RecordedOutput, neutral: NeutralRequest, conversation: str | None
) -> Exchange:
    """A replayed recorded answer as an exchange a recording session keeps (``new_episodes``)."""
    return Exchange(
        provider=neutral.provider,
        conversation_id=conversation,
        request=recorded.request if recorded.request is not None else recorded_request(neutral),
        status=recorded.status,
        headers=recorded.headers,
        body=recorded.body if recorded.frames is None else None,
        frames=recorded.frames,
    )
