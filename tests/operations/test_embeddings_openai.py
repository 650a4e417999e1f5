"""OpenAI and Azure OpenAI embeddings through the official ``openai`` SDK against a real server
(docs/embeddings.md): generated and scripted vectors, ``float`` (strict response validation) and the
SDK's default ``base64``, ``dimensions``, the operation filter, the journal, verification and the strict
request rules."""

from __future__ import annotations

import math
from typing import Any

import openai
import pytest

from llmts import SessionClient
from tests.support.in_process import sdk_transport

pytestmark = pytest.mark.sdk

MODEL = "text-embedding-3-small"


def _strict(session: SessionClient) -> Any:
    return session.openai_client(_strict_response_validation=True, max_retries=0)


def _lax(session: SessionClient) -> Any:
    # The SDK's strict validation runs before it decodes base64, so base64 answers need the default client
    # (the real API's answers fail the same way).
    return session.openai_client(max_retries=0)


def test_generated_vectors_have_the_model_dimension_and_unit_length(llmts_session: SessionClient) -> None:
    small = _strict(llmts_session).embeddings.create(
        model=MODEL, input=["a cat", "a dog"], encoding_format="float"
    )
    assert [len(item.embedding) for item in small.data] == [1536, 1536]
    assert [item.index for item in small.data] == [0, 1] and small.model == MODEL
    assert all(math.isclose(math.hypot(*item.embedding), 1.0) for item in small.data)
    assert small.usage.prompt_tokens == small.usage.total_tokens == 4  # "a cat", "a dog": 2 tokens each
    large = _strict(llmts_session).embeddings.create(
        model="text-embedding-3-large", input="x", encoding_format="float"
    )
    assert len(large.data[0].embedding) == 3072
    short = _strict(llmts_session).embeddings.create(
        model=MODEL, input="x", dimensions=256, encoding_format="float"
    )
    assert len(short.data[0].embedding) == 256


def test_the_sdk_default_base64_decodes_to_the_float_vectors(app_session: SessionClient) -> None:
    raw = _lax(app_session).embeddings.with_raw_response.create(model=MODEL, input="hello world")
    assert raw.http_request.read().find(b'"encoding_format":"base64"') >= 0
    assert isinstance(raw.http_response.json()["data"][0]["embedding"], str)
    decoded = raw.parse().data[0].embedding
    floats = _strict(app_session).embeddings.create(model=MODEL, input="hello world", encoding_format="float")
    assert len(decoded) == 1536
    assert (
        max(abs(a - b) for a, b in zip(decoded, floats.data[0].embedding, strict=True)) < 1e-6
    )  # float32 precision


def test_fixtures_script_exact_vectors_and_chat_keeps_its_own_queue(app_session: SessionClient) -> None:
    app_session.configure(
        {
            "scenarios": [
                {"id": "chat", "responses": [{"text": "Paris."}]},
                {
                    "id": "vectors",
                    "operation": "embeddings",
                    "responses": [{"embeddings": [[0.6, 0.8], [1.0, 0.0]]}],
                },
            ]
        }
    )
    client = _strict(app_session)
    answer = client.embeddings.create(model=MODEL, input=["a", "b"], encoding_format="float")
    assert [item.embedding for item in answer.data] == [[0.6, 0.8], [1.0, 0.0]]
    chat = client.chat.completions.create(model="gpt-4.1-mini", messages=[{"role": "user", "content": "Hi"}])
    assert chat.choices[0].message.content == "Paris."
    with pytest.raises(openai.ConflictError) as exhausted:
        client.embeddings.create(model=MODEL, input=["a", "b"], encoding_format="float")
    assert exhausted.value.code == "llm_test_server_scenario_exhausted"
    entries = app_session.requests(order="asc")
    assert [(e["operation"], e["scenario"], e["status"]) for e in entries] == [
        ("embeddings", "vectors", 200),
        ("chat.completions", "chat", 200),
        ("embeddings", None, 409),
    ]
    assert len(app_session.requests(operation="embeddings")) == 2
    verdict = app_session.verify(
        requests=[
            {"name": "embedded", "query": {"operation": "embeddings", "success": True}, "minimum_count": 1}
        ]
    )
    assert verdict.passed, verdict


def test_a_fixture_that_does_not_fit_is_a_409(app_session: SessionClient) -> None:
    app_session.configure({"scenarios": [{"responses": [{"embeddings": [[0.6, 0.8]]}]}]})
    with pytest.raises(openai.ConflictError) as caught:
        _strict(app_session).embeddings.create(model=MODEL, input=["a", "b"], encoding_format="float")
    assert caught.value.code == "llm_test_server_fixture_mismatch"
    with pytest.raises(openai.ConflictError, match="asks for 3 dimensions"):
        _strict(app_session).embeddings.create(model=MODEL, input="a", dimensions=3, encoding_format="float")


def test_scripted_errors_and_delays(llmts_session: SessionClient) -> None:
    llmts_session.configure(
        {
            "scenarios": [
                {
                    "operation": "embeddings",
                    "responses": [
                        {
                            "error": {
                                "status": 429,
                                "code": "rate_limit_exceeded",
                                "message": "Slow down",
                                "retry_after": 1,
                            }
                        },
                        {"embeddings": [[1.0]], "delay_ms": 150},
                    ],
                }
            ]
        }
    )
    client = _strict(llmts_session)
    with pytest.raises(openai.RateLimitError) as caught:
        client.embeddings.create(model=MODEL, input="a", encoding_format="float")
    assert caught.value.code == "rate_limit_exceeded" and caught.value.response.headers["retry-after"] == "1"
    answer = client.embeddings.create(model=MODEL, input="a", encoding_format="float")
    assert answer.data[0].embedding == [1.0]
    late = llmts_session.requests(status=200)[0]
    assert late["completed_monotonic_seconds"] - late["started_monotonic_seconds"] >= 0.15


@pytest.mark.parametrize(
    ("kwargs", "rule"),
    [
        ({"input": ""}, "embeddings_empty_input"),
        ({"input": []}, "embeddings_empty_input"),
        ({"input": ["ok", ""]}, "embeddings_empty_input"),
        ({"input": ["x"] * 2049}, "operation_inputs"),
        ({"input": "x", "dimensions": 1537}, "embeddings_dimensions"),
        ({"input": "x", "dimensions": 8, "model": "text-embedding-ada-002"}, "embeddings_dimensions"),
        ({"input": "word " * 40_000}, "embeddings_input_too_long"),
    ],
)
def test_requests_the_api_rejects_get_its_400_and_consume_nothing(
    app_session: SessionClient, kwargs: dict[str, Any], rule: str
) -> None:
    app_session.configure(
        {"scenarios": [{"terminal_policy": "repeat_last_response", "responses": [{"embeddings": [[1.0]]}]}]}
    )
    kwargs = {"model": MODEL, "encoding_format": "float", **kwargs}
    with pytest.raises(openai.BadRequestError) as caught:
        _strict(app_session).embeddings.create(**kwargs)
    assert rule in caught.value.message
    assert caught.value.param in ("input", "dimensions")
    (entry,) = app_session.requests()
    # A strict rule runs after parsing (the entry names the operation); llmts's own input bound while
    # parsing, as any malformed body.
    operation = None if rule == "operation_inputs" else "embeddings"
    assert (entry["operation"], entry["status"], entry["scenario"]) == (operation, 400, None)


def test_strict_requests_false_accepts_an_empty_input(app_session: SessionClient) -> None:
    app_session.configure({"strict_requests": False, "scenarios": [{"responses": [{"text": "x"}]}]})
    answer = _strict(app_session).embeddings.create(model=MODEL, input="", encoding_format="float")
    assert len(answer.data[0].embedding) == 1536


def test_malformed_bodies_get_openai_400s(app_session: SessionClient) -> None:
    client = _strict(app_session)
    with pytest.raises(openai.BadRequestError) as caught:
        client.embeddings.create(model=MODEL, input=[{"text": "x"}], encoding_format="float")  # type: ignore[list-item]
    assert caught.value.param == "input"
    with pytest.raises(openai.BadRequestError, match="encoding_format"):
        client.embeddings.create(model=MODEL, input="x", encoding_format="int8")  # type: ignore[arg-type]
    with pytest.raises(openai.BadRequestError, match="4096"):
        client.embeddings.create(model="my-embedder", input="x", dimensions=5000, encoding_format="float")
    with pytest.raises(openai.BadRequestError, match="generated_embedding_values"):
        client.embeddings.create(
            model="my-embedder", input=["x"] * 200, dimensions=4096, encoding_format="float"
        )


def test_token_arrays_are_embedded(app_session: SessionClient) -> None:
    answer = _strict(app_session).embeddings.create(
        model=MODEL, input=[[1, 2, 3], [4, 5]], encoding_format="float"
    )
    assert len(answer.data) == 2


def test_azure_deployment_and_v1_routes(app_session: SessionClient) -> None:
    app_session.configure(
        {
            "azure_deployments": {"embedder": MODEL},
            "scenarios": [{"responses": [{"embeddings": [[0.0, 1.0]]}, {"embeddings": [[1.0, 0.0]]}]}],
        }
    )
    azure = app_session.azure_openai_client(_strict_response_validation=True, max_retries=0)
    raw = azure.embeddings.with_raw_response.create(model="embedder", input="x", encoding_format="float")
    assert raw.http_request.url.path.endswith("/azure-openai/openai/deployments/embedder/embeddings")
    assert raw.parse().data[0].embedding == [0.0, 1.0] and raw.parse().model == MODEL
    assert raw.http_response.headers["apim-request-id"]
    v1 = openai.OpenAI(
        base_url=f"{app_session.provider_base}/azure-openai/openai/v1",
        api_key="k",
        max_retries=0,
        **sdk_transport(app_session, "openai"),
    )
    assert v1.embeddings.create(model=MODEL, input="x").data[0].embedding == [1.0, 0.0]  # base64
    assert [e["provider"] for e in app_session.requests(operation="embeddings")] == ["azure-openai"] * 2
