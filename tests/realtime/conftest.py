"""A TLS server for the realtime tests whose clients always dial ``wss://`` (google-genai's Live client,
``AzureOpenAI`` without ``websocket_base_url``): one per test module, stopped in the background."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from llmts.client import LlmTestServer, SessionClient
from tests.support.servers import BackgroundStops


@pytest.fixture(scope="module")
def tls_server(background_stops: BackgroundStops) -> Iterator[LlmTestServer]:
    server = LlmTestServer.start(tls=True, access_log=False)
    try:
        yield server
    finally:
        background_stops.stop(server)


@pytest.fixture
def tls_session(tls_server: LlmTestServer) -> Iterator[SessionClient]:
    session = tls_server.create_session()
    yield session
    session.delete()
