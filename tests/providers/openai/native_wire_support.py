"""Raw HTTP for the OpenAI native-tool wire tests: a POST to the Responses route (or another path) with a
bearer key, as the SDK would send it but without the SDK's checks."""

from __future__ import annotations

from typing import Any

from llmts import SessionClient
from tests.helpers import RawResponse
from tests.support.in_process import send_raw

__all__ = ["AUTH", "RESPONSES", "post_raw"]

RESPONSES = "/openai/v1/responses"
AUTH = {"Authorization": "Bearer k"}


def post_raw(session: SessionClient, body: Any, path: str = RESPONSES) -> RawResponse:
    return send_raw(session, "POST", path, body, AUTH)
