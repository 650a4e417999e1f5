"""The openai SDK's realtime client in its other shapes against a real gunicorn+gevent server
(docs/realtime.md, docs/tls.md): ``AsyncOpenAI``, the reconnect option after a scripted close,
``AzureOpenAI`` dialling ``wss://`` by itself, session selection by header, an unknown session's handshake
refusal, and seeded ids that repeat from run to run. Every server event is checked strictly with the SDK's
own models."""

from __future__ import annotations

import asyncio
import functools
import json
from typing import Any

import openai
import pytest
from openai.types.websocket_reconnection import ReconnectingEvent
from websockets.exceptions import InvalidStatus

from llmts.client import LlmTestServer, SessionClient
from tests.realtime.support import check_openai_event, events_until, text_of
from tests.support.configure import script

MODEL = "gpt-realtime"
SESSION_HEADER = "X-Llm-Test-Server-Session"


# One realtime scenario answering the given responses in order; top-level fields as keywords.
_configure = functools.partial(script, scenario={"id": "voice", "operation": "realtime"})


def _ask(connection: Any, text: str) -> None:
    connection.conversation.item.create(
        item={"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
    )
    connection.response.create(response={"output_modalities": ["text"]})


def _root(session: SessionClient) -> str:
    """The server's root URL (the session's base URL without its ``/sessions/{id}`` prefix)."""
    return session.provider_base.rsplit("/sessions/", 1)[0]


def test_the_async_client_answers_a_text_turn(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"text": "Async hello.", "chunks": ["Async", " hello."]})
    client = llmts_session.async_openai_client(max_retries=0)

    async def talk() -> list[dict[str, Any]]:
        async with client.realtime.connect(model=MODEL) as connection:
            assert check_openai_event(await connection.recv())["type"] == "session.created"
            await connection.conversation.item.create(
                item={"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}
            )
            await connection.response.create(response={"output_modalities": ["text"]})
            events = []
            async for event in connection:
                events.append(check_openai_event(event))
                if events[-1]["type"] == "response.done":
                    return events
        raise AssertionError("the connection ended before response.done")

    events = asyncio.run(asyncio.wait_for(talk(), 10))
    assert text_of(events) == "Async hello."
    assert events[-1]["response"]["status"] == "completed"
    [entry] = llmts_session.requests(operation="realtime")
    assert entry["success"] is True and entry["provider"] == "openai"


def test_the_reconnect_option_resumes_on_a_new_connection_after_close_1011(
    llmts_session: SessionClient,
) -> None:
    _configure(
        llmts_session,
        {
            "text": "a b c",
            "chunks": ["a", " b", " c"],
            "stream_delivery": {"mode": "close", "after_content_frames": 1, "code": 1011, "reason": "boom"},
        },
        {"text": "Back again."},
    )
    attempts: list[ReconnectingEvent] = []

    def reconnecting(event: ReconnectingEvent) -> None:
        attempts.append(event)

    client = llmts_session.openai_client(max_retries=0)
    with client.realtime.connect(model=MODEL, on_reconnecting=reconnecting, initial_delay=0.05) as connection:
        first = check_openai_event(connection.recv())
        assert first["type"] == "session.created"
        _ask(connection, "count")
        before: list[dict[str, Any]] = []
        for event in connection:  # the SDK reconnects inside the iterator
            data = check_openai_event(event)
            if data["type"] == "session.created":
                second = data
                break
            before.append(data)
        _ask(connection, "again")  # a new connection: a new, empty conversation
        after = list(events_until(connection))
    assert text_of(before) == "a" and before[-1]["type"] == "response.output_text.delta"
    assert [(a.attempt, a.close_code) for a in attempts] == [(1, 1011)]
    assert second["session"]["id"] != first["session"]["id"]
    assert text_of(after) == "Back again."
    cut, answered = llmts_session.requests(operation="realtime", order="asc")
    assert cut["close_code"] == 1011 and cut["success"] is False
    assert answered["success"] is True
    assert cut["realtime_connection"] != answered["realtime_connection"]
    # Each connection's turns are filtered by its id.
    [only] = llmts_session.requests(operation="realtime", realtime_connection=answered["realtime_connection"])
    assert only["request_id"] == answered["request_id"]


@pytest.mark.parametrize("trust", ["ssl_context", "websocket_connection_options"])
def test_azure_openai_without_websocket_base_url_dials_wss(tls_session: SessionClient, trust: str) -> None:
    tls_session.configure(
        {
            "azure_deployments": {"voice-prod": "gpt-realtime"},
            "provider_credentials": {"azure-openai": "az-key"},
            "scenarios": [{"operation": "realtime", "responses": [{"text": "Over TLS."}]}],
        }
    )
    context = tls_session.ssl_context()
    assert context is not None
    client = openai.AzureOpenAI(
        api_key="az-key",
        api_version="2025-04-01-preview",
        azure_endpoint=tls_session.provider_base + "/azure-openai",
        http_client=openai.DefaultHttpxClient(verify=context),
        max_retries=0,
    )
    options: Any = {"ssl": context} if trust == "ssl_context" else tls_session.websocket_connection_options()
    with client.realtime.connect(model="voice-prod", websocket_connection_options=options) as connection:
        assert check_openai_event(connection.recv())["type"] == "session.created"
        _ask(connection, "hello")
        events = list(events_until(connection))
    assert text_of(events) == "Over TLS."
    [entry] = tls_session.requests(operation="realtime")
    assert entry["provider"] == "azure-openai" and entry["model"] == "gpt-realtime"
    assert entry["path"] == "/azure-openai/openai/realtime"


def test_azure_openai_over_wss_refuses_an_untrusted_certificate(tls_session: SessionClient) -> None:
    client = openai.AzureOpenAI(
        api_key="az-key",
        api_version="2025-04-01-preview",
        azure_endpoint=tls_session.provider_base + "/azure-openai",
        max_retries=0,
    )
    with pytest.raises(Exception, match="CERTIFICATE_VERIFY_FAILED"):  # the server really speaks TLS
        client.realtime.connect(model="voice-prod").enter()


def test_the_session_header_selects_the_session(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"text": "Picked by header."})
    client = openai.OpenAI(
        api_key="sk-any",
        base_url=_root(llmts_session) + "/openai/v1",
        default_headers={SESSION_HEADER: llmts_session.id},
        max_retries=0,
    )
    with client.realtime.connect(model=MODEL) as connection:
        check_openai_event(connection.recv())
        _ask(connection, "who answers?")
        events = list(events_until(connection))
    assert text_of(events) == "Picked by header."
    [entry] = llmts_session.requests(operation="realtime")
    assert entry["path"] == "/openai/v1/realtime"


@pytest.mark.parametrize("by", ["path", "header"])
def test_an_unknown_session_refuses_the_handshake_with_404_in_openais_envelope(
    llmts_session: SessionClient, by: str
) -> None:
    root, unknown = _root(llmts_session), "ses_000000000000000000000000deadbeef"
    if by == "path":
        client = openai.OpenAI(
            api_key="sk-any", base_url=f"{root}/sessions/{unknown}/openai/v1", max_retries=0
        )
    else:
        client = openai.OpenAI(
            api_key="sk-any",
            base_url=root + "/openai/v1",
            default_headers={SESSION_HEADER: unknown},
            max_retries=0,
        )
    with pytest.raises(InvalidStatus) as refused:
        client.realtime.connect(model=MODEL).enter()
    response = refused.value.response
    assert response.status_code == 404
    assert response.headers["Content-Type"].startswith("application/json")
    error = json.loads(response.body)["error"]
    assert set(error) >= {"message", "type", "code"} and unknown in error["message"]


def test_an_unknown_session_refuses_the_gemini_live_handshake_with_404(tls_server: LlmTestServer) -> None:
    from google import genai
    from google.genai import types

    unknown = "ses_000000000000000000000000deadbeef"
    context = tls_server.ssl_context()
    client = genai.Client(
        api_key="g-key",
        http_options=types.HttpOptions(
            base_url=f"{tls_server.url}/sessions/{unknown}/gemini",
            async_client_args={"verify": context, "ssl": context},
        ),
    )

    async def talk() -> None:
        async with client.aio.live.connect(model="gemini-live-2.5-flash-preview", config={}):
            pass

    with pytest.raises(InvalidStatus) as refused:
        asyncio.run(asyncio.wait_for(talk(), 10))
    response = refused.value.response
    assert response.status_code == 404
    error = json.loads(response.body)["error"]
    assert error["code"] == 404 and error["status"] == "NOT_FOUND"


def _ids(events: list[dict[str, Any]]) -> list[str]:
    """Every id an event carries, in order (event ids, the session's, items', responses', calls')."""
    found: list[str] = []

    def walk(value: Any, key: str = "") -> None:
        if isinstance(value, dict):
            for name, inner in value.items():
                walk(inner, name)
        elif isinstance(value, list):
            for inner in value:
                walk(inner, key)
        elif isinstance(value, str) and (key == "id" or key.endswith("_id")):
            found.append(value)

    for event in events:
        walk(event)
    return found


def _seeded_run(session: SessionClient) -> tuple[list[dict[str, Any]], str]:
    """One fixed connection script: every server event, and the journal's request id of its turn."""
    with session.openai_client(max_retries=0).realtime.connect(model=MODEL) as connection:
        events = [check_openai_event(connection.recv())]
        _ask(connection, "hi")
        events += events_until(connection)
    newest = session.requests(operation="realtime")[0]
    return events, newest["request_id"]


def test_a_seeded_session_repeats_every_id_from_run_to_run(
    llmts_session: SessionClient, llmts_server: LlmTestServer
) -> None:
    config = {
        "determinism": {"seed": "realtime-ids"},
        "scenarios": [
            {"operation": "realtime", "responses": [{"text": "Same ids.", "chunks": ["Same", " ids."]}]}
        ],
    }
    llmts_session.configure(config)
    first, first_request = _seeded_run(llmts_session)
    llmts_session.reset()  # starts the session's connection count over, like a new test
    second, second_request = _seeded_run(llmts_session)
    other = llmts_server.create_session()
    try:
        other.configure(config)
        third, third_request = _seeded_run(other)
    finally:
        other.delete()
    ids = _ids(first)
    assert len(ids) > 20 and len(set(ids)) > 10
    assert [e["type"] for e in first] == [e["type"] for e in second]
    assert _ids(second) == ids and _ids(third) == ids
    assert first_request == second_request == third_request
    # Without a reset, the session's next connection is another ordinal: fresh ids.
    fourth, _ = _seeded_run(llmts_session)
    assert not set(_ids(fourth)) & set(ids)
