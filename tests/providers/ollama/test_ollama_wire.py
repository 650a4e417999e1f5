"""Ollama's wire as raw HTTP shows it (what the ``ollama`` client hides): NDJSON line framing, the
``done`` line, the default to streaming, the error envelopes of ``/ollama/api`` and ``/ollama/v1``, headers,
and a broken line as ``malformed_frame`` sends it."""

from __future__ import annotations

import json
from functools import partial

import pytest

from llmts import SessionClient
from llmts.providers.ollama.render import MALFORMED_LINE
from tests.support.configure import script
from tests.support.in_process import send_raw

MODEL = "llama3.2:3b"
HI = [{"role": "user", "content": "Hi"}]
FIXED = {"seed": "wire", "fixed_utc": "2026-01-01T00:00:00Z"}


_configure = partial(script, models=[MODEL], determinism=FIXED)


def _lines(body: bytes) -> list[bytes]:
    assert body.endswith(b"\n")
    return body[:-1].split(b"\n")


def test_chat_streams_by_default_one_json_object_per_line(app_session: SessionClient) -> None:
    _configure(app_session, {"text": "Hello there.", "chunks": ["Hello", " there."]})
    reply = send_raw(app_session, "POST", "/ollama/api/chat", {"model": MODEL, "messages": HI})

    assert reply.status == 200 and reply.headers["content-type"] == "application/x-ndjson"
    lines = _lines(reply.body)
    assert b"" not in lines and b"\r" not in reply.body  # no blank lines, LF only
    objects = [json.loads(line) for line in lines]
    assert [o["message"]["content"] for o in objects] == ["Hello", " there.", ""]
    assert [o["done"] for o in objects] == [False, False, True]
    done = objects[-1]
    assert done["done_reason"] == "stop" and done["created_at"] == "2026-01-01T00:00:00Z"
    assert set(done) >= {
        "total_duration",
        "load_duration",
        "prompt_eval_count",
        "prompt_eval_duration",
        "eval_count",
        "eval_duration",
    }
    assert "eval_count" not in objects[0]


def test_stream_false_answers_one_json_object(app_session: SessionClient) -> None:
    _configure(app_session, {"text": "Hi!"})
    reply = send_raw(
        app_session,
        "POST",
        "/ollama/api/generate",
        {"model": MODEL, "prompt": "Hi", "stream": False},
    )

    assert reply.status == 200 and reply.headers["content-type"].startswith("application/json")
    body = reply.json()
    assert body["response"] == "Hi!" and body["done"] is True and body["done_reason"] == "stop"
    assert reply.headers["x-request-id"]


def test_tool_calls_carry_arguments_as_an_object(app_session: SessionClient) -> None:
    _configure(
        app_session, {"tool_calls": [{"id": "c1", "name": "get_weather", "arguments": {"city": "Rome"}}]}
    )
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    reply = send_raw(
        app_session,
        "POST",
        "/ollama/api/chat",
        {"model": MODEL, "messages": HI, "tools": tools, "stream": False},
    )

    assert reply.json()["message"]["tool_calls"] == [
        {"function": {"name": "get_weather", "arguments": {"city": "Rome"}}}
    ]


def test_malformed_frame_is_one_broken_line_between_whole_lines(llmts_session: SessionClient) -> None:
    _configure(
        llmts_session,
        {
            "text": "One two.",
            "chunks": ["One ", "two."],
            "stream_delivery": {"mode": "malformed_frame", "after_content_frames": 1},
        },
    )
    reply = send_raw(llmts_session, "POST", "/ollama/api/chat", {"model": MODEL, "messages": HI})

    lines = _lines(reply.body)
    assert lines[1] + b"\n" == MALFORMED_LINE
    with pytest.raises(json.JSONDecodeError):
        json.loads(lines[1])
    rest = [json.loads(line) for line in lines[:1] + lines[2:]]
    assert [o["done"] for o in rest] == [False, False, True]


def test_truncate_bytes_cuts_the_next_line(llmts_session: SessionClient) -> None:
    _configure(
        llmts_session,
        {
            "text": "One two.",
            "chunks": ["One ", "two."],
            "stream_delivery": {"mode": "truncate_bytes", "after_content_frames": 1, "cut_bytes": 15},
        },
    )
    reply = send_raw(llmts_session, "POST", "/ollama/api/chat", {"model": MODEL, "messages": HI})

    first, cut = reply.body.split(b"\n")
    assert json.loads(first)["message"]["content"] == "One " and len(cut) == 15


def test_native_errors_are_a_bare_error_string(app_session: SessionClient) -> None:
    _configure(
        app_session,
        {"error": {"status": 429, "code": "rate_limit_exceeded", "message": "Slow down", "retry_after": 2}},
    )

    scripted = send_raw(app_session, "POST", "/ollama/api/chat", {"model": MODEL, "messages": HI})
    missing = send_raw(app_session, "POST", "/ollama/api/chat", {"messages": HI})
    not_json = send_raw(app_session, "POST", "/ollama/api/generate", b"{nope")
    no_route = send_raw(app_session, "GET", "/ollama/api/nothing")
    bad_format = send_raw(
        app_session, "POST", "/ollama/api/chat", {"model": MODEL, "messages": HI, "format": 3}
    )

    assert (scripted.status, scripted.json(), scripted.headers["retry-after"]) == (
        429,
        {"error": "Slow down"},
        "2",
    )
    assert (missing.status, missing.json()) == (400, {"error": "model is required"})
    for reply, status in ((not_json, 400), (no_route, 404), (bad_format, 400)):
        assert reply.status == status and set(reply.json()) == {"error"}
        assert isinstance(reply.json()["error"], str)


def test_openai_compatible_errors_use_the_openai_envelope(app_session: SessionClient) -> None:
    _configure(app_session, {"text": "x"})

    wrong_model = send_raw(
        app_session, "POST", "/ollama/v1/chat/completions", {"model": "nope", "messages": HI}
    )
    no_route = send_raw(app_session, "GET", "/ollama/v1/nothing")

    for reply, status in ((wrong_model, 404), (no_route, 404)):
        assert reply.status == status
        assert set(reply.json()["error"]) == {"message", "type", "param", "code"}


def test_version_tags_ps_and_show(app_session: SessionClient) -> None:
    _configure(app_session, {"text": "x"})

    version = send_raw(app_session, "GET", "/ollama/api/version").json()
    tags = send_raw(app_session, "GET", "/ollama/api/tags").json()
    running = send_raw(app_session, "GET", "/ollama/api/ps").json()
    shown = send_raw(app_session, "POST", "/ollama/api/show", {"model": MODEL})
    old_client = send_raw(app_session, "POST", "/ollama/api/show", {"name": MODEL})
    missing = send_raw(app_session, "POST", "/ollama/api/show", {"model": "nope"})

    assert isinstance(version["version"], str)
    assert [m["name"] for m in tags["models"]] == [MODEL] and tags["models"][0]["digest"]
    assert [m["model"] for m in running["models"]] == [MODEL] and running["models"][0]["expires_at"]
    assert shown.status == 200 and "capabilities" in shown.json() and old_client.status == 200
    assert (missing.status, missing.json()) == (404, {"error": "model 'nope' not found"})


def test_session_header_selects_the_session(app_session: SessionClient) -> None:
    _configure(app_session, {"text": "By header."})
    reply = send_raw(
        app_session.server,
        "POST",
        "/ollama/api/chat",
        {"model": MODEL, "messages": HI, "stream": False},
        headers={"X-Llm-Test-Server-Session": app_session.id},
    )

    assert reply.json()["message"]["content"] == "By header."


def test_an_unconfigured_session_echoes_the_latest_user_text(app_session: SessionClient) -> None:
    chat = send_raw(
        app_session, "POST", "/ollama/api/chat", {"model": "any-model", "messages": HI, "stream": False}
    )
    generate = send_raw(
        app_session,
        "POST",
        "/ollama/api/generate",
        {"model": "any-model", "prompt": "Echo me", "stream": False},
    )

    assert chat.json()["message"]["content"] == "Hi" and generate.json()["response"] == "Echo me"


def test_a_text_answer_to_a_json_format_request_is_a_fixture_mismatch(app_session: SessionClient) -> None:
    _configure(app_session, {"text": "not json"})
    body = {"model": MODEL, "messages": HI, "format": "json", "stream": False}

    mismatch = send_raw(app_session, "POST", "/ollama/api/chat", body)
    plain = send_raw(app_session, "POST", "/ollama/api/chat", {**body, "format": ""})

    assert mismatch.status == 409 and "json" in mismatch.json()["error"].lower()
    assert plain.json()["message"]["content"] == "not json"  # the mismatch consumed nothing


def test_generate_system_is_the_system_prompt_predicates_see(app_session: SessionClient) -> None:
    app_session.configure(
        {
            "models": [MODEL],
            "conversations": [
                {
                    "id": "pirate",
                    "start_at": "hello",
                    "steps": [
                        {
                            "id": "hello",
                            "when": {"system_contains": "pirate"},
                            "response": {"text": "Arr."},
                            "complete": True,
                        }
                    ],
                }
            ],
        }
    )
    reply = send_raw(
        app_session,
        "POST",
        "/ollama/api/generate",
        {"model": MODEL, "prompt": "Hi", "system": "You are a pirate.", "stream": False},
    )

    assert reply.json()["response"] == "Arr."
