"""Shared by the A2A tests (docs/a2a.md): which ``a2a-sdk`` major is installed (the tox factors
``a2a03`` and ``a2a1`` run tests/peers/a2a against each), raw JSON-RPC over HTTP, and message builders of
both wires in the exact shapes the SDK clients send (captured from a2a-sdk 1.3.0 and 0.3.26)."""

from __future__ import annotations

import json
import uuid
from importlib import metadata
from typing import Any

import pytest

from llmts import SessionClient
from tests.helpers import RawResponse, raw_request
from tests.support.sse import sse_events

__all__ = [
    "SDK_MAJOR",
    "needs_sdk0",
    "needs_sdk1",
    "rpc",
    "rpc_events",
    "v03_message",
    "v1_message",
]


def _sdk_major() -> int | None:
    try:
        return int(metadata.version("a2a-sdk").split(".")[0])
    except metadata.PackageNotFoundError:
        return None


SDK_MAJOR = _sdk_major()
# Each test that drives the official client says which major it is written for.
needs_sdk1 = pytest.mark.skipif(SDK_MAJOR != 1, reason="drives the a2a-sdk 1.x client (tox -e a2a1)")
needs_sdk0 = pytest.mark.skipif(SDK_MAJOR != 0, reason="drives the a2a-sdk 0.3 client (tox -e a2a03)")


def v1_message(text: str, **fields: Any) -> dict[str, Any]:
    """A user message as a2a-sdk 1.x sends it (ProtoJSON)."""
    return {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}], **fields}


def v03_message(text: str, **fields: Any) -> dict[str, Any]:
    """A user message as a2a-sdk 0.3 sends it."""
    return {
        "kind": "message",
        "messageId": str(uuid.uuid4()),
        "parts": [{"kind": "text", "text": text}],
        "role": "user",
        **fields,
    }


def rpc(
    session: SessionClient,
    agent: str,
    method: str,
    params: dict[str, Any] | None = None,
    *,
    request_id: Any = "req-1",
) -> RawResponse:
    """One JSON-RPC request over raw HTTP (``params`` None: no ``params`` member, as 0.3 sends some)."""
    body: dict[str, Any] = {"id": request_id, "jsonrpc": "2.0", "method": method}
    if params is not None:
        body["params"] = params
    return raw_request(session.provider_base, "POST", f"/a2a/{agent}", body)


def rpc_events(response: RawResponse) -> list[dict[str, Any]]:
    """The JSON-RPC responses of an SSE answer (strictly framed: ``data:`` only, no event names)."""
    assert response.status == 200
    assert response.headers["content-type"] == "text/event-stream"
    events = sse_events(response.body)
    assert all(name is None for name, _ in events)
    return [json.loads(data) for _, data in events]
