"""Every OpenAI route llmts serves, validated against OpenAI's published OpenAPI specification
(data/README.md: source, licence, the deliberate deviations): each JSON answer, each SSE event by its
``type``, each error envelope; and the spec's own request examples, sent as they are written.

Raw HTTP against the run's real server (the ``llmts_session`` fixture), so what is validated is the bytes
llmts sent. The spec is parsed once per process and each schema's validator built once
(``tests/providers/openai/spec/spec.py``)."""

from __future__ import annotations

import base64
import json
import re
import struct
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from llmts import SessionClient
from llmts.providers.openai.adapter import OPENAI
from tests.providers.openai.spec import refresh
from tests.providers.openai.spec.cases import CASES, CHAT_MODEL, Case
from tests.providers.openai.spec.check import answer_failures, error_failures
from tests.providers.openai.spec.examples import EXAMPLES, Example, example_request
from tests.providers.openai.spec.spec import OpenAISpec, load_spec
from tests.providers.openai.spec.wire import Answer, request


@pytest.fixture(scope="session")
def spec() -> OpenAISpec:
    return load_spec()


def _param(case: Case | Example) -> Any:
    marks = [pytest.mark.xfail(strict=True, reason=case.xfail)] if case.xfail else []
    return pytest.param(case, id=case.id, marks=marks)


def _text_failures(case: Case, answer: Answer) -> list[str]:
    """D4: `text`, `srt` and `vtt` transcripts are text/plain, which the spec does not describe."""
    if answer.status != 200 or answer.content_type != "text/plain" or not answer.body.strip():
        return [f"expected a text/plain transcript, got {answer.status} {answer.content_type!r}"]
    text = answer.body.decode()
    fmt = dict(field for field in case.form or [] if isinstance(field[1], str)).get("response_format")
    if fmt == "srt" and not re.match(r"1\n\d\d:\d\d:\d\d,\d{3} --> \d\d:\d\d:\d\d,\d{3}\n", text):
        return [f"not SRT: {text[:80]!r}"]
    if fmt == "vtt" and not re.match(r"WEBVTT\n\n\d\d:\d\d:\d\d\.\d{3} --> \d\d:\d\d:\d\d\.\d{3}\n", text):
        return [f"not WebVTT: {text[:80]!r}"]
    return []


def _audio_failures(answer: Answer) -> list[str]:
    """D5: speech is the audio's bytes, under its own media type or the spec's application/octet-stream."""
    if answer.status != 200:
        return [f"expected audio, got {answer.status}: {answer.body[:200]!r}"]
    media = answer.content_type
    if not (media.startswith("audio/") or media == "application/octet-stream") or not answer.body:
        return [f"expected audio bytes, got {answer.content_type!r} ({len(answer.body)} bytes)"]
    return []


def _decoded_embeddings(answer: Answer) -> Answer:
    """D10: with `encoding_format: base64` each embedding is the base64 of its little-endian float32s (the
    spec's schema says an array of numbers only); validate the decoded vector."""
    body = answer.json()
    for item in body["data"]:
        raw = base64.b64decode(item["embedding"], validate=True)
        item["embedding"] = list(struct.unpack(f"<{len(raw) // 4}f", raw))
    return Answer(answer.status, answer.headers, json.dumps(body).encode())


def _failures(spec: OpenAISpec, case: Case, answer: Answer) -> list[str]:
    if answer.status != case.status:
        return [f"status {answer.status}, expected {case.status}: {answer.body[:300]!r}"]
    if case.expect == "text":
        return _text_failures(case, answer)
    if case.expect == "audio":
        return _audio_failures(answer)
    if case.expect == "base64-embeddings":
        answer = _decoded_embeddings(answer)
    return answer_failures(spec, case.operation, answer, json_schema=case.json_schema)


@pytest.mark.parametrize("case", [_param(case) for case in CASES])
def test_answer_matches_the_spec(llmts_session: SessionClient, spec: OpenAISpec, case: Case) -> None:
    if case.config is not None:
        llmts_session.configure(case.config)
    method = case.operation[1].upper()
    answer = request(llmts_session.provider_base, method, case.url_path, body=case.body, form=case.form)
    failures = _failures(spec, case, answer)
    assert not failures, "\n".join(failures)


# --- the stored-response routes (retrieve, replay, input items, delete) ----------------------------------

_BY_ID = ("/responses/{response_id}", "get")
STORED = {
    "retrieve": (_BY_ID, "", 200),
    "retrieve-stream": (_BY_ID, "?stream=true", 200),
    "retrieve-stream-starting-after": (_BY_ID, "?stream=true&starting_after=3", 200),
    "input-items": (("/responses/{response_id}/input_items", "get"), "/input_items", 200),
    "input-items-asc-limit": (
        ("/responses/{response_id}/input_items", "get"),
        "/input_items?order=asc&limit=1",
        200,
    ),
    "delete": (("/responses/{response_id}", "delete"), "", 200),
    "retrieve-unknown": (_BY_ID, "", 404),
    "delete-unknown": (("/responses/{response_id}", "delete"), "", 404),
}

# D3: DELETE /responses/{id} has no schema for its 200 in the spec; its example (and the API reference)
# show this object.
DELETED = {
    "type": "object",
    "required": ["id", "object", "deleted"],
    "properties": {"id": {"type": "string"}, "object": {"const": "response"}, "deleted": {"const": True}},
}


def _deleted_failures(answer: Answer) -> list[str]:
    return [
        f"body {error.json_path}: {error.message}"
        for error in Draft202012Validator(DELETED).iter_errors(answer.json())
    ]


def _stored_response(session: SessionClient) -> str:
    session.configure(
        {"scenarios": [{"responses": [{"reasoning": {"summary": ["Plan."]}, "text": "Sunny."}]}]}
    )
    created = request(
        session.provider_base,
        "POST",
        "/responses",
        body={
            "model": CHAT_MODEL,
            "instructions": "Be brief.",
            "input": [
                {"role": "user", "content": "Weather?"},
                {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
                {"role": "user", "content": [{"type": "input_text", "text": "So?"}]},
            ],
        },
    )
    assert created.status == 200, created.body
    return str(created.json()["id"])


@pytest.mark.parametrize("route", STORED)
def test_stored_response_route_matches_the_spec(
    llmts_session: SessionClient, spec: OpenAISpec, route: str
) -> None:
    operation, suffix, status = STORED[route]
    response_id = "resp_unknown" if status == 404 else _stored_response(llmts_session)
    answer = request(llmts_session.provider_base, operation[1].upper(), f"/responses/{response_id}{suffix}")
    assert answer.status == status, answer.body
    failures = _deleted_failures(answer) if route == "delete" else answer_failures(spec, operation, answer)
    assert not failures, "\n".join(failures)


# --- error answers the cases above do not reach ----------------------------------------------------------


def test_wrong_key_answers_the_error_envelope(llmts_session: SessionClient, spec: OpenAISpec) -> None:
    llmts_session.configure({"provider_credentials": {"openai": "sk-right"}})
    answer = request(
        llmts_session.provider_base,
        "POST",
        "/chat/completions",
        body={"model": CHAT_MODEL, "messages": [{"role": "user", "content": "Hi"}]},
        headers={"Authorization": "Bearer sk-wrong"},
    )
    assert answer.status == 401
    assert not error_failures(spec, answer)


def _rate_limited(session: SessionClient) -> Answer:
    # A window of 10.5 s, so the time to its reset is fractional and the header has to round it.
    session.configure(
        {
            "rate_limits": {"requests_per_minute": 1, "window_seconds": 10.5},
            "scenarios": [{"responses": [{"text": "Hi."}]}],
        }
    )
    body = {"model": CHAT_MODEL, "messages": [{"role": "user", "content": "Hi"}]}
    first = request(session.provider_base, "POST", "/chat/completions", body=body)
    assert first.status == 200, first.body
    return request(session.provider_base, "POST", "/chat/completions", body=body)


def test_rate_limited_answer_matches_the_spec(llmts_session: SessionClient, spec: OpenAISpec) -> None:
    answer = _rate_limited(llmts_session)
    assert answer.status == 429
    assert not answer_failures(spec, ("/chat/completions", "post"), answer)


def test_rate_limited_retry_after_matches_the_spec(llmts_session: SessionClient, spec: OpenAISpec) -> None:
    """The TooManyRequests answer's `Retry-After` header schema: an integer, at least 1 (issue 24 item 4:
    it was the fractional time to the window's reset)."""
    answer = _rate_limited(llmts_session)
    pointer = "#/components/responses/TooManyRequests/headers/Retry-After/schema"
    value = answer.headers.get("retry-after", "")
    try:
        parsed: Any = json.loads(value)
    except ValueError:
        parsed = value
    assert not spec.errors(pointer, parsed), f"retry-after: {value!r}"


# --- the spec's own request examples ------------------------------------------------------------------


@pytest.mark.parametrize("example", [_param(example) for example in EXAMPLES])
def test_spec_example_is_accepted(llmts_session: SessionClient, spec: OpenAISpec, example: Example) -> None:
    method, path, body, form = example_request(example, llmts_session)
    answer = request(llmts_session.provider_base, method, path, body=body, form=form)
    if example.expect == "audio":
        failures = _audio_failures(answer)
    elif answer.status != 200:
        failures = [f"status {answer.status}: {answer.body[:300]!r}"]
    elif example.operation == ("/responses/{response_id}", "delete"):
        failures = _deleted_failures(answer)
    else:
        failures = answer_failures(spec, example.operation, answer, json_schema=example.json_schema)
    assert not failures, "\n".join(failures)


# --- the check itself -------------------------------------------------------------------------------


def _route_operation(rule: str, method: str) -> tuple[str, str]:
    path = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", rule.removeprefix("/openai/v1"))
    return path, method.lower()


def test_every_openai_route_is_an_operation_the_check_covers() -> None:
    """A route added to the OpenAI adapter fails here until the spec check covers it (refresh.py's
    OPERATIONS and a case). GET /images/files/{id} is llmts's own (the URL of a `url` image answer)."""
    served = {_route_operation(route.rule, method) for route in OPENAI.routes for method in route.methods}
    assert served - {("/images/files/{image_id}", "get")} == set(refresh.OPERATIONS)
    covered = {case.operation for case in CASES} | {operation for operation, _, _ in STORED.values()}
    assert covered == set(refresh.OPERATIONS)


def test_the_spec_file_names_its_source(spec: OpenAISpec) -> None:
    source = spec.source
    assert source["repository"] == "https://github.com/openai/openai-openapi"
    assert re.fullmatch(r"[0-9a-f]{40}", source["ref"]), "record the commit the spec was taken from"
    assert set(spec.document["paths"]) == {path for path, _ in refresh.OPERATIONS}


def test_the_check_refuses_what_the_spec_refuses(spec: OpenAISpec) -> None:
    """Each kind of check fails on a broken answer (so a passing case means something)."""
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", "content": "x", "refusal": None},
        "finish_reason": "stop",
        "logprobs": None,
    }
    chat: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [choice],
    }
    operation = ("/chat/completions", "post")
    ok = Answer(200, {"content-type": "application/json"}, json.dumps(chat).encode())
    assert answer_failures(spec, operation, ok) == []
    broken = {**chat, "choices": [{**choice, "finish_reason": "done"}]}
    (failure,) = answer_failures(spec, operation, Answer(200, ok.headers, json.dumps(broken).encode()))
    assert failure.startswith("body $.choices[0].finish_reason: 'done' is not one of")

    chunk = {
        **chat,
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {}, "finish_reason": None}],
    }
    sse = {"content-type": "text/event-stream"}
    frames = f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode()
    assert answer_failures(spec, operation, Answer(200, sse, frames)) == []  # nullable finish_reason
    assert answer_failures(spec, operation, Answer(200, sse, frames[: -len(b"data: [DONE]\n\n")])) == [
        "stream: no final data: [DONE]"
    ]

    events = b'event: response.nonsense\ndata: {"type": "response.nonsense", "sequence_number": 0}\n\n'
    assert answer_failures(spec, ("/responses", "post"), Answer(200, sse, events)) == [
        "event 0 response.nonsense: type 'response.nonsense' is no event of ResponseStreamEvent"
    ]
    delta = {"type": "response.output_text.delta", "sequence_number": 0, "item_id": "m", "output_index": 0}
    frames = f"event: response.output_text.delta\ndata: {json.dumps(delta)}\n\n".encode()
    failures = answer_failures(spec, ("/responses", "post"), Answer(200, sse, frames))
    assert "event 0 response.output_text.delta $: 'delta' is a required property" in failures

    error = Answer(400, {"content-type": "application/json"}, b'{"error": {"message": "x", "type": "t"}}')
    assert error_failures(spec, error) == [
        "error 400 body $.error: 'param' is a required property",
        "error 400 body $.error: 'code' is a required property",
    ]
