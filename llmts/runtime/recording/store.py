"""What a recording session keeps: one ``Exchange`` per answered request, redacted, within its bounds.

Order: each request takes its place (an ordinal, ``SessionRecorder.reserve``) when it is admitted, and
its exchange is kept at that place when its answer is complete, so the recording lists exchanges in request
order even when a streamed answer completes after the next request's (a replay answers in recorded order).
A place never filled (the client left, the upstream failed, the answer was too large) leaves no gap.

Bounds (``recording`` in the configuration, docs/recording.md): at most ``max_exchanges`` exchanges (a
request beyond them is refused before anything is forwarded, 507 ``llm_test_server_recording_full``) and
``max_bytes`` accounted bytes (an exchange that does not fit is answered but not kept, and counted in
``dropped``, which ``GET /admin-api/recording`` reports). The session charges the kept bytes to the
process memory budget (``llmts/runtime/memory.py``) like stored objects: they are never evicted for it.

Redaction happens before anything is kept: response headers that carry credentials or describe the
connection are dropped, the credential the client presented is replaced wherever it appears, and so is
every match of the configured ``recording.redact`` patterns.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, replace

from llmts.schema.recorded import (
    HOP_BY_HOP_HEADERS,
    SECRET_HEADERS,
    RecordedMessage,
    RecordedRequest,
    RecordingSettings,
)

__all__ = ["REDACTED", "Exchange", "Recorder", "Redactor", "kept_headers"]

REDACTED = "[REDACTED]"
_REDACTED_BYTES = REDACTED.encode()
# Credentials and cookies never reach a recording; ``date`` and ``server`` are the serving side's own.
_NOT_KEPT = HOP_BY_HOP_HEADERS | SECRET_HEADERS | {"date", "server"}
# One redaction search may run this long; a pattern that takes longer redacts the whole value instead.
_PATTERN_TIMEOUT_SECONDS = 0.5
# Accounted bytes of an exchange besides its variable-length parts.
_FIXED_BYTES = 640


def kept_headers(headers: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """The response headers a recording keeps (and a forwarded answer passes on, minus nothing else)."""
    return tuple((name, value) for name, value in headers if name.lower() not in _NOT_KEPT)


@dataclass(slots=True)
class Exchange:
    """One answered request: its summary, the answer as the upstream sent it, and how long it took."""

    provider: str
    # The conversation header's value (None when the request had none): graphs are keyed by it.
    conversation_id: str | None
    request: RecordedRequest
    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes | None
    frames: tuple[bytes, ...] | None
    # Seconds from forwarding to the first byte of the body, and to its end.
    first_byte_seconds: float = 0.0
    duration_seconds: float = 0.0

    def retained_bytes(self) -> int:
        payload = len(self.body) if self.body is not None else sum(len(f) for f in self.frames or ())
        headers = sum(len(name) + len(value) + 16 for name, value in self.headers)
        messages = sum(
            len(m.text) + 64 + sum(len(c.id) + len(c.name) + len(c.arguments) for c in m.tool_calls or ())
            for m in self.request.messages
        )
        frames = 48 * len(self.frames or ())
        request = self.request
        texts = len(request.system) + len(request.query) + sum(len(text) + 16 for text in request.inputs)
        return _FIXED_BYTES + payload + headers + messages + frames + texts


class Redactor:
    """Replaces secrets in text and bytes: literal values (the presented credential) and patterns."""

    __slots__ = ("_text",)

    def __init__(self, patterns: Iterable[str]) -> None:
        import regex  # on first use: only recording sessions with patterns need it (~1.5 MB)

        self._text = [regex.compile(pattern) for pattern in patterns]

    def text(self, value: str, secrets: tuple[str, ...]) -> str:
        for secret in secrets:
            value = value.replace(secret, REDACTED)
        for pattern in self._text:
            try:
                value = pattern.sub(REDACTED, value, timeout=_PATTERN_TIMEOUT_SECONDS)
            except TimeoutError:
                return REDACTED
        return value

    def data(self, value: bytes, secrets: tuple[str, ...]) -> bytes:
        for secret in secrets:
            value = value.replace(secret.encode(), _REDACTED_BYTES)
        if not self._text:
            return value
        # Patterns are text patterns: bytes that are not UTF-8 survive the round trip unchanged.
        return self.text(value.decode("utf-8", "surrogateescape"), ()).encode("utf-8", "surrogateescape")

    def exchange(self, exchange: Exchange, secrets: tuple[str, ...]) -> Exchange:
        """``exchange`` with ``secrets`` replaced (the client's credential; for a re-signed upstream also the
        server's own key id and session token); one shorter than 4 characters is not searched for: it
        would redact ordinary text."""
        secrets = tuple(secret for secret in secrets if len(secret) >= 4)
        if not secrets and not self._text:
            return replace(exchange, headers=kept_headers(exchange.headers))
        request = exchange.request
        messages = [
            RecordedMessage.model_construct(
                **{**m.__dict__, "text": self.text(m.text, secrets)}, _fields_set=m.model_fields_set
            )
            for m in request.messages
        ]
        summary = request.model_copy(
            update={
                "messages": messages,
                "system": self.text(request.system, secrets),
                "inputs": [self.text(text, secrets) for text in request.inputs],
                "query": self.text(request.query, secrets),
            }
        )
        return replace(
            exchange,
            request=summary,
            headers=tuple((n, self.text(v, secrets)) for n, v in kept_headers(exchange.headers)),
            body=self.data(exchange.body, secrets) if exchange.body is not None else None,
            frames=tuple(self.data(f, secrets) for f in exchange.frames)
            if exchange.frames is not None
            else None,
        )


class Recorder:
    """A session's kept exchanges, in request order, within ``max_exchanges`` and ``max_bytes``."""

    def __init__(self, settings: RecordingSettings | None) -> None:
        settings = settings or RecordingSettings()
        self.settings = settings
        self.redactor = Redactor(settings.redact)
        # Kept exchanges and the places their requests took (``SessionRecorder.reserve``), both ascending.
        self._exchanges: list[Exchange] = []
        self._ordinals: list[int] = []
        self.retained_bytes = 0
        self.dropped = 0

    @property
    def full(self) -> bool:
        return len(self._exchanges) >= self.settings.max_exchanges

    def fits(self, size: int) -> bool:
        return not self.full and self.retained_bytes + size <= self.settings.max_bytes

    def keep(self, exchange: Exchange, size: int, ordinal: int | None = None) -> None:
        """Keep ``exchange`` at its request's place: after every exchange with a smaller or equal ordinal,
        before every one with a larger (None: after everything kept so far)."""
        if ordinal is None:
            ordinal = self._ordinals[-1] if self._ordinals else 0
        index = bisect_right(self._ordinals, ordinal)
        self._ordinals.insert(index, ordinal)
        self._exchanges.insert(index, exchange)
        self.retained_bytes += size

    def exchanges(self) -> list[Exchange]:
        return list(self._exchanges)

    def clear(self) -> None:
        self._exchanges.clear()
        self._ordinals.clear()
        self.retained_bytes = 0
        self.dropped = 0
