"""The Python API against real servers: start/attach/stop, sessions, credentials, errors."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from llmts import ConfigBuilder, LlmTestServer, ServerError
from tests.support.servers import BackgroundStops


def test_start_stop_removes_the_working_directory() -> None:
    server = LlmTestServer.start(access_log=False)
    assert server.log_path is not None and server.log_path.parent.exists()
    workdir = server.log_path.parent
    assert server.health()

    server.stop()

    assert not workdir.exists()
    assert server.process is None
    server.stop()  # idempotent


@pytest.fixture(scope="module")
def fixtures_server(background_stops: BackgroundStops) -> Iterator[LlmTestServer]:
    """A server started with fixtures; the attach test only needs some server this process started."""
    config = ConfigBuilder().credentials(openai="sk-from-fixtures").scenario().text("from start-up").build()
    server = LlmTestServer.start(fixtures=config)
    try:
        yield server
    finally:
        background_stops.stop(server)


def test_attach_leaves_the_server_running(fixtures_server: LlmTestServer) -> None:
    started = fixtures_server
    attached = LlmTestServer.attach(started.url)

    attached.stop()

    assert attached.pid is None
    assert started.health()


def test_attach_to_nothing_times_out() -> None:
    with pytest.raises(TimeoutError):
        LlmTestServer.attach("http://127.0.0.1:9", timeout=0.3)


def test_start_ignores_llmts_variables_of_the_calling_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLMTS_CONTROL_KEY", "inherited-key")
    monkeypatch.setenv("LLMTS_PORT", "1")
    with LlmTestServer.start() as server:
        assert server.sessions()  # no control key demanded: the variable did not leak into the server


def test_fixtures_at_start_and_credentials_read_back(fixtures_server: LlmTestServer) -> None:
    # The client learns the credential from the server.
    client = fixtures_server.default_session.openai_client(max_retries=0)

    assert client.api_key == "sk-from-fixtures"
    reply = client.chat.completions.create(model="gpt-4.1-mini", messages=[{"role": "user", "content": "x"}])
    assert reply.choices[0].message.content == "from start-up"


def test_session_handles_and_errors(llmts_server: LlmTestServer) -> None:
    session = llmts_server.create_session()
    same = llmts_server.session(session.id)
    same.configure({"scenarios": [{"responses": [{"text": "via handle"}]}]})
    assert session.configuration()["scenarios"][0]["responses"][0]["text"] == "via handle"
    session.delete()

    with pytest.raises(ServerError) as caught:
        same.configuration()
    assert (caught.value.status, caught.value.code) == (404, "llm_test_server_session_not_found")
    assert "404" in str(caught.value)


def test_configure_rejects_unknown_input_types(llmts_session: Any) -> None:
    with pytest.raises(TypeError):
        llmts_session.configure(["not", "a", "config"])


def test_configure_takes_any_part_of_a_builder_chain(llmts_session: Any) -> None:
    """An MCP server's or tool's builder configures like a scenario's or an A2A agent's: the whole chain."""
    parts = [
        ConfigBuilder().scenario("s").text("hi").mcp_server("m"),
        ConfigBuilder().scenario("s").text("hi").mcp_server("m").tool("t").text("r"),
        ConfigBuilder().scenario("s").text("hi").a2a_agent("a").text("x"),
    ]
    for part in parts:
        llmts_session.configure(part)
        assert llmts_session.configuration()["scenarios"][0]["id"] == "s"
    assert llmts_session.configuration()["a2a_agents"][0]["name"] == "a"


def test_default_session_uses_the_plain_base_url(llmts_server: LlmTestServer) -> None:
    assert llmts_server.default_session.provider_base == llmts_server.url
    assert llmts_server.session("ses_x").provider_base == f"{llmts_server.url}/sessions/ses_x"
    # The control API says the same for every session, default included (docs/python-api.md).
    listed = {info["id"]: info["provider_base"] for info in llmts_server.sessions()}
    assert listed["default"] == llmts_server.url
    session = llmts_server.create_session()
    try:
        assert session.provider_base == f"{llmts_server.url}/sessions/{session.id}"
        assert {info["id"]: info["provider_base"] for info in llmts_server.sessions()}[session.id] == (
            session.provider_base
        )
    finally:
        session.delete()
