"""Raw HTTP for the spec check: requests exactly as written (JSON or multipart), answers exactly as sent
(status, headers, body bytes), and SSE split into its events without an SDK in between."""

from __future__ import annotations

import http.client
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from urllib3 import encode_multipart_formdata

__all__ = ["Answer", "Event", "FormField", "request", "sse_events"]

# A multipart field: (name, value) or (name, (filename, bytes, content type)).
FormField = tuple[str, "str | tuple[str, bytes, str]"]


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip()

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass(frozen=True)
class Event:
    """One SSE event: its ``event:`` name (None without one) and its ``data:`` text."""

    name: str | None
    data: str


def request(
    base_url: str,
    method: str,
    path: str,
    *,
    body: Any = None,
    form: list[FormField] | None = None,
    headers: dict[str, str] | None = None,
) -> Answer:
    """One request under ``base_url`` (a session's ``provider_base``): ``body`` as JSON (a ``str`` is sent
    as it is), or ``form`` as multipart/form-data."""
    parts = urlsplit(base_url)
    sent = {"Authorization": "Bearer sk-spec", **(headers or {})}
    data: bytes | None = None
    if form is not None:
        data, sent["Content-Type"] = encode_multipart_formdata(form)
    elif body is not None:
        data = (body if isinstance(body, str) else json.dumps(body)).encode()
        sent["Content-Type"] = "application/json"
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=30)
    try:
        connection.request(method, parts.path.rstrip("/") + "/openai/v1" + path, body=data, headers=sent)
        response = connection.getresponse()
        return Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, response.read())
    finally:
        connection.close()


def sse_events(body: bytes) -> list[Event]:
    """The events of an SSE body (fields ``event`` and ``data``; comments and other fields ignored, as an
    EventSource does)."""
    events = []
    for block in body.decode().replace("\r\n", "\n").split("\n\n"):
        name: str | None = None
        data: list[str] = []
        for line in block.split("\n"):
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "event":
                name = value
            elif field == "data":
                data.append(value)
        if data:
            events.append(Event(name, "\n".join(data)))
    return events
