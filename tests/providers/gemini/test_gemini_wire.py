"""Gemini on the wire (raw HTTP): exact stream framing, auth spellings, Google's error envelope, routing."""

from __future__ import annotations

import json
import socket
from functools import partial
from typing import Any
from urllib.parse import urlsplit

import pytest

from llmts import ConfigBuilder, SessionClient
from tests.helpers import RawResponse, raw_request
from tests.support.configure import built
from tests.support.envelopes import assert_google_error
from tests.support.in_process import send_raw
from tests.support.sse import sse_events

pytestmark = pytest.mark.sdk

MODEL = "gemini-2.5-flash"
KEY = {"x-goog-api-key": "k"}
HI = {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}


def _post(session: SessionClient, path: str, body: Any, headers: dict[str, str] | None = None) -> RawResponse:
    return send_raw(session, "POST", path, body, KEY if headers is None else headers)


def _generate(method: str = "generateContent", version: str = "v1beta", query: str = "") -> str:
    return f"/gemini/{version}/models/{MODEL}:{method}{query}"


_configure = partial(built, models=[MODEL])


def test_sse_stream_has_only_data_lines_each_followed_by_a_blank_line(app_session: SessionClient) -> None:
    _configure(app_session, ConfigBuilder().scenario().text("Hi there!", chunks=["Hi", " there", "!"]))

    response = _post(app_session, _generate("streamGenerateContent", query="?alt=sse"), HI)

    assert response.status == 200
    assert response.headers["content-type"] == "text/event-stream"
    events = sse_events(response.body, newline="\r\n")
    assert len(events) == 4 and all(name is None for name, _ in events)
    chunks = [json.loads(data) for _, data in events]
    assert [c["candidates"][0]["content"] for c in chunks] == [
        {"parts": [{"text": piece}], "role": "model"} for piece in ("Hi", " there", "!", "")
    ]
    assert [c["candidates"][0].get("finishReason") for c in chunks] == [None, None, None, "STOP"]
    assert ["usageMetadata" in c for c in chunks] == [False, False, False, True]
    assert chunks[-1]["usageMetadata"]["candidatesTokenCount"] == 3
    assert all(c["modelVersion"] == MODEL and c["candidates"][0]["index"] == 0 for c in chunks)
    assert b"[DONE]" not in response.body and b"event:" not in response.body


def test_stream_without_alt_is_one_json_array(llmts_session: SessionClient) -> None:
    _configure(llmts_session, ConfigBuilder().scenario().text("ab", chunks=["a", "b"]))

    response = _post(llmts_session, _generate("streamGenerateContent", version="v1"), HI)

    assert response.status == 200
    assert response.headers["content-type"].startswith("application/json")
    assert response.headers.get("transfer-encoding") == "chunked"
    assert response.body.startswith(b"[{") and response.body.endswith(b"}]")
    chunks = response.json()
    assert [c["candidates"][0]["content"]["parts"][0]["text"] for c in chunks] == ["a", "b", ""]
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"


def test_streamed_function_call_is_whole_in_one_chunk_before_the_final_chunk(
    app_session: SessionClient,
) -> None:
    _configure(app_session, ConfigBuilder().scenario().tool_call("f", {"a": "0123456789012345678"}, id="c1"))
    body = {**HI, "tools": [{"functionDeclarations": [{"name": "f"}]}]}

    response = _post(app_session, _generate("streamGenerateContent", query="?alt=sse"), body)

    chunk, final = (json.loads(e[len("data: ") :]) for e in response.body.decode().split("\r\n\r\n")[:-1])
    assert chunk["candidates"][0]["content"]["parts"] == [
        {"functionCall": {"id": "c1", "name": "f", "args": {"a": "0123456789012345678"}}}
    ]
    assert "finishReason" not in chunk["candidates"][0]
    assert final["candidates"][0]["finishReason"] == "STOP" and "usageMetadata" in final


def test_non_object_tool_arguments_are_wrapped(app_session: SessionClient) -> None:
    _configure(app_session, ConfigBuilder().scenario().tool_call("f", [1, 2]))
    body = {**HI, "tools": [{"functionDeclarations": [{"name": "f"}]}]}

    response = _post(app_session, _generate(), body)

    part = response.json()["candidates"][0]["content"]["parts"][0]
    assert part["functionCall"]["args"] == {"value": [1, 2]}


def test_json_answer_shape_and_cached_tokens_only_when_positive(app_session: SessionClient) -> None:
    _configure(app_session, ConfigBuilder().scenario().text("Hello"))

    response = _post(app_session, _generate(), HI)

    payload = response.json()
    assert set(payload) == {"candidates", "usageMetadata", "modelVersion", "responseId"}
    assert payload["candidates"] == [
        {"content": {"parts": [{"text": "Hello"}], "role": "model"}, "finishReason": "STOP", "index": 0}
    ]
    usage = payload["usageMetadata"]
    assert (
        usage["promptTokenCount"] == 8
        and usage["candidatesTokenCount"] == 2
        and usage["totalTokenCount"] == 10
    )
    assert "cachedContentTokenCount" not in usage


@pytest.mark.parametrize("auth", ["header", "query"])
def test_api_key_header_or_query_parameter(app_session: SessionClient, auth: str) -> None:
    _configure(app_session, ConfigBuilder().credentials(gemini="secret-key").scenario().text("ok"))
    query = "?key=secret-key" if auth == "query" else ""
    headers = {"x-goog-api-key": "secret-key"} if auth == "header" else {}

    response = _post(app_session, _generate(query=query), HI, headers)

    assert response.status == 200
    assert response.json()["candidates"][0]["content"]["parts"][0]["text"] == "ok"


@pytest.mark.parametrize(
    ("query", "headers"), [("?key=wrong", {}), ("", {"x-goog-api-key": "wrong"}), ("", {})]
)
def test_wrong_or_missing_key_is_401_api_key_not_valid(
    app_session: SessionClient, query: str, headers: dict[str, str]
) -> None:
    _configure(app_session, ConfigBuilder().credentials(gemini="secret-key").scenario().text("ok"))

    response = _post(app_session, _generate(query=query), HI, headers)

    error = assert_google_error(response, 401, "UNAUTHENTICATED")
    assert error["message"].startswith("API key not valid.")
    assert error["details"][0]["reason"] == "invalid_api_key"
    assert "secret-key" not in response.body.decode()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (b"{not json", None),
        (b"[1]", None),
        (b"", None),
        ({}, "contents"),
        ({"contents": []}, "contents"),
        ({"contents": "Hi"}, "contents"),
        ({"contents": [{"role": "robot", "parts": [{"text": "x"}]}]}, "contents[0].role"),
        ({"contents": [{"role": "user", "parts": []}]}, "contents[0].parts"),
        ({"contents": [{"role": "user", "parts": [{"text": 5}]}]}, "contents[0].parts[0].text"),
        (
            {"contents": [{"role": "user", "parts": [{"functionCall": {"name": "f"}}]}]},
            "contents[0].parts[0].functionCall",
        ),
        (
            {"contents": [{"role": "user", "parts": [{"functionResponse": {"response": {}}}]}]},
            "contents[0].parts[0].functionResponse.name",
        ),
        ({**HI, "tools": {"functionDeclarations": []}}, "tools"),
        (
            {**HI, "tools": [{"functionDeclarations": [{"description": "x"}]}]},
            "tools[0].functionDeclarations[0].name",
        ),
        (
            {**HI, "toolConfig": {"functionCallingConfig": {"mode": "SOMETIMES"}}},
            "toolConfig.functionCallingConfig.mode",
        ),
        (
            {
                **HI,
                "toolConfig": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["nope"]}},
            },
            "toolConfig.functionCallingConfig.allowedFunctionNames",
        ),
        ({**HI, "systemInstruction": 5}, "systemInstruction"),
        ({**HI, "generationConfig": {"candidateCount": 2}}, "generationConfig.candidateCount"),
        ({**HI, "generationConfig": "json"}, "generationConfig"),
    ],
)
def test_malformed_requests_get_400_in_google_envelope(
    app_session: SessionClient, body: Any, field: str | None
) -> None:
    _configure(app_session, ConfigBuilder().scenario().text("never"))

    response = _post(app_session, _generate(), body)

    error = assert_google_error(response, 400, "INVALID_ARGUMENT")
    violations = [d for d in error["details"] if d["@type"] == "type.googleapis.com/google.rpc.BadRequest"]
    if field is None:
        assert violations == []
    else:
        assert violations[0]["fieldViolations"][0]["field"] == field
    # Nothing was consumed by the bad requests.
    good = _post(app_session, _generate(), HI)
    assert good.json()["candidates"][0]["content"]["parts"][0]["text"] == "never"


def test_snake_case_request_fields_are_accepted(app_session: SessionClient) -> None:
    _configure(app_session, ConfigBuilder().scenario().tool_call("f", {"x": 1}))
    body = {
        "contents": [{"role": "user", "parts": [{"text": "Hi"}]}],
        "system_instruction": {"parts": [{"text": "Be brief."}]},
        "tools": [{"function_declarations": [{"name": "f"}]}],
        "tool_config": {"function_calling_config": {"mode": "ANY", "allowed_function_names": ["f"]}},
    }

    response = _post(app_session, _generate(), body)

    assert response.status == 200
    assert response.json()["candidates"][0]["content"]["parts"][0]["functionCall"]["name"] == "f"


def test_count_tokens_counts_a_wrapped_generate_request(app_session: SessionClient) -> None:
    _configure(app_session, ConfigBuilder().scenario().text("never"))
    wrapped = {
        "generateContentRequest": {
            "model": f"models/{MODEL}",
            **HI,
            "systemInstruction": {"parts": [{"text": "x" * 40}]},
        }
    }

    plain = _post(app_session, _generate("countTokens"), HI)
    with_system = _post(app_session, _generate("countTokens"), wrapped)
    both = _post(app_session, _generate("countTokens"), {**HI, **wrapped})

    assert plain.json()["totalTokens"] == 8
    assert with_system.json()["totalTokens"] == 18
    assert_google_error(both, 400, "INVALID_ARGUMENT")
    # countTokens never consumes a scripted answer.
    assert (
        _post(app_session, _generate(), HI).json()["candidates"][0]["content"]["parts"][0]["text"] == "never"
    )


def test_models_pages_omit_next_page_token_on_the_last_page(app_session: SessionClient) -> None:
    app_session.configure(ConfigBuilder().models("m1", "m2", "m3").build())

    first = send_raw(app_session, "GET", "/gemini/v1beta/models?pageSize=2", headers=KEY)
    token = first.json()["nextPageToken"]
    last = send_raw(app_session, "GET", f"/gemini/v1/models?pageSize=2&pageToken={token}", headers=KEY)
    whole = send_raw(app_session, "GET", "/gemini/v1/models", headers=KEY)

    assert [m["name"] for m in first.json()["models"]] == ["models/m1", "models/m2"]
    assert last.json() == {"models": [whole.json()["models"][2]]}
    assert "nextPageToken" not in whole.json() and len(whole.json()["models"]) == 3


def test_routing_errors_use_the_google_envelope(app_session: SessionClient) -> None:
    _configure(app_session, ConfigBuilder().scenario().text("never"))

    assert_google_error(
        send_raw(app_session, "POST", f"/gemini/v2/models/{MODEL}:generateContent", HI, KEY), 404, "NOT_FOUND"
    )
    # An unknown method suffix (embedContent is served since embeddings: docs/embeddings.md).
    assert_google_error(
        send_raw(app_session, "POST", f"/gemini/v1/models/{MODEL}:batchGenerateContent", HI, KEY),
        404,
        "NOT_FOUND",
    )
    assert_google_error(
        send_raw(app_session, "GET", f"/gemini/v1/models/{MODEL}:generateContent", headers=KEY),
        405,
        "UNIMPLEMENTED",
    )
    unknown = send_raw(app_session, "POST", "/gemini/v1/models/gemini-unknown:generateContent", HI, KEY)
    assert assert_google_error(unknown, 404, "NOT_FOUND")["details"][0]["reason"] == "model_not_found"


def test_unknown_session_is_a_google_404(llmts_server: Any) -> None:
    response = raw_request(llmts_server.url, "POST", f"/sessions/ses_{'0' * 32}{_generate()}", HI, KEY)
    error = assert_google_error(response, 404, "NOT_FOUND")
    assert error["details"][0]["reason"] == "llm_test_server_session_not_found"


def test_scripted_error_type_becomes_the_status_and_retry_after_is_sent(app_session: SessionClient) -> None:
    _configure(
        app_session,
        ConfigBuilder()
        .scenario()
        .error(429, "quota", "Quota exceeded", retry_after=1.5, type="RESOURCE_EXHAUSTED"),
    )

    response = _post(app_session, _generate(), HI)

    error = assert_google_error(response, 429, "RESOURCE_EXHAUSTED")
    assert error["message"] == "Quota exceeded"
    assert error["details"][0]["reason"] == "quota"
    assert response.headers["retry-after"] == "2"  # whole seconds, rounded up; RetryInfo keeps 1.5s
    assert {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1.5s"} in error["details"]


def test_sse_stream_over_keep_alive_connection(llmts_session: SessionClient) -> None:
    """Two streams on one connection: each body ends (chunked terminator) right after its last event."""
    _configure(llmts_session, ConfigBuilder().scenario(terminal_policy="repeat_last_response").text("ok"))
    parts = urlsplit(llmts_session.provider_base)
    body = json.dumps(HI)
    request = (
        f"POST {parts.path}{_generate('streamGenerateContent', query='?alt=sse')} HTTP/1.1\r\n"
        "Host: 127.0.0.1\r\n"
        f"x-goog-api-key: k\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n{body}"
    ).encode()
    assert parts.port is not None
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        for _ in range(2):
            sock.sendall(request)
            received = b""
            while not received.endswith(b"0\r\n\r\n"):
                data = sock.recv(65536)
                assert data, "server closed the keep-alive connection"
                received += data
            assert b'"finishReason":"STOP"' in received
