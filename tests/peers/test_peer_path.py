"""``/mcp/...`` and ``/a2a/...`` before the protocol's handler (llmts/server/peers/path.py): a bug in a
handler answers a JSON-RPC error with 500, and the request's journal entry ends instead of staying in
progress. In process: the handler is replaced by one that fails (no client input reaches a bug)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from tests.support.in_process import InProcessServer


def test_a_bug_in_a_peer_handler_fails_its_journal_entry(caplog: pytest.LogCaptureFixture) -> None:
    server = InProcessServer()
    session = server.create_session(config={"mcp_servers": [{"name": "s"}]})

    def broken(request: Any) -> Any:
        request.journal("tools/call", "mcp_bug")
        raise RuntimeError("a bug")

    server.app._peers._protocols = {"mcp": broken, "a2a": broken}
    with caplog.at_level(logging.ERROR, logger="llmts"):
        answer = server.raw(
            session.provider_base, "POST", "/mcp/s", {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        )
    assert answer.status == 500 and answer.json()["error"]["code"] == -32603
    assert "unhandled error" in caplog.text
    (entry,) = session.requests(provider="mcp")
    assert entry["status"] == 500 and entry["success"] is False and entry["completed_at"] is not None
    assert entry["error_code"] == "llm_test_server_internal_error"
