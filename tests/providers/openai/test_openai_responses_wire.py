"""OpenAI Responses and Azure OpenAI on the wire (raw HTTP): exact SSE framing and sequence numbers,
stored-response endpoints, malformed requests, error envelopes and Azure's auth and routes."""

from __future__ import annotations

from typing import Any

import pytest

from llmts import ConfigBuilder, SessionClient
from tests.helpers import RawResponse
from tests.support.in_process import send_raw
from tests.support.sse import data_events, typed_events

pytestmark = pytest.mark.sdk

RESPONSES = "/openai/v1/responses"
AUTH = {"Authorization": "Bearer k"}


def _post(
    session: SessionClient, body: Any, path: str = RESPONSES, headers: dict[str, str] | None = None
) -> RawResponse:
    return send_raw(session, "POST", path, body, headers if headers is not None else AUTH)


def _get(session: SessionClient, path: str, method: str = "GET") -> RawResponse:
    return send_raw(session, method, path, None, AUTH)


def _events(body: bytes) -> list[tuple[str, dict[str, Any]]]:
    """Each event exactly ``event: <type>``, ``data: <json>`` and a blank line, the JSON's type equal to the
    event line; no ``[DONE]`` (that is Chat Completions')."""
    assert b"[DONE]" not in body
    return typed_events(body)


def test_text_stream_frames(app_session: SessionClient) -> None:
    app_session.configure(ConfigBuilder().scenario().text("Hi there", chunks=["Hi", " there"]).build())

    response = _post(app_session, {"model": "gpt-4.1-mini", "input": "x", "stream": True})

    assert response.status == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["x-request-id"].startswith("req_")
    events = _events(response.body)
    assert [(kind, data["sequence_number"]) for kind, data in events] == list(
        zip(
            [
                "response.created",
                "response.in_progress",
                "response.output_item.added",
                "response.content_part.added",
                "response.output_text.delta",
                "response.output_text.delta",
                "response.output_text.done",
                "response.content_part.done",
                "response.output_item.done",
                "response.completed",
            ],
            range(10),
            strict=True,
        )
    )
    data = [d for _, d in events]
    response_id = data[0]["response"]["id"]
    assert data[0]["response"]["status"] == "in_progress" and data[0]["response"]["output"] == []
    assert data[1]["response"]["id"] == response_id
    item = data[2]["item"]
    assert item == {
        "id": item["id"],
        "type": "message",
        "status": "in_progress",
        "role": "assistant",
        "content": [],
    }
    where = {"item_id": item["id"], "output_index": 0, "content_index": 0}
    empty_part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
    assert data[3] == {
        "type": "response.content_part.added",
        "sequence_number": 3,
        **where,
        "part": empty_part,
    }
    assert data[4] == {
        "type": "response.output_text.delta",
        "sequence_number": 4,
        **where,
        "delta": "Hi",
        "logprobs": [],
    }
    assert data[6] == {
        "type": "response.output_text.done",
        "sequence_number": 6,
        **where,
        "text": "Hi there",
        "logprobs": [],
    }
    assert data[7]["part"] == {**empty_part, "text": "Hi there"}
    assert data[8]["item"] == {**item, "status": "completed", "content": [data[7]["part"]]}
    completed = data[9]["response"]
    assert completed["id"] == response_id and completed["status"] == "completed"
    # The stream's final response is exactly what a retrieval returns.
    assert _get(app_session, f"{RESPONSES}/{response_id}").json() == completed


def test_function_call_stream_frames(app_session: SessionClient) -> None:
    app_session.configure(
        {
            "scenarios": [
                {
                    "responses": [
                        {
                            "tool_calls": [
                                {
                                    "id": "call_1",
                                    "name": "f",
                                    "arguments": {"city": "Paris"},
                                    "arguments_chunks": ['{"ci', 'ty":"Pa', 'ris"}'],
                                }
                            ]
                        }
                    ]
                }
            ]
        }
    )

    response = _post(
        app_session,
        {"model": "gpt-4.1-mini", "input": "x", "stream": True, "tools": [{"type": "function", "name": "f"}]},
    )

    events = _events(response.body)
    kinds = [kind for kind, _ in events]
    assert kinds == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]
    data = [d for _, d in events]
    added = data[2]["item"]
    assert added == {
        "id": added["id"],
        "type": "function_call",
        "status": "in_progress",
        "arguments": "",
        "call_id": "call_1",
        "name": "f",
    }
    assert added["id"].startswith("fc_")
    assert [d["delta"] for d in data[3:6]] == ['{"ci', 'ty":"Pa', 'ris"}']
    assert all(d["item_id"] == added["id"] and d["output_index"] == 0 for d in data[3:7])
    assert data[6]["arguments"] == '{"city":"Paris"}' and data[6]["name"] == "f"
    assert data[7]["item"] == {**added, "status": "completed", "arguments": '{"city":"Paris"}'}
    assert data[8]["response"]["output"] == [data[7]["item"]]


def test_json_answer_is_the_stored_answer(app_session: SessionClient) -> None:
    app_session.configure(ConfigBuilder().scenario().text("kept").build())

    created = _post(app_session, {"model": "gpt-4.1-mini", "input": "x", "metadata": {"k": "v"}})

    assert created.status == 200 and created.headers["content-type"] == "application/json"
    body = created.json()
    assert body["metadata"] == {"k": "v"} and body["store"] is True
    assert body["usage"]["input_tokens_details"] == {"cached_tokens": 0, "cache_write_tokens": 0}
    retrieved = _get(app_session, f"{RESPONSES}/{body['id']}")
    assert retrieved.status == 200 and retrieved.body == created.body


def test_retrieve_as_stream_starting_after(app_session: SessionClient) -> None:
    app_session.configure(ConfigBuilder().scenario().text("abc").build())
    response_id = _post(app_session, {"model": "gpt-4.1-mini", "input": "x"}).json()["id"]

    replay = _get(app_session, f"{RESPONSES}/{response_id}?stream=true&starting_after=2")

    events = _events(replay.body)
    assert events[0][0] == "response.content_part.added"
    assert [d["sequence_number"] for _, d in events] == list(range(3, 3 + len(events)))
    assert events[-1][1]["response"]["id"] == response_id


def test_stored_response_endpoints_and_404_envelopes(app_session: SessionClient) -> None:
    app_session.configure(ConfigBuilder().scenario(terminal_policy="repeat_last_response").text("ok"))
    response_id = _post(app_session, {"model": "gpt-4.1-mini", "input": "x"}).json()["id"]

    items = _get(app_session, f"{RESPONSES}/{response_id}/input_items?limit=1")
    deleted = _get(app_session, f"{RESPONSES}/{response_id}", "DELETE")
    missing = _get(app_session, f"{RESPONSES}/{response_id}")
    missing_delete = _get(app_session, f"{RESPONSES}/{response_id}", "DELETE")
    continued = _post(
        app_session, {"model": "gpt-4.1-mini", "input": "y", "previous_response_id": response_id}
    )

    page = items.json()
    assert page["object"] == "list" and page["has_more"] is False
    assert page["first_id"] == page["last_id"] == page["data"][0]["id"]
    assert page["data"][0]["content"] == [{"type": "input_text", "text": "x"}]
    assert deleted.json() == {"id": response_id, "object": "response", "deleted": True}
    for gone in (missing, missing_delete):
        assert gone.status == 404
        assert gone.json()["error"]["code"] == "response_not_found"
    assert continued.status == 404
    assert continued.json() == {
        "error": {
            "message": f"Previous response with id '{response_id}' not found.",
            "type": "invalid_request_error",
            "param": "previous_response_id",
            "code": "previous_response_not_found",
        }
    }


def test_input_items_pagination(app_session: SessionClient) -> None:
    app_session.configure(ConfigBuilder().scenario().text("ok").build())
    inputs = [{"role": "user", "content": f"m{i}"} for i in range(3)]
    response_id = _post(app_session, {"model": "gpt-4.1-mini", "input": inputs}).json()["id"]

    first = _get(app_session, f"{RESPONSES}/{response_id}/input_items?order=asc&limit=2").json()
    rest = _get(
        app_session, f"{RESPONSES}/{response_id}/input_items?order=asc&limit=2&after={first['last_id']}"
    ).json()
    bad = _get(app_session, f"{RESPONSES}/{response_id}/input_items?limit=0")

    assert [i["content"][0]["text"] for i in first["data"]] == ["m0", "m1"] and first["has_more"] is True
    assert [i["content"][0]["text"] for i in rest["data"]] == ["m2"] and rest["has_more"] is False
    assert bad.status == 400 and bad.json()["error"]["param"] == "limit"


@pytest.mark.parametrize(
    ("body", "param"),
    [
        (b"{not json", None),
        (b"[1]", None),
        ({"input": "x"}, "model"),
        ({"model": "gpt-4.1-mini"}, "input"),
        ({"model": "gpt-4.1-mini", "input": 5}, "input"),
        ({"model": "gpt-4.1-mini", "input": [5]}, "input[0]"),
        ({"model": "gpt-4.1-mini", "input": [{"role": "robot", "content": "x"}]}, "input[0].role"),
        ({"model": "gpt-4.1-mini", "input": [{"role": "user", "content": 5}]}, "input[0].content"),
        ({"model": "gpt-4.1-mini", "input": [{"type": "function_call", "name": "f"}]}, "input[0].call_id"),
        (
            {"model": "gpt-4.1-mini", "input": [{"type": "function_call_output", "output": "x"}]},
            "input[0].call_id",
        ),
        ({"model": "gpt-4.1-mini", "input": [{"type": "telepathy"}]}, "input[0].type"),
        ({"model": "gpt-4.1-mini", "input": "x", "stream": "yes"}, "stream"),
        ({"model": "gpt-4.1-mini", "input": "x", "store": 1}, "store"),
        ({"model": "gpt-4.1-mini", "input": "x", "instructions": 5}, "instructions"),
        ({"model": "gpt-4.1-mini", "input": "x", "tools": {"a": 1}}, "tools"),
        ({"model": "gpt-4.1-mini", "input": "x", "tools": [{"type": "function"}]}, "tools[0].name"),
        ({"model": "gpt-4.1-mini", "input": "x", "tool_choice": "sometimes"}, "tool_choice"),
        ({"model": "gpt-4.1-mini", "input": "x", "tool_choice": {"type": "function"}}, "tool_choice.name"),
        ({"model": "gpt-4.1-mini", "input": "x", "text": {"format": {"type": "yaml"}}}, "text.format.type"),
        (
            {
                "model": "gpt-4.1-mini",
                "input": "x",
                "text": {"format": {"type": "json_schema", "schema": {}}},
            },
            "text.format.name",
        ),
        ({"model": "gpt-4.1-mini", "input": "x", "temperature": "hot"}, "temperature"),
        ({"model": "gpt-4.1-mini", "input": "x", "max_output_tokens": True}, "max_output_tokens"),
    ],
)
def test_malformed_requests_get_400_in_openai_envelope(
    app_session: SessionClient, body: Any, param: str | None
) -> None:
    app_session.configure(ConfigBuilder().scenario().text("never").build())

    response = _post(app_session, body)

    assert response.status == 400
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["type"] == "invalid_request_error"
    assert error["param"] == param
    good = _post(app_session, {"model": "gpt-4.1-mini", "input": "x"})
    assert good.json()["output"][0]["content"][0]["text"] == "never"


# --- Azure -----------------------------------------------------------------------------------------


def _azure_config(session: SessionClient) -> None:
    session.configure(
        {
            "provider_credentials": {"azure-openai": "az-key"},
            "azure_deployments": {"dep": "gpt-4.1-mini"},
            "scenarios": [{"terminal_policy": "repeat_last_response", "responses": [{"text": "azure ok"}]}],
        }
    )


CHAT_BODY = {"messages": [{"role": "user", "content": "x"}]}


def test_azure_deployment_route_with_api_key_and_any_api_version(app_session: SessionClient) -> None:
    _azure_config(app_session)
    path = "/azure-openai/openai/deployments/dep/chat/completions"

    with_version = _post(
        app_session, CHAT_BODY, f"{path}?api-version=2099-01-01-preview", {"api-key": "az-key"}
    )
    without_version = _post(app_session, CHAT_BODY, path, {"api-key": "az-key"})

    for response in (with_version, without_version):
        assert response.status == 200
        body = response.json()
        assert body["model"] == "gpt-4.1-mini"
        assert body["choices"][0]["message"]["content"] == "azure ok"
        assert body["prompt_filter_results"][0]["prompt_index"] == 0
    assert with_version.headers["apim-request-id"] == with_version.headers["x-request-id"]


def test_azure_stream_has_no_filter_only_chunk(app_session: SessionClient) -> None:
    _azure_config(app_session)

    response = _post(
        app_session,
        {**CHAT_BODY, "stream": True},
        "/azure-openai/openai/v1/deployments/dep/chat/completions?api-version=preview",
        {"api-key": "az-key"},
    )

    chunks = data_events(response.body, done=True)
    assert chunks and all(chunk["object"] == "chat.completion.chunk" for chunk in chunks)


def test_azure_errors_in_azure_words(app_session: SessionClient) -> None:
    _azure_config(app_session)

    unknown = _post(
        app_session,
        CHAT_BODY,
        "/azure-openai/openai/deployments/nope/chat/completions",
        {"api-key": "az-key"},
    )
    wrong_key = _post(
        app_session, CHAT_BODY, "/azure-openai/openai/deployments/dep/chat/completions", {"api-key": "bad"}
    )
    no_key = _post(app_session, {"model": "dep", "input": "x"}, "/azure-openai/openai/v1/responses", {})
    bearer = _post(
        app_session,
        {"model": "dep", "input": "x"},
        "/azure-openai/openai/v1/responses",
        {"Authorization": "Bearer az-key"},
    )
    missing_route = _post(app_session, {}, "/azure-openai/openai/v1/embeddingz", {"api-key": "az-key"})

    assert unknown.status == 404
    error = unknown.json()["error"]
    assert error["code"] == "DeploymentNotFound"
    assert error["message"].startswith("The API deployment for this resource does not exist.")
    assert wrong_key.status == 401 and wrong_key.json()["error"]["code"] == "401"
    assert wrong_key.json()["error"]["message"].startswith("Access denied due to invalid subscription key")
    assert no_key.status == 401
    assert bearer.status == 200 and bearer.json()["output"][0]["content"][0]["text"] == "azure ok"
    assert missing_route.status == 404 and missing_route.json()["error"]["code"] == "not_found"


def test_azure_responses_under_deployment_routes(app_session: SessionClient) -> None:
    _azure_config(app_session)
    headers = {"api-key": "az-key"}

    created = _post(
        app_session, {"input": "x"}, "/azure-openai/openai/deployments/dep/responses?api-version=v", headers
    )
    response_id = created.json()["id"]
    fetched = send_raw(
        app_session,
        "GET",
        f"/azure-openai/openai/responses/{response_id}?api-version=v",
        None,
        headers,
    )

    assert created.status == 200 and created.json()["model"] == "gpt-4.1-mini"
    assert fetched.status == 200 and fetched.body == created.body
