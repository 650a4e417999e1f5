"""Record and replay in the configuration (docs/recording.md): upstreams, recording settings, and the
``recorded`` response fixture that replays a provider's answer byte for byte.

A ``recorded`` fixture holds an HTTP answer as the upstream sent it: status, headers, and either the whole
body or the stream's frames (one per chunk the upstream wrote, so a replay keeps chunk boundaries), plus a
summary of the request it answered (``request``), which a replayed request must equal (operation, model,
stream, system prompt and messages) or get 409 ``llm_test_server_no_recorded_match`` naming the closest
recorded request. It lives below ``fixtures.py`` (which lists it as a response kind) and imports nothing of
llmts but the provider metadata leaf.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, field_validator, model_serializer, model_validator

from llmts.catalog import registry as catalog
from llmts.catalog.credentials import SECRET_HEADERS
from llmts.schema.model_base import STRICT

__all__ = [
    "HOP_BY_HOP_HEADERS",
    "RECORDING_LIMITS",
    "SECRET_HEADERS",
    "RecordedMessage",
    "RecordedReply",
    "RecordedRequest",
    "RecordedToolCall",
    "RecordingSettings",
    "check_upstreams",
    "recorded_output_tokens",
]

_MiB = 1024 * 1024

# Documented in docs/configuration.md and docs/recording.md with the other LIMITS.
RECORDING_LIMITS: dict[str, int] = {
    "recorded_frames": 65_536,
    "recorded_bytes": 16 * _MiB,
    "recorded_headers": 128,
    "recorded_messages": 4096,
    "recorded_inputs": 4096,
    "upstream_url_chars": 2048,
    "recording_max_exchanges": 10_000,
    "recording_max_bytes": 1024 * _MiB,
    "redact_patterns": 32,
    "redact_pattern_chars": 1024,
}

# Headers that describe one connection, never the answer: not forwarded, not recorded, not replayed
# (RFC 9110 section 7.6.1, plus the framing headers the serving side computes itself).
HOP_BY_HOP_HEADERS = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "content-length",
    }
)

_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$")
Role = Literal["system", "developer", "user", "assistant", "tool"]


class RecordedToolCall(BaseModel):
    """A tool call of an assistant message in the recorded request's history."""

    model_config = STRICT

    id: str
    name: str
    arguments: str = ""


class RecordedMessage(BaseModel):
    """One normalized message of the recorded request (what llmts's parser made of it)."""

    model_config = STRICT

    role: Role
    text: str = ""
    tool_call_id: str | None = None
    tool_calls: list[RecordedToolCall] | None = None

    @model_serializer(mode="wrap")
    def _drop_unset(self, handler: Any) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        return {k: v for k, v in data.items() if v is not None and (k != "text" or v)}


# An operation's option values (``RecordedRequest.options``): numbers, names, image input positions, a
# list of names (what an ``OperationInput``'s ``options()`` gives for a tuple of strings).
OptionValue = (
    int
    | float
    | str
    | list[int]
    | Annotated[list[str], Field(max_length=RECORDING_LIMITS["recorded_inputs"])]
)
_OptionName = Annotated[str, Field(min_length=1, max_length=64)]


class RecordedRequest(BaseModel):
    """The request a recorded answer was given to; a replayed request must equal it. Chat requests are
    their system prompt and messages; other operations (embeddings, moderation, rerank, images, audio...)
    their ``inputs`` (texts to embed or moderate, documents to rerank, the prompt or text to speak), the
    rerank ``query``, the ``options`` they name (``dimensions``, ``top_n``, image ``count`` and size,
    formats, ``speed``, ``language``) and the SHA-256 of an uploaded file (never the file itself)."""

    model_config = STRICT

    operation: str = Field(min_length=1, max_length=256)
    model: str = Field(max_length=256)
    stream: bool = False
    system: str = ""
    messages: list[RecordedMessage] = Field(
        default_factory=list, max_length=RECORDING_LIMITS["recorded_messages"]
    )
    inputs: list[str] = Field(default_factory=list, max_length=RECORDING_LIMITS["recorded_inputs"])
    query: str = ""
    options: dict[_OptionName, OptionValue] = Field(default_factory=dict, max_length=16)
    upload_sha256: str = Field(default="", pattern=r"^([0-9a-f]{64})?$")

    @model_serializer(mode="wrap")
    def _drop_unset(self, handler: Any) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for name in ("system", "inputs", "query", "options", "upload_sha256"):
            if not data.get(name):
                data.pop(name, None)
        return data


def _decoded(value: str, encoding: str, where: str) -> bytes:
    if encoding == "utf-8":
        return value.encode()
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError(f"{where} is not valid base64") from None


class RecordedReply(BaseModel):
    """An HTTP answer as the upstream sent it: ``body`` (a whole answer) or ``frames`` (a stream, one
    entry per chunk the upstream wrote); ``encoding`` ``base64`` for binary protocols."""

    model_config = STRICT

    status: int = Field(ge=100, le=599)
    headers: list[tuple[str, str]] = Field(
        default_factory=list, max_length=RECORDING_LIMITS["recorded_headers"]
    )
    encoding: Literal["utf-8", "base64"] = "utf-8"
    body: str | None = None
    frames: list[str] | None = Field(
        default=None, min_length=1, max_length=RECORDING_LIMITS["recorded_frames"]
    )
    request: RecordedRequest | None = None

    @field_validator("headers")
    @classmethod
    def _header_shapes(cls, value: list[tuple[str, str]]) -> list[tuple[str, str]]:
        for name, text in value:
            if not _TOKEN.match(name):
                raise ValueError(f"header name {name[:64]!r} is not an HTTP token")
            if name.lower() in HOP_BY_HOP_HEADERS:
                raise ValueError(f"header {name!r} describes a connection; the serving side sets it")
            if "\r" in text or "\n" in text or len(text) > 8192:
                raise ValueError(f"header {name!r} has a line break or is over 8192 characters")
        return value

    @model_validator(mode="after")
    def _one_payload(self) -> RecordedReply:
        if (self.body is None) == (self.frames is None):
            raise ValueError("a recorded answer has exactly one of body or frames")
        size = len(self.body_bytes()) if self.body is not None else sum(len(f) for f in self.frame_bytes())
        if size > RECORDING_LIMITS["recorded_bytes"]:
            raise ValueError(f"a recorded answer holds at most {RECORDING_LIMITS['recorded_bytes']} bytes")
        if self.frames is not None and not 200 <= self.status < 300:
            raise ValueError("a recorded stream (frames) needs a 2xx status")
        return self

    def body_bytes(self) -> bytes:
        return _decoded(self.body or "", self.encoding, "body")

    def frame_bytes(self) -> list[bytes]:
        return [_decoded(frame, self.encoding, f"frames[{i}]") for i, frame in enumerate(self.frames or ())]

    @model_serializer(mode="wrap")
    def _drop_unset(self, handler: Any) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        data["headers"] = [list(pair) for pair in self.headers]
        if self.encoding == "utf-8":
            data.pop("encoding")
        return {k: v for k, v in data.items() if v is not None}


class RecordingSettings(BaseModel):
    """``recording``: how much a recording session keeps, what it redacts, how long it waits upstream."""

    model_config = STRICT

    max_exchanges: int = Field(default=1000, ge=1, le=RECORDING_LIMITS["recording_max_exchanges"])
    max_bytes: int = Field(default=64 * _MiB, ge=1024, le=RECORDING_LIMITS["recording_max_bytes"])
    # Regular expressions whose matches are replaced by ``[REDACTED]`` in everything kept.
    redact: list[str] = Field(default_factory=list, max_length=RECORDING_LIMITS["redact_patterns"])
    connect_timeout_seconds: float = Field(default=10.0, gt=0, le=120)
    read_timeout_seconds: float = Field(default=300.0, gt=0, le=3600)

    @field_validator("redact")
    @classmethod
    def _patterns(cls, value: list[str]) -> list[str]:
        import regex  # on first use: only recording configurations with patterns need it (~1.5 MB)

        for pattern in value:
            if not pattern or len(pattern) > RECORDING_LIMITS["redact_pattern_chars"]:
                raise ValueError(f"patterns are 1..{RECORDING_LIMITS['redact_pattern_chars']} characters")
            try:
                regex.compile(pattern)
            except regex.error as exc:
                raise ValueError(f"not a valid regular expression: {exc}") from None
        return value


def check_upstreams(value: dict[str, str]) -> dict[str, str]:
    """``upstreams``: provider namespace -> the base URL of the real API (http or https, no query), which
    the provider's own ``upstream_check`` accepts."""
    namespaces = catalog.CATALOG.namespaces
    checks = {info.namespace: info.upstream_check for info in catalog.CATALOG.providers}
    for namespace, url in value.items():
        if namespace not in namespaces:
            raise ValueError(
                f"unknown provider namespace {namespace!r}; expected one of " + ", ".join(namespaces)
            )
        if len(url) > RECORDING_LIMITS["upstream_url_chars"]:
            raise ValueError(f"upstream URLs are at most {RECORDING_LIMITS['upstream_url_chars']} characters")
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
            raise ValueError(f"upstreams[{namespace!r}] must be an http(s) URL without query: {url[:128]!r}")
        check = checks.get(namespace)
        refused = check(url) if check is not None else None
        if refused is not None:
            raise ValueError(f"upstreams[{namespace!r}]: {refused}")
    return value


def recorded_output_tokens(size: int) -> int:
    """The output tokens llmts counts for a recorded answer of ``size`` bytes (about four per token): its
    usage in the journal and what a recorded ``pacing`` spreads over the stream."""
    return max(1, size // 4)
