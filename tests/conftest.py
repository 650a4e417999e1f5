"""Shared fixtures. The llmts pytest plugin (installed entry point) provides ``llmts_server`` and
``llmts_session``: this suite dogfoods it, so under ``pytest -n auto`` all workers share one server."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from llmts import LlmTestServer, SessionClient
from tests.helpers import RawResponse, raw_request


@pytest.fixture
def raw() -> Callable[..., RawResponse]:
    return raw_request


@pytest.fixture
def openai_client(llmts_session: SessionClient) -> Any:
    """The official OpenAI client bound to this test's session, validating every response strictly."""
    return llmts_session.openai_client(_strict_response_validation=True, max_retries=0)


@pytest.fixture
def own_server_factory() -> Iterator[Callable[..., LlmTestServer]]:
    """Start dedicated servers (for start-up options) and always stop them."""
    started: list[LlmTestServer] = []

    def start(**kwargs: Any) -> LlmTestServer:
        server = LlmTestServer.start(**kwargs)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The deep fuzz run (``fuzz`` marker) runs only when ``-m`` names it: ``pytest -m fuzz``."""
    if "fuzz" in (config.getoption("markexpr", "") or ""):
        return
    deep = [item for item in items if item.get_closest_marker("fuzz") is not None]
    if deep:
        config.hook.pytest_deselected(items=deep)
        items[:] = [item for item in items if item.get_closest_marker("fuzz") is None]
