"""Embeddings on Gemini, Cohere, Ollama and Bedrock through their official SDKs against a real server
(docs/embeddings.md): generated vectors of the model's or the requested dimension, scripted vectors,
each wire's number formats, the strict request rules, the journal, and determinism across sessions."""

from __future__ import annotations

import base64
import json
import math
import struct
from typing import Any

import botocore.config
import cohere
import google.genai.errors
import pytest
from google.genai import types

from llmts import SessionClient

pytestmark = pytest.mark.sdk

VECTORS = {
    "scenarios": [{"operation": "embeddings", "responses": [{"embeddings": [[0.6, 0.8], [0.0, 1.0]]}]}]
}


def _unit(vector: list[float]) -> bool:
    return math.isclose(math.hypot(*vector), 1.0, rel_tol=1e-6)


def _boto(session: SessionClient) -> Any:
    return session.bedrock_client(config=botocore.config.Config(retries={"total_max_attempts": 1}))


def _invoke(session: SessionClient, model: str, body: dict[str, Any]) -> dict[str, Any]:
    answer = _boto(session).invoke_model(modelId=model, body=json.dumps(body))
    return dict(json.loads(answer["body"].read()))


# --- Gemini -------------------------------------------------------------------------------------------


def test_gemini_embed_content_batches_with_dimension_and_task_type(llmts_session: SessionClient) -> None:
    client = llmts_session.gemini_client()
    raw = client.models.embed_content(
        model="gemini-embedding-001",
        contents=["hello world", "hello there"],
        config=types.EmbedContentConfig(output_dimensionality=64, task_type="RETRIEVAL_DOCUMENT"),
    )
    assert raw.embeddings is not None and [len(e.values or []) for e in raw.embeddings] == [64, 64]
    assert all(_unit(list(e.values or [])) for e in raw.embeddings)
    if "usage_metadata" in type(raw).model_fields:  # google-genai 1.x does not model it yet
        assert raw.usage_metadata is not None and raw.usage_metadata.prompt_token_count == 6
    default = client.models.embed_content(model="text-embedding-004", contents="hi")
    assert default.embeddings is not None and len(default.embeddings[0].values or []) == 768
    (entry, _) = llmts_session.requests()
    assert entry["operation"] == "embeddings" and entry["path"].endswith(":batchEmbedContents")


def test_gemini_fixture_and_single_embed_content(app_session: SessionClient, app_raw: Any) -> None:
    app_session.configure(VECTORS)
    client = app_session.gemini_client()  # keep a reference: a collected client closes its connection
    answer = client.models.embed_content(model="gemini-embedding-001", contents=["a", "b"])
    assert answer.embeddings is not None and [e.values for e in answer.embeddings] == [[0.6, 0.8], [0.0, 1.0]]
    app_session.configure({"scenarios": [{"responses": [{"text": "x"}]}]})
    single = app_raw(
        app_session.provider_base,
        "POST",
        "/gemini/v1beta/models/gemini-embedding-001:embedContent",
        {"content": {"parts": [{"text": "x"}]}, "outputDimensionality": 16},
    )
    assert single.status == 200 and len(single.json()["embedding"]["values"]) == 16


@pytest.mark.parametrize(
    ("config", "contents", "reason"),
    [
        ({"output_dimensionality": 4000}, ["x"], "embed_output_dimensionality"),
        ({}, [""], "embed_empty_content"),
        ({}, ["x"] * 101, "embed_batch_too_large"),
        ({"task_type": "SUMMARIZE"}, ["x"], "task_type"),
    ],
)
def test_gemini_requests_the_api_rejects(
    app_session: SessionClient, config: dict[str, Any], contents: list[str], reason: str
) -> None:
    client = app_session.gemini_client()
    with pytest.raises(google.genai.errors.ClientError) as caught:
        client.models.embed_content(model="gemini-embedding-001", contents=contents, config=config)
    assert caught.value.code == 400 and caught.value.status == "INVALID_ARGUMENT"
    assert reason in caught.value.message


# --- Cohere -------------------------------------------------------------------------------------------


def test_cohere_embed_answers_every_embedding_type(app_session: SessionClient) -> None:
    answer = app_session.cohere_client().embed(
        model="embed-v4.0",
        texts=["hello world", "bye"],
        input_type="search_document",
        embedding_types=["float", "int8", "uint8", "binary", "ubinary", "base64"],
        output_dimension=256,
    )
    e = answer.embeddings
    assert e.float_ is not None and [len(v) for v in e.float_] == [256, 256] and _unit(e.float_[0])
    assert e.int8 is not None and max(abs(x) for x in e.int8[0]) == 127 and min(e.int8[0]) >= -128
    assert e.uint8 is not None and [x - 128 for x in e.uint8[0]] == e.int8[0]
    assert e.ubinary is not None and len(e.ubinary[0]) == 32 and all(0 <= x <= 255 for x in e.ubinary[0])
    assert e.binary is not None and [x + 128 for x in e.binary[0]] == e.ubinary[0]
    first_bits = [1 if x > 0 else 0 for x in e.float_[0][:8]]
    assert e.ubinary[0][0] == int("".join(map(str, first_bits)), 2)
    assert e.base64 is not None
    decoded = struct.unpack("<256f", base64.b64decode(e.base64[0]))
    assert max(abs(a - b) for a, b in zip(decoded, e.float_[0], strict=True)) < 1e-6
    assert answer.texts == ["hello world", "bye"] and answer.response_type == "embeddings_by_type"
    assert answer.meta is not None and answer.meta.billed_units is not None
    assert answer.meta.billed_units.input_tokens == 4
    default = app_session.cohere_client().embed(
        model="embed-english-v3.0", texts=["x"], input_type="search_query"
    )
    assert default.embeddings.float_ is not None and len(default.embeddings.float_[0]) == 1024


def test_cohere_embed_images_and_inputs(app_session: SessionClient) -> None:
    image = "data:image/png;base64,iVBORw0KGgo="
    client = app_session.cohere_client()
    by_image = client.embed(model="embed-v4.0", images=[image], input_type="image", embedding_types=["float"])
    mixed = client.embed(
        model="embed-v4.0",
        inputs=[
            {
                "content": [
                    {"type": "text", "text": "a cat"},
                    {"type": "image_url", "image_url": {"url": image}},
                ]
            }
        ],
        input_type="search_document",
        embedding_types=["float"],
    )
    assert by_image.embeddings.float_ is not None and mixed.embeddings.float_ is not None
    assert (
        by_image.embeddings.float_[0]
        == client.embed(
            model="embed-v4.0", images=[image], input_type="image", embedding_types=["float"]
        ).embeddings.float_[0]
    )


def test_cohere_fixture_vectors(app_session: SessionClient) -> None:
    app_session.configure(VECTORS)
    answer = app_session.cohere_client().embed(
        model="embed-v4.0", texts=["a", "b"], input_type="search_document", embedding_types=["float", "int8"]
    )
    assert answer.embeddings.float_ == [[0.6, 0.8], [0.0, 1.0]]
    assert answer.embeddings.int8 == [[95, 127], [0, 127]]


@pytest.mark.parametrize(
    ("kwargs", "rule"),
    [
        ({"texts": [], "input_type": "search_query"}, "embed_empty_input"),
        ({"texts": ["x"] * 97, "input_type": "search_query"}, "embed_too_many_inputs"),
        ({"texts": ["x"], "input_type": "search_query", "output_dimension": 300}, "embed_output_dimension"),
        ({"texts": ["x"], "input_type": "search_query", "embedding_types": ["int4"]}, "embedding_types"),
    ],
)
def test_cohere_requests_the_api_rejects(
    app_session: SessionClient, kwargs: dict[str, Any], rule: str
) -> None:
    with pytest.raises(cohere.BadRequestError) as caught:
        app_session.cohere_client().embed(model="embed-v4.0", **kwargs)
    assert rule in caught.value.body["message"]


# --- Ollama -------------------------------------------------------------------------------------------


def test_ollama_embed_and_legacy_embeddings(app_session: SessionClient) -> None:
    client = app_session.ollama_client()
    answer = client.embed(model="nomic-embed-text", input=["hello", "world"])
    assert [len(v) for v in answer.embeddings] == [768, 768] and _unit(list(answer.embeddings[0]))
    assert answer.prompt_eval_count == 4 and answer.model == "nomic-embed-text"
    assert len(client.embed(model="nomic-embed-text:latest", input="x", dimensions=64).embeddings[0]) == 64
    legacy = client.embeddings(model="mxbai-embed-large", prompt="hello")
    assert len(legacy.embedding) == 1024
    # The same text embeds alike through both routes.
    assert list(legacy.embedding) == list(
        client.embed(model="mxbai-embed-large", input="hello").embeddings[0]
    )


def test_cohere_input_type_is_required_and_ollama_model(app_session: SessionClient, app_raw: Any) -> None:
    missing = app_raw(
        app_session.provider_base, "POST", "/cohere/v2/embed", {"model": "embed-v4.0", "texts": ["x"]}
    )
    assert missing.status == 400 and "embed_input_type_required" in missing.json()["message"]
    no_model = app_raw(app_session.provider_base, "POST", "/ollama/api/embed", {"input": "x"})
    assert (no_model.status, no_model.json()) == (400, {"error": "model is required"})
    numbers = app_raw(app_session.provider_base, "POST", "/ollama/api/embed", {"model": "m", "input": [1, 2]})
    assert (numbers.status, numbers.json()) == (400, {"error": "input[0] must be a string"})


# --- Bedrock ------------------------------------------------------------------------------------------


def test_bedrock_titan_embeddings(llmts_session: SessionClient) -> None:
    v1 = _invoke(llmts_session, "amazon.titan-embed-text-v1", {"inputText": "hello world"})
    assert len(v1["embedding"]) == 1536 and v1["inputTextTokenCount"] == 3 and _unit(v1["embedding"])
    v2 = _invoke(
        llmts_session,
        "amazon.titan-embed-text-v2:0",
        {
            "inputText": "hello world",
            "dimensions": 256,
            "normalize": True,
            "embeddingTypes": ["float", "binary"],
        },
    )
    assert len(v2["embedding"]) == 256 and v2["embeddingsByType"]["float"] == v2["embedding"]
    assert v2["embeddingsByType"]["binary"] == [1 if x > 0 else 0 for x in v2["embedding"]]
    assert (
        len(_invoke(llmts_session, "amazon.titan-embed-text-v2:0", {"inputText": "x"})["embedding"]) == 1024
    )
    client = _boto(llmts_session)
    for body in ({"inputText": "x", "dimensions": 300}, {"text": "x"}):
        with pytest.raises(client.exceptions.ValidationException):
            client.invoke_model(modelId="amazon.titan-embed-text-v2:0", body=json.dumps(body))
    with pytest.raises(client.exceptions.ValidationException, match="does not support response streaming"):
        client.invoke_model_with_response_stream(
            modelId="amazon.titan-embed-text-v2:0", body=json.dumps({"inputText": "x"})
        )


def test_bedrock_cohere_embed(llmts_session: SessionClient) -> None:
    floats = _invoke(
        llmts_session, "cohere.embed-english-v3", {"texts": ["a", "b"], "input_type": "search_document"}
    )
    assert (
        floats["response_type"] == "embeddings_floats"
        and [len(v) for v in floats["embeddings"]] == [1024] * 2
    )
    typed = _invoke(
        llmts_session,
        "us.cohere.embed-v4:0",
        {"texts": ["a"], "input_type": "search_document", "embedding_types": ["int8"]},
    )
    assert typed["response_type"] == "embeddings_by_type" and len(typed["embeddings"]["int8"][0]) == 1536
    llmts_session.configure(VECTORS)
    scripted = _invoke(
        llmts_session, "cohere.embed-english-v3", {"texts": ["a", "b"], "input_type": "search_document"}
    )
    assert scripted["embeddings"] == [[0.6, 0.8], [0.0, 1.0]]
    assert [(e["provider"], e["operation"]) for e in llmts_session.requests()] == [("bedrock", "embeddings")]


# --- across providers ---------------------------------------------------------------------------------


def _vectors_of(session: SessionClient) -> list[list[float]]:
    openai_vector = session.openai_client(max_retries=0).embeddings.create(
        model="text-embedding-3-small", input="the quick brown fox", encoding_format="float"
    )
    client = session.gemini_client()
    gemini = client.models.embed_content(model="gemini-embedding-001", contents="the quick brown fox")
    ollama_vector = session.ollama_client().embed(model="nomic-embed-text", input="the quick brown fox")
    assert gemini.embeddings is not None
    return [
        openai_vector.data[0].embedding,
        list(gemini.embeddings[0].values or []),
        list(ollama_vector.embeddings[0]),
    ]


def test_generated_vectors_are_deterministic_across_sessions(llmts_app_server: Any) -> None:
    sessions = [llmts_app_server.create_session() for _ in range(3)]
    try:
        for session, seed in zip(sessions, ("run-1", "run-1", "run-2"), strict=True):
            session.configure({"determinism": {"seed": seed}, "scenarios": [{"responses": [{"text": "x"}]}]})
        first, second, other = (_vectors_of(session) for session in sessions)
        assert first == second
        assert all(a != b for a, b in zip(first, other, strict=True))
    finally:
        for session in sessions:
            session.delete()


def test_ollama_openai_compatible_embeddings(app_session: SessionClient) -> None:
    client = app_session.sdk_client("ollama_openai_client", _strict_response_validation=True, max_retries=0)
    answer = client.embeddings.create(model="nomic-embed-text", input=["a", "b"], encoding_format="float")
    assert [len(item.embedding) for item in answer.data] == [768, 768]
    native = app_session.ollama_client().embed(model="nomic-embed-text", input="a")
    assert answer.data[0].embedding == list(native.embeddings[0])
    assert [e["path"] for e in app_session.requests(operation="embeddings", order="asc")] == [
        "/ollama/v1/embeddings",
        "/ollama/api/embed",
    ]


@pytest.mark.parametrize(
    "model",
    [
        "apac.cohere.embed-v4:0",
        "global.cohere.embed-v4:0",
        "arn:aws:bedrock:us-east-1::foundation-model/amazon.titan-embed-text-v2:0",
    ],
)
def test_bedrock_embedding_models_behind_profiles_and_arns(llmts_session: SessionClient, model: str) -> None:
    """Inference-profile prefixes other than two letters, and ARNs, name the same embedding models (they
    were taken for chat models and refused for a missing anthropic_version)."""
    body = {"texts": ["a"], "input_type": "search_document"} if "cohere" in model else {"inputText": "a"}
    answer = _invoke(llmts_session, model, body)
    vectors = answer["embeddings"] if "cohere" in model else [answer["embedding"]]
    assert len(vectors) == 1 and _unit(vectors[0])
