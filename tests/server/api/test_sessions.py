"""Session administration and selection over real HTTP."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import openai
import pytest

from llmts import ConfigBuilder, LlmTestServer, ServerError, SessionClient
from tests.helpers import USER_HI, raw_request

pytestmark = pytest.mark.sdk

CHAT_BODY = {"model": "gpt-4.1-mini", "messages": USER_HI}


def test_create_list_delete(llmts_server: LlmTestServer) -> None:
    created = raw_request(llmts_server.url, "POST", "/admin-api/sessions")
    assert created.status == 201
    info = created.json()
    assert re.fullmatch(r"ses_[0-9a-f]{32}", info["id"])
    assert info["provider_base"] == f"{llmts_server.url}/sessions/{info['id']}"

    listed = raw_request(llmts_server.url, "GET", "/admin-api/sessions").json()
    assert isinstance(listed, list)
    assert info["id"] in {s["id"] for s in listed}
    assert "default" in {s["id"] for s in listed}

    deleted = raw_request(llmts_server.url, "DELETE", f"/admin-api/sessions/{info['id']}")
    assert deleted.status == 204 and deleted.body == b""
    assert info["id"] not in {
        s["id"] for s in raw_request(llmts_server.url, "GET", "/admin-api/sessions").json()
    }
    again = raw_request(llmts_server.url, "DELETE", f"/admin-api/sessions/{info['id']}")
    assert again.status == 404
    assert again.json() == {
        "error": {
            "code": "llm_test_server_session_not_found",
            "message": again.json()["error"]["message"],
            "details": [],
        }
    }


def test_default_session_cannot_be_deleted(llmts_server: LlmTestServer) -> None:
    response = raw_request(llmts_server.url, "DELETE", "/admin-api/sessions/default")
    assert response.status == 400
    assert response.json()["error"]["code"] == "default_session_not_deletable"


def test_path_and_header_selection_reach_the_same_session(llmts_server: LlmTestServer) -> None:
    session = llmts_server.create_session()
    try:
        session.configure(ConfigBuilder().scenario().text("first").text("second").build())
        by_path = openai.OpenAI(base_url=f"{session.provider_base}/openai/v1", api_key="k", max_retries=0)
        by_header = openai.OpenAI(
            base_url=f"{llmts_server.url}/openai/v1",
            api_key="k",
            max_retries=0,
            default_headers={"X-Llm-Test-Server-Session": session.id},
        )

        assert by_path.chat.completions.create(**CHAT_BODY).choices[0].message.content == "first"
        assert by_header.chat.completions.create(**CHAT_BODY).choices[0].message.content == "second"
    finally:
        session.delete()


def test_unknown_session_is_404_in_openai_envelope(llmts_server: LlmTestServer) -> None:
    for client in (
        openai.OpenAI(base_url=f"{llmts_server.url}/sessions/ses_nope/openai/v1", api_key="k", max_retries=0),
        openai.OpenAI(
            base_url=f"{llmts_server.url}/openai/v1",
            api_key="k",
            max_retries=0,
            default_headers={"X-Llm-Test-Server-Session": "ses_nope"},
        ),
    ):
        with pytest.raises(openai.NotFoundError) as caught:
            client.chat.completions.create(**CHAT_BODY)
        assert caught.value.code == "llm_test_server_session_not_found"


def test_deleted_session_stops_answering(llmts_server: LlmTestServer) -> None:
    session = llmts_server.create_session()
    client = session.openai_client(max_retries=0)
    session.delete()
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(**CHAT_BODY)


def test_conflicting_path_and_header_is_400(llmts_session: SessionClient) -> None:
    response = raw_request(
        llmts_session.provider_base,
        "POST",
        "/openai/v1/chat/completions",
        CHAT_BODY,
        {"X-Llm-Test-Server-Session": "ses_other"},
    )
    assert response.status == 400
    assert response.json()["error"]["code"] == "llm_test_server_session_conflict"


def test_admin_routes_select_session_by_header(
    llmts_server: LlmTestServer, llmts_session: SessionClient
) -> None:
    configured = raw_request(
        llmts_server.url,
        "POST",
        "/admin-api/configure",
        {"scenarios": [{"responses": [{"text": "by header"}]}]},
        {"X-Llm-Test-Server-Session": llmts_session.id},
    )
    assert configured.status == 200
    assert llmts_session.configuration()["scenarios"][0]["responses"] == [{"text": "by header"}]
    unknown = raw_request(
        llmts_server.url, "GET", "/admin-api/configuration", headers={"X-Llm-Test-Server-Session": "ses_x"}
    )
    assert unknown.status == 404


def test_unknown_control_route_and_method(llmts_server: LlmTestServer) -> None:
    assert raw_request(llmts_server.url, "GET", "/admin-api/nothing").json()["error"]["code"] == "not_found"
    wrong = raw_request(llmts_server.url, "PUT", "/admin-api/sessions")
    assert wrong.status == 405 and wrong.json()["error"]["code"] == "method_not_allowed"


def test_health(llmts_server: LlmTestServer) -> None:
    response = raw_request(llmts_server.url, "GET", "/health")
    assert response.status == 200
    assert response.json() == {"status": "ok"}


def test_control_key_guards_admin_api_and_is_not_a_provider_credential(
    shared_server_factory: Callable[..., LlmTestServer],
) -> None:
    server = shared_server_factory(control_key="ctl-secret")
    assert raw_request(server.url, "GET", "/admin-api/sessions").status == 401
    assert (
        raw_request(server.url, "GET", "/admin-api/sessions", headers={"Authorization": "Bearer nope"}).status
        == 401
    )
    unauthorized = raw_request(server.url, "POST", "/admin-api/sessions")
    assert unauthorized.json()["error"]["code"] == "unauthorized"
    assert raw_request(server.url, "GET", "/health").status == 200

    session = server.create_session()  # the client sends the control key
    assert session.id in {s["id"] for s in server.sessions()}
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(
            base_url=f"{session.provider_base}/openai/v1", api_key="ctl-secret", max_retries=0
        ).models.list()
    assert session.openai_client(max_retries=0).models.list().data[0].id == "gpt-4.1-mini"


def test_session_capacity_is_bounded(own_server_factory: Any) -> None:
    server = own_server_factory(extra_args=["--max-sessions", "2"])
    server.create_session()
    server.create_session()
    with pytest.raises(ServerError) as caught:
        server.create_session()
    assert caught.value.status == 409
    assert caught.value.code == "llm_test_server_session_capacity_exceeded"
