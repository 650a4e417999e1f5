"""Client-chosen session ids: ``PUT /admin-api/sessions/{id}`` over real HTTP, then SDK traffic."""

from __future__ import annotations

from collections.abc import Callable

import openai
import pytest

from llmts import ConfigBuilder, LlmTestServer, ServerError
from llmts.client import new_session_id
from llmts.runtime import SessionRegistry
from tests.helpers import USER_HI, raw_request

pytestmark = pytest.mark.sdk

CONFIG = ConfigBuilder().scenario().text("chosen").build().model_dump(mode="json")


def _ids(server: LlmTestServer) -> set[str]:
    return {s["id"] for s in raw_request(server.url, "GET", "/admin-api/sessions").json()}


def _ask(base: str) -> str:
    # A plain SDK client: the session comes from the base URL alone.
    client = openai.OpenAI(base_url=f"{base}/openai/v1", api_key="k", max_retries=0)
    reply = client.chat.completions.create(model="gpt-4.1-mini", messages=USER_HI)  # type: ignore[arg-type]
    return str(reply.choices[0].message.content)


def test_put_creates_then_answers_200_and_the_session_serves_sdk_traffic(llmts_server: LlmTestServer) -> None:
    session_id = new_session_id()
    created = raw_request(llmts_server.url, "PUT", f"/admin-api/sessions/{session_id}")
    assert created.status == 201
    info = created.json()
    assert (info["id"], info["provider_base"], info["configured"]) == (
        session_id,
        f"{llmts_server.url}/sessions/{session_id}",
        False,
    )
    # The same description as GET (and POST) give.
    assert info == raw_request(llmts_server.url, "GET", f"/admin-api/sessions/{session_id}").json()
    try:
        raw_request(llmts_server.url, "POST", f"/sessions/{session_id}/admin-api/configure", CONFIG)
        assert _ask(f"{llmts_server.url}/sessions/{session_id}") == "chosen"

        again = raw_request(llmts_server.url, "PUT", f"/admin-api/sessions/{session_id}")
        assert again.status == 200
        assert again.json()["configured"] is True
        # Idempotent: the repeat changed nothing (configuration and journal are intact).
        journal = raw_request(
            llmts_server.url, "GET", "/admin-api/requests", headers={"X-Llm-Test-Server-Session": session_id}
        ).json()
        assert len(journal) == 1
        assert list(_ids(llmts_server)).count(session_id) == 1
    finally:
        raw_request(llmts_server.url, "DELETE", f"/admin-api/sessions/{session_id}")


def test_put_with_a_body_configures_in_the_same_request(llmts_server: LlmTestServer) -> None:
    session_id = new_session_id()
    created = raw_request(llmts_server.url, "PUT", f"/admin-api/sessions/{session_id}", CONFIG)
    try:
        assert created.status == 201 and created.json()["configured"] is True
        assert _ask(created.json()["provider_base"]) == "chosen"
        # The same configuration again keeps state; a different one replaces it (like configure).
        same = raw_request(llmts_server.url, "PUT", f"/admin-api/sessions/{session_id}", CONFIG)
        assert same.status == 200
        headers = {"X-Llm-Test-Server-Session": session_id}
        assert len(raw_request(llmts_server.url, "GET", "/admin-api/requests", headers=headers).json()) == 1
        other = ConfigBuilder().scenario().text("other").build().model_dump(mode="json")
        assert raw_request(llmts_server.url, "PUT", f"/admin-api/sessions/{session_id}", other).status == 200
        assert raw_request(llmts_server.url, "GET", "/admin-api/requests", headers=headers).json() == []
        assert _ask(created.json()["provider_base"]) == "other"
    finally:
        raw_request(llmts_server.url, "DELETE", f"/admin-api/sessions/{session_id}")


@pytest.mark.parametrize("empty", [b"{}", b" { \n } ", b""], ids=["object", "spaced", "nothing"])
def test_a_retried_put_with_an_empty_object_keeps_the_configuration(
    llmts_server: LlmTestServer, empty: bytes
) -> None:
    """``{}`` means "no configuration", as for POST: a generic HTTP client retrying an idempotent PUT (with
    an empty JSON body) must not wipe a configured session or its journal."""
    session_id = new_session_id()
    path = f"/admin-api/sessions/{session_id}"
    created = raw_request(llmts_server.url, "PUT", path, CONFIG)
    try:
        assert _ask(created.json()["provider_base"]) == "chosen"
        retried = raw_request(llmts_server.url, "PUT", path, empty)
        assert retried.status == 200 and retried.json()["configured"] is True
        headers = {"X-Llm-Test-Server-Session": session_id}
        configuration = raw_request(llmts_server.url, "GET", "/admin-api/configuration", headers=headers)
        assert configuration.json()["scenarios"] == CONFIG["scenarios"]
        assert len(raw_request(llmts_server.url, "GET", "/admin-api/requests", headers=headers).json()) == 1
        fresh = raw_request(llmts_server.url, "PUT", f"/admin-api/sessions/{new_session_id()}", empty)
        assert fresh.status == 201 and fresh.json()["configured"] is False
        raw_request(llmts_server.url, "DELETE", f"/admin-api/sessions/{fresh.json()['id']}")
    finally:
        raw_request(llmts_server.url, "DELETE", path)


@pytest.mark.parametrize(
    "bad_id",
    [
        "ses_" + "A" * 32,  # uppercase
        "ses_" + "0" * 31,  # short
        "ses_" + "0" * 33,  # long
        "default",
        "sess_" + "0" * 32,
        "ses_" + "g" * 32,
    ],
)
def test_put_rejects_an_id_of_the_wrong_form_and_creates_nothing(
    llmts_server: LlmTestServer, bad_id: str
) -> None:
    before = _ids(llmts_server)
    response = raw_request(llmts_server.url, "PUT", f"/admin-api/sessions/{bad_id}")
    assert response.status == 400
    assert response.json()["error"]["code"] == "invalid_session_id"
    # Other xdist workers' tests create sessions on the same server meanwhile: only this id matters.
    assert bad_id not in _ids(llmts_server) - before


def test_put_with_an_invalid_configuration_creates_nothing(llmts_server: LlmTestServer) -> None:
    session_id = new_session_id()
    bad = {"scenarios": [{"responses": [{"text": "a", "chunks": ["b"]}]}]}
    response = raw_request(llmts_server.url, "PUT", f"/admin-api/sessions/{session_id}", bad)
    assert response.status == 400
    assert response.json()["error"]["code"] == "invalid_configuration"
    assert session_id not in _ids(llmts_server)


def test_put_needs_the_control_key(shared_server_factory: Callable[..., LlmTestServer]) -> None:
    server = shared_server_factory(control_key="ctl-secret")
    session_id = new_session_id()
    assert raw_request(server.url, "PUT", f"/admin-api/sessions/{session_id}").status == 401
    assert session_id not in {s["id"] for s in server.sessions()}
    session = server.create_session(session_id)
    assert session.id == session_id
    assert session.provider_base == f"{server.url}/sessions/{session_id}"


def test_python_api_creates_sessions_under_chosen_or_generated_ids(llmts_server: LlmTestServer) -> None:
    chosen = new_session_id()
    session = llmts_server.create_session(chosen, config=ConfigBuilder().scenario().text("api"))
    generated = llmts_server.create_session()
    try:
        assert session.id == chosen
        assert generated.id != chosen and generated.id.startswith("ses_") and len(generated.id) == 36
        reply = session.openai_client(max_retries=0).chat.completions.create(
            model="gpt-4.1-mini", messages=USER_HI
        )
        assert reply.choices[0].message.content == "api"
        # Asking again for the same id is the same session, not an error.
        assert llmts_server.create_session(chosen).id == chosen
    finally:
        session.delete()
        generated.delete()
    with pytest.raises(ServerError) as caught:
        llmts_server.create_session("not-an-id")
    assert caught.value.status == 400 and caught.value.code == "invalid_session_id"


def test_registry_ensure_counts_against_the_session_limit() -> None:
    registry = SessionRegistry(max_sessions=1)
    first, created = registry.ensure("ses_" + "1" * 32)
    assert created and registry.ensure(first.id) == (first, False)
    with pytest.raises(Exception) as caught:
        registry.ensure("ses_" + "2" * 32)
    assert getattr(caught.value, "code", "") == "llm_test_server_session_capacity_exceeded"
    # An existing id is still answered at the limit (the PUT is idempotent).
    assert registry.ensure(first.id) == (first, False)
