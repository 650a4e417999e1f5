"""The process memory budget over real HTTP: ``llmts serve --max-memory`` evicts journal entries
oldest-first across sessions, refuses stored responses that cannot fit with 507 in the provider's
envelope, and reports its accounting on ``GET /admin-api/process`` (docs/journal.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import openai
import orjson
import pytest

from llmts import LlmTestServer, SessionClient
from llmts.client.control import SESSION_HEADER, ServerError
from llmts.server.app import create_app
from tests.helpers import USER_HI, raw_request

pytestmark = pytest.mark.sdk

MODEL = "gpt-4.1-mini"
_BUDGET = 1 << 20


def _scenario(text: str) -> dict[str, Any]:
    return {"scenarios": [{"terminal_policy": "repeat_last_response", "responses": [{"text": text}]}]}


def _journal(session: SessionClient) -> tuple[list[int], dict[str, str]]:
    _, headers, entries = session.server.request(
        "GET", "/admin-api/requests?order=asc", session_id=session.id
    )
    return [entry["sequence"] for entry in entries], {k.lower(): v for k, v in headers.items()}


def test_journals_are_evicted_oldest_first_across_sessions(
    own_server_factory: Callable[..., LlmTestServer],
) -> None:
    server = own_server_factory(access_log=False, extra_args=["--max-memory", "1M"])
    sessions = [server.create_session() for _ in range(8)]
    for index, session in enumerate(sessions):
        session.configure(_scenario(f"answer {index} " + "z" * 2000))
    for index, session in enumerate(sessions):
        client = session.openai_client(max_retries=0, _strict_response_validation=True)
        for _ in range(60):  # ~3.3 KB accounted each: 480 entries are well over 1 MiB
            answer = client.chat.completions.create(model=MODEL, messages=USER_HI)
            assert (
                answer.choices[0].message.content == f"answer {index} " + "z" * 2000
            )  # nothing else changes

    memory = server.process_stats()["memory"]
    assert memory["max_bytes"] == _BUDGET
    assert memory["journal_bytes"] <= memory["used_bytes"] <= _BUDGET
    assert memory["evicted_entries"] > 0 and memory["refused"] == 0
    journals = [_journal(session) for session in sessions]
    assert memory["journal_entries"] == sum(len(sequences) for sequences, _ in journals)
    assert memory["journal_bytes"] == sum(int(h["x-retained-byte-count"]) for _, h in journals)
    assert memory["evicted_entries"] == sum(int(h["x-evicted-count"]) for _, h in journals)

    # Oldest first across the process: the first session lost entries (its newest kept, if any), the
    # last one kept everything, and each journal's evidence counts what went.
    first, first_headers = journals[0]
    assert first_headers["x-total-observed"] == "60" and int(first_headers["x-evicted-count"]) > 0
    assert first == list(range(61 - len(first), 61))
    last, last_headers = journals[-1]
    assert last == list(range(1, 61)) and last_headers["x-evicted-count"] == "0"
    kept = [len(sequences) for sequences, _ in journals]
    assert kept == sorted(kept)  # older sessions lost at least as much as newer ones
    result = sessions[0].verify({"requests": [{"name": "any", "query": {}, "minimum_count": 1}]})
    assert result.evidence_complete is False
    # The report names the cause: other sessions' traffic, through the process budget, not its own limits.
    (evicted,) = [failure.message for failure in result.failures if failure.kind == "evidence_evicted"]
    assert "memory budget (--max-memory)" in evicted and "max_entries" not in evicted, evicted

    # Deleting sessions gives their accounted bytes back; a reset empties a journal's share.
    for session in sessions[:4]:
        session.delete()
    sessions[4].reset()
    after = server.process_stats()["memory"]
    remaining = [_journal(session) for session in sessions[5:]]
    assert after["journal_entries"] == sum(len(sequences) for sequences, _ in remaining)
    assert after["journal_bytes"] == sum(int(h["x-retained-byte-count"]) for _, h in remaining)
    assert server.process_stats()["sessions"] == 5  # default + 4 left


def test_stored_responses_that_cannot_fit_get_507_in_openai_envelope(
    own_server_factory: Callable[..., LlmTestServer],
) -> None:
    server = own_server_factory(access_log=False, extra_args=["--max-memory", "1M"])
    session = server.create_session()
    session.configure(_scenario("s" * 150_000))
    client = session.openai_client(max_retries=2, _strict_response_validation=True)
    stored = []
    with pytest.raises(openai.InternalServerError) as raised:
        for _ in range(20):
            stored.append(client.responses.create(model=MODEL, input="hi").id)
    error = raised.value
    assert error.status_code == 507
    assert error.body["code"] == "llm_test_server_memory_exhausted"  # type: ignore[index]
    assert "--max-memory" in error.body["message"]  # type: ignore[index]
    assert error.response.headers["x-should-retry"] == "false"
    assert 2 <= len(stored) < 20
    memory = server.process_stats()["memory"]
    assert memory["refused"] == 1 and memory["store_bytes"] <= memory["used_bytes"] <= _BUDGET
    assert memory["configuration_bytes"] > 150_000  # the scenario's text, held while it is in force
    # Not retried (one attempt more than stored): the journal counts it, although with the budget full of
    # stored responses its entries are the first thing evicted. What was stored is still there.
    _, headers = _journal(session)
    assert int(headers["x-total-observed"]) == len(stored) + 1
    assert client.responses.retrieve(stored[-1]).id == stored[-1]
    # Other sessions still work (their journals are the evictable part).
    other = server.create_session()
    response = raw_request(
        other.provider_base, "POST", "/openai/v1/chat/completions", {"model": MODEL, "messages": USER_HI}
    )
    assert response.status == 200 and response.json()["choices"][0]["message"]["content"] == "Hi"
    session.delete()
    assert server.process_stats()["memory"]["store_bytes"] == 0


def test_process_reports_the_default_budget(llmts_server: LlmTestServer) -> None:
    stats = llmts_server.process_stats()
    memory = stats["memory"]
    assert 256 << 20 <= memory["max_bytes"] <= 8 << 30
    assert set(memory) == {
        "max_bytes",
        "used_bytes",
        "journal_bytes",
        "journal_entries",
        "store_bytes",
        "conversation_bytes",
        "recording_bytes",
        "configuration_bytes",
        "peer_bytes",
        "realtime_bytes",
        "held_write_bytes",
        "evicted_entries",
        "refused",
    }
    assert stats["sessions"] >= 1 and stats["rss_bytes"] > 0


@pytest.mark.parametrize(("value", "expected"), [("lots", "not a memory size"), ("1000", "at least")])
def test_invalid_max_memory_stops_start_up(
    cli: Callable[..., tuple[int, str, str]], value: str, expected: str
) -> None:
    """``llmts serve``'s ``main`` in process: refused before anything starts (the real process's exit with
    2 is tests/server/process/test_cli.py's)."""
    status, out, err = cli("serve", "--port", "0", "--max-memory", value)
    assert status == 2
    assert "--max-memory" in err and expected in err
    assert "listening" not in out


def test_max_memory_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLMTS_MAX_MEMORY", "2M")
    assert create_app().registry.memory.max_bytes == 2 << 20
    assert create_app(max_memory_bytes=3 << 20).registry.memory.max_bytes == 3 << 20


def test_a_configuration_over_the_budget_is_a_507_and_the_one_in_force_stays(
    own_server_factory: Callable[..., LlmTestServer],
) -> None:
    server = own_server_factory(access_log=False, extra_args=["--max-memory", "1M"])
    session = server.create_session()
    session.configure(_scenario("Hi"))
    before = server.process_stats()["memory"]
    assert before["configuration_bytes"] > 0 and before["used_bytes"] >= before["configuration_bytes"]

    # 600 short answers: 20 KB of JSON, held as 600 models and plans (docs/journal.md).
    many = {"scenarios": [{"id": "s", "responses": [{"text": f"answer {n}"} for n in range(600)]}]}
    with pytest.raises(ServerError) as raised:
        session.configure(many)
    assert (raised.value.status, raised.value.code) == (507, "llm_test_server_memory_exhausted")
    assert "the configuration" in raised.value.message and "--max-memory" in raised.value.message
    answer = raw_request(server.url, "POST", "/admin-api/configure", many, {SESSION_HEADER: session.id})
    assert answer.status == 507 and set(answer.json()["error"]) == {"code", "message", "details"}

    # Nothing changed: the configuration in force answers, and is what the budget still holds.
    assert session.configuration()["scenarios"][0]["responses"] == [{"text": "Hi"}]
    client = session.openai_client(max_retries=0, _strict_response_validation=True)
    reply = client.chat.completions.create(model=MODEL, messages=USER_HI)
    assert reply.choices[0].message.content == "Hi"
    after = server.process_stats()["memory"]
    assert after["configuration_bytes"] == before["configuration_bytes"] and after["refused"] == 2

    # A session created with a configuration that cannot fit is not created (POST, or PUT of a new id).
    sessions = server.process_stats()["sessions"]
    created = raw_request(server.url, "POST", "/admin-api/sessions", {"label": "big", **many})
    new_id = "ses_" + "b" * 32
    put = raw_request(server.url, "PUT", f"/admin-api/sessions/{new_id}", many)
    assert (created.status, put.status) == (507, 507)
    assert server.process_stats()["sessions"] == sessions
    assert raw_request(server.url, "GET", f"/admin-api/sessions/{new_id}").status == 404

    session.delete()
    assert server.process_stats()["memory"]["configuration_bytes"] == 0


def test_a_stored_responses_input_items_are_charged_as_parsed(
    own_server_factory: Callable[..., LlmTestServer],
) -> None:
    """2,000 short input messages are 80 KB of JSON and about 2 MB kept parsed (the items and their
    history): the budget charges the latter (docs/journal.md, "Process memory budget")."""
    server = own_server_factory(access_log=False)
    session = server.create_session()
    session.configure(_scenario("Hi"))
    client = session.openai_client(max_retries=0, _strict_response_validation=True)
    items = [{"role": "user", "content": f"message {n}"} for n in range(2000)]
    assert len(orjson.dumps(items)) < 100_000

    before = server.process_stats()["memory"]["store_bytes"]
    stored = client.responses.create(model=MODEL, input=items)  # type: ignore[arg-type]
    charged = server.process_stats()["memory"]["store_bytes"] - before
    assert charged > 1_800_000, charged
    assert client.responses.input_items.list(stored.id, limit=1).data  # kept, as charged
    session.delete()
    assert server.process_stats()["memory"]["store_bytes"] == before
