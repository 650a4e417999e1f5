"""The error envelopes, checked whole: status, content type, exactly the envelope's keys. Each returns
the error object for the test's own checks of code and message."""

from __future__ import annotations

from typing import Any

from tests.helpers import RawResponse

__all__ = ["assert_anthropic_error", "assert_control_error", "assert_google_error", "assert_openai_error"]


def assert_openai_error(response: RawResponse, status: int, error_type: str | None = None) -> dict[str, Any]:
    """OpenAI's ``{"error": {"message", "type", "param", "code"}}`` (also Azure OpenAI's and the OpenAI
    wire of Ollama)."""
    assert response.status == status, (response.status, response.body[:500])
    assert response.headers["content-type"].startswith("application/json")
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}, error
    assert error["message"]
    if error_type is not None:
        assert error["type"] == error_type, error
    return dict(error)


def assert_anthropic_error(response: RawResponse, status: int, error_type: str) -> dict[str, Any]:
    """Anthropic's ``{"type": "error", "error": {...}, "request_id"}``, the id also in ``request-id``."""
    assert response.status == status, (response.status, response.body[:500])
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert set(body) == {"type", "error", "request_id"}
    assert body["type"] == "error"
    assert body["error"]["type"] == error_type
    assert body["error"]["message"]
    assert body["error"]["details"] == {"error_code": body["error"]["code"]}
    assert body["request_id"].startswith("req_")
    assert response.headers["request-id"] == body["request_id"]
    return dict(body["error"])


def assert_google_error(response: RawResponse, code: int, status: str) -> dict[str, Any]:
    """Google's ``{"error": {"code", "message", "status", "details": [ErrorInfo]}}`` (Gemini)."""
    assert response.status == code
    assert response.headers["content-type"].startswith("application/json")
    error = response.json()["error"]
    assert set(error) == {"code", "message", "status", "details"}
    assert (error["code"], error["status"]) == (code, status)
    assert error["message"]
    info = error["details"][0]
    assert info["@type"] == "type.googleapis.com/google.rpc.ErrorInfo" and info["domain"] == "llmts"
    return dict(error)


def assert_control_error(response: RawResponse, status: int, code: str) -> dict[str, Any]:
    """The control API's ``{"error": {"code", "message", "details"}}``."""
    assert response.status == status, (response.status, response.body[:500])
    assert response.headers["content-type"].startswith("application/json")
    error = response.json()["error"]
    assert set(error) == {"code", "message", "details"}, error
    assert error["code"] == code and error["message"], error
    return dict(error)
