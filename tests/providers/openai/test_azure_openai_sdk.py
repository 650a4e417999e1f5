"""Azure OpenAI (``azure-openai`` namespace) through the official ``openai`` SDK with strict response
validation: ``openai.AzureOpenAI`` (deployment routes, ``api-key`` auth) and ``openai.OpenAI`` on the v1 path
(Bearer auth), for chat and Responses."""

from __future__ import annotations

from functools import partial
from typing import Any

import openai
import pytest

from llmts import SessionClient
from tests.support.configure import script
from tests.support.in_process import sdk_transport

pytestmark = pytest.mark.sdk

MODEL = "gpt-4.1-mini"
KEY = "azure-key-123"
USER_HI = [{"role": "user", "content": "Hi"}]


_configure = partial(
    script,
    models=[MODEL, "gpt-4o"],
    provider_credentials={"azure-openai": KEY},
    azure_deployments={"my-deploy": MODEL, "big": "gpt-4o"},
)


def _azure(session: SessionClient, **kwargs: Any) -> Any:
    return session.azure_openai_client(_strict_response_validation=True, max_retries=0, **kwargs)


def _v1(session: SessionClient, **kwargs: Any) -> Any:
    kwargs.setdefault("api_key", KEY)
    return openai.OpenAI(
        base_url=f"{session.provider_base}/azure-openai/openai/v1",
        _strict_response_validation=True,
        max_retries=0,
        **sdk_transport(session, "openai"),
        **kwargs,
    )


def test_chat_through_azure_openai_client_maps_deployment_to_model(llmts_session: SessionClient) -> None:
    _configure(llmts_session, {"text": "Hello from Azure."})

    raw = _azure(llmts_session).chat.completions.with_raw_response.create(model="big", messages=USER_HI)
    completion = raw.parse()

    assert raw.http_request.url.path.endswith("/azure-openai/openai/deployments/big/chat/completions")
    assert raw.http_request.url.params["api-version"] == "2024-10-21"
    assert raw.http_request.headers["api-key"] == KEY
    assert completion.choices[0].message.content == "Hello from Azure."
    assert completion.model == "gpt-4o"
    body = raw.http_response.json()
    assert body["prompt_filter_results"][0]["content_filter_results"]["hate"]["filtered"] is False
    assert body["choices"][0]["content_filter_results"]["violence"]["severity"] == "safe"


def test_chat_stream_helper_through_azure_openai_client(app_session: SessionClient) -> None:
    _configure(app_session, {"text": "One two", "chunks": ["One", " two"]})

    with _azure(app_session).chat.completions.stream(model="my-deploy", messages=USER_HI) as stream:
        deltas = [e.delta for e in stream if e.type == "content.delta" and e.delta]
        final = stream.get_final_completion()

    assert deltas == ["One", " two"]
    assert final.choices[0].message.content == "One two"
    assert final.model == MODEL


def test_client_bound_to_a_deployment(app_session: SessionClient) -> None:
    _configure(app_session, {"text": "chat"}, {"text": "responses"})
    client = _azure(app_session, azure_deployment="my-deploy")

    chat = client.chat.completions.create(model="ignored-by-azure", messages=USER_HI)
    response = client.responses.create(model="my-deploy", input="Hi")

    assert chat.choices[0].message.content == "chat"
    assert response.output_text == "responses" and response.model == MODEL


def test_responses_through_azure_openai_client(app_session: SessionClient) -> None:
    _configure(app_session, {"text": "First."}, {"text": "Second.", "chunks": ["Sec", "ond."]})
    client = _azure(app_session)

    raw = client.responses.with_raw_response.create(model="my-deploy", input="Hi")
    first = raw.parse()
    with client.responses.stream(model="my-deploy", input="Again", previous_response_id=first.id) as stream:
        deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
        second = stream.get_final_response()

    assert raw.http_request.url.path.endswith("/azure-openai/openai/responses")
    assert first.output_text == "First." and first.model == MODEL
    assert deltas == ["Sec", "ond."]
    assert second.usage.input_tokens > first.usage.input_tokens  # the stored history was restored
    assert client.responses.retrieve(second.id).output_text == "Second."
    client.responses.delete(second.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(second.id)


def test_openai_client_on_the_v1_path(app_session: SessionClient) -> None:
    _configure(
        app_session,
        {"text": "by deployment"},
        {"text": "by model id"},
        {"text": "responses", "chunks": ["resp", "onses"]},
    )
    client = _v1(app_session)

    by_deployment = client.chat.completions.with_raw_response.create(model="big", messages=USER_HI)
    by_model = client.chat.completions.create(model=MODEL, messages=USER_HI)
    with client.responses.stream(model="my-deploy", input="Hi") as stream:
        response = stream.get_final_response()

    assert by_deployment.http_request.headers["authorization"] == f"Bearer {KEY}"
    assert by_deployment.http_request.url.path.endswith("/azure-openai/openai/v1/chat/completions")
    assert by_deployment.parse().model == "gpt-4o"
    assert by_model.choices[0].message.content == "by model id" and by_model.model == MODEL
    assert response.output_text == "responses"
    assert client.responses.retrieve(response.id).id == response.id
    assert [m.id for m in client.models.list()] == [MODEL, "gpt-4o"]


def test_azure_client_with_a_v1_base_url_uses_v1_deployment_routes(app_session: SessionClient) -> None:
    _configure(app_session, {"text": "v1 deployments"})
    client = openai.AzureOpenAI(
        base_url=f"{app_session.provider_base}/azure-openai/openai/v1",
        api_key=KEY,
        api_version="preview",
        _strict_response_validation=True,
        max_retries=0,
        **sdk_transport(app_session, "openai"),
    )

    raw = client.chat.completions.with_raw_response.create(model="my-deploy", messages=USER_HI)

    assert raw.http_request.url.path.endswith(
        "/azure-openai/openai/v1/deployments/my-deploy/chat/completions"
    )
    assert raw.parse().choices[0].message.content == "v1 deployments"


def test_models_list_through_azure_openai_client(app_session: SessionClient) -> None:
    _configure(app_session, {"text": "unused"})

    assert [m.id for m in _azure(app_session).models.list()] == [MODEL, "gpt-4o"]


def test_unknown_deployment_is_404_deployment_not_found(app_session: SessionClient) -> None:
    _configure(app_session, {"text": "unused"})
    client = _azure(app_session)

    with pytest.raises(openai.NotFoundError) as chat:
        client.chat.completions.create(model="no-such-deploy", messages=USER_HI)
    with pytest.raises(openai.NotFoundError) as responses:
        _v1(app_session).responses.create(model="no-such-deploy", input="Hi")

    assert chat.value.code == "DeploymentNotFound"
    assert "The API deployment for this resource does not exist" in chat.value.message
    assert "no-such-deploy" in chat.value.message
    assert responses.value.code == "DeploymentNotFound"
    # Nothing was consumed by the failures.
    assert (
        client.chat.completions.create(model="my-deploy", messages=USER_HI).choices[0].message.content
        == "unused"
    )


def test_wrong_key_is_401_and_bearer_tokens_are_accepted(app_session: SessionClient) -> None:
    _configure(app_session, {"text": "with a token"})

    with pytest.raises(openai.AuthenticationError) as caught:
        _azure(app_session, api_key="wrong-key-456").chat.completions.create(
            model="my-deploy", messages=USER_HI
        )
    with pytest.raises(openai.AuthenticationError):
        _v1(app_session, api_key="wrong-key-456").responses.create(model="my-deploy", input="Hi")

    assert caught.value.status_code == 401
    assert caught.value.code == "401"
    assert KEY not in caught.value.message
    ad_client = openai.AzureOpenAI(
        azure_endpoint=f"{app_session.provider_base}/azure-openai",
        api_version="2024-10-21",
        azure_ad_token=KEY,
        _strict_response_validation=True,
        max_retries=0,
        **sdk_transport(app_session, "openai"),
    )
    completion = ad_client.chat.completions.create(model="my-deploy", messages=USER_HI)
    assert completion.choices[0].message.content == "with a token"


def test_scenarios_can_target_azure_alone(app_session: SessionClient) -> None:
    app_session.configure(
        {
            "azure_deployments": {"my-deploy": MODEL},
            "scenarios": [
                {"provider": "azure-openai", "responses": [{"text": "azure"}]},
                {"provider": "openai", "responses": [{"text": "openai"}]},
            ],
        }
    )
    app_openai = app_session.openai_client(_strict_response_validation=True, max_retries=0)

    azure_text = _azure(app_session).responses.create(model="my-deploy", input="Hi").output_text
    openai_text = app_openai.responses.create(model=MODEL, input="Hi").output_text

    assert (azure_text, openai_text) == ("azure", "openai")


def test_azure_and_openai_stored_responses_are_apart(app_session: SessionClient) -> None:
    app_session.configure(
        {
            "azure_deployments": {"my-deploy": MODEL},
            "scenarios": [{"terminal_policy": "repeat_last_response", "responses": [{"text": "x"}]}],
        }
    )
    azure = _azure(app_session)
    plain = app_session.openai_client(_strict_response_validation=True, max_retries=0)

    from_azure = azure.responses.create(model="my-deploy", input="Hi")

    with pytest.raises(openai.NotFoundError):
        plain.responses.retrieve(from_azure.id)
    assert azure.responses.retrieve(from_azure.id).id == from_azure.id


def test_scripted_429_is_retried_through_azure(app_session: SessionClient) -> None:
    _configure(
        app_session,
        {"error": {"status": 429, "code": "429", "message": "Rate limit is exceeded.", "retry_after": 0.2}},
        {"text": "after the retry"},
    )
    client = app_session.azure_openai_client(_strict_response_validation=True, max_retries=2)

    raw = client.chat.completions.with_raw_response.create(model="my-deploy", messages=USER_HI)

    assert raw.retries_taken == 1
    assert raw.parse().choices[0].message.content == "after the retry"
