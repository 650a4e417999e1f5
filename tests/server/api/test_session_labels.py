"""Session labels and test outcomes (docs/server.md, "Labels and test outcomes"), in process."""

from __future__ import annotations

from typing import Any

import pytest

from llmts import ServerError
from tests.support.in_process import InProcessServer


@pytest.fixture
def server(llmts_app_server: InProcessServer) -> InProcessServer:
    return llmts_app_server


def _ids(listing: list[dict[str, Any]]) -> set[str]:
    return {info["id"] for info in listing}


def test_label_is_set_at_creation_listed_and_filtered(server: InProcessServer) -> None:
    node = "tests/test_agent.py::test_weather[paris]"
    labelled = server.create_session(label=node)
    other = server.create_session(label="tests/test_other.py::test_x")
    try:
        info = labelled.info()
        assert (info["label"], info["test_outcome"]) == (node, None)
        assert _ids(server.sessions(label=node)) == {labelled.id}
        assert _ids(server.sessions(label_contains="TEST_AGENT")) == {labelled.id}
        assert {labelled.id, other.id} <= _ids(server.sessions(label_contains="tests/"))
        assert server.sessions(label="tests/test_agent.py") == []  # exact, not a prefix
    finally:
        labelled.delete()
        other.delete()


def test_outcome_is_recorded_without_touching_label_or_configuration(server: InProcessServer) -> None:
    session = server.create_session(config={"scenarios": [{"responses": [{"text": "hi"}]}]}, label="t::a")
    try:
        info = session.annotate(test_outcome="failed")
        assert (info["label"], info["test_outcome"], info["configured"]) == ("t::a", "failed", True)
        assert session.id in _ids(server.sessions(test_outcome="failed"))
        assert session.id not in _ids(server.sessions(test_outcome="passed"))
        session.reset()  # reset and configure keep what the client said about the session
        session.configure({"scenarios": [{"responses": [{"text": "again"}]}]})
        assert session.info()["test_outcome"] == "failed"
        assert session.annotate(label="t::b")["label"] == "t::b"
    finally:
        session.delete()


def test_post_takes_label_and_configuration_in_one_body(server: InProcessServer) -> None:
    status, _, info = server.request(
        "POST", "/admin-api/sessions", {"label": "x", "scenarios": [{"responses": [{"text": "hi"}]}]}
    )
    try:
        assert (status, info["label"], info["configured"]) == (201, "x", True)
    finally:
        server.session(info["id"]).delete()


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"label": "x" * 201}, "label"),
        ({"label": 7}, "label"),
        ({"test_outcome": "flaky"}, "test_outcome"),
        ({"label": "ok", "scenarios": "nope"}, "scenarios"),
    ],
)
def test_bad_bodies_create_nothing(server: InProcessServer, body: dict[str, Any], path: str) -> None:
    before = _ids(server.sessions())
    with pytest.raises(ServerError) as caught:
        server.request("POST", "/admin-api/sessions", body)
    assert caught.value.status == 400
    assert caught.value.code == "invalid_configuration"
    assert path in {detail["path"] for detail in caught.value.details}
    assert _ids(server.sessions()) == before


@pytest.mark.parametrize(
    "query", ["colour=red", "label=a&label=b", "test_outcome=flaky", "label_contains=", "label=" + "x" * 201]
)
def test_bad_list_filters_are_400s(server: InProcessServer, query: str) -> None:
    with pytest.raises(ServerError) as caught:
        server.request("GET", f"/admin-api/sessions?{query}")
    assert (caught.value.status, caught.value.code) == (400, "invalid_query")
    assert caught.value.details


def test_journal_entries_carry_prompt_and_answer_snippets(server: InProcessServer) -> None:
    long_answer = "word " * 100
    session = server.create_session(
        config={"scenarios": [{"responses": [{"text": "Paris is sunny."}, {"text": long_answer}]}]}
    )
    try:
        client = session.openai_client()
        messages = [{"role": "user", "content": "Old question"}, {"role": "assistant", "content": "Old"}]
        client.chat.completions.create(
            model="gpt-4.1-mini", messages=[*messages, {"role": "user", "content": "Weather in Paris?"}]
        )
        client.chat.completions.create(
            model="gpt-4.1-mini", messages=[{"role": "user", "content": "x" * 500}]
        )
        first, second = session.requests(order="asc")
        assert (first["prompt_text"], first["answer_text"]) == ("Weather in Paris?", "Paris is sunny.")
        assert len(second["prompt_text"]) == 240 and second["prompt_text"].endswith("…")
        assert second["answer_text"] == long_answer[:239] + "…"
    finally:
        session.delete()
