"""Generated vectors are useful for retrieval on every provider (docs/embeddings.md, "A retrieval
test"): five documents and a question embedded through each official SDK; cosine similarity on the
returned vectors ranks the document that shares the question's words first. Also: the control API's
``match/explain`` and connection-level faults for an embeddings request."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import openai
import pytest

from llmts import SessionClient

pytestmark = pytest.mark.sdk

DOCUMENTS = [
    "The Eiffel Tower is in Paris, the capital of France.",
    "Photosynthesis turns sunlight, water and carbon dioxide into sugar.",
    "The Great Wall of China is thousands of kilometres long.",
    "Python is a programming language with readable syntax.",
    "Coffee beans are roasted seeds of the coffee plant.",
]
QUESTIONS = {
    "Which city is the capital of France?": 0,
    "How do plants turn sunlight into sugar?": 1,
    "How long is the Great Wall?": 2,
    "Is Python syntax readable?": 3,
    "How are coffee beans roasted?": 4,
}


def _cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True)) / (math.hypot(*a) * math.hypot(*b))


def _openai(session: SessionClient, texts: list[str]) -> list[list[float]]:
    answer = session.openai_client(max_retries=0).embeddings.create(
        model="text-embedding-3-small", input=texts
    )
    return [item.embedding for item in answer.data]


def _gemini(session: SessionClient, texts: list[str]) -> list[list[float]]:
    client = session.gemini_client()
    answer = client.models.embed_content(model="gemini-embedding-001", contents=texts)
    return [list(item.values or []) for item in answer.embeddings or []]


def _cohere(session: SessionClient, texts: list[str]) -> list[list[float]]:
    answer = session.cohere_client().embed(
        model="embed-v4.0", texts=texts, input_type="search_document", embedding_types=["float"]
    )
    return [list(vector) for vector in answer.embeddings.float_ or []]


def _ollama(session: SessionClient, texts: list[str]) -> list[list[float]]:
    return [
        list(vector)
        for vector in session.ollama_client().embed(model="nomic-embed-text", input=texts).embeddings
    ]


def _bedrock(session: SessionClient, texts: list[str]) -> list[list[float]]:
    client = session.bedrock_client()
    vectors = []
    for text in texts:
        body = json.dumps({"inputText": text, "dimensions": 512})
        vectors.append(
            json.loads(client.invoke_model(modelId="amazon.titan-embed-text-v2:0", body=body)["body"].read())[
                "embedding"
            ]
        )
    return vectors


@pytest.fixture
def session(request: pytest.FixtureRequest) -> SessionClient:
    """In process, but Bedrock on the real server: boto3 takes no WSGI transport."""
    bedrock = request.node.callspec.params["embed"] is _bedrock
    session: SessionClient = request.getfixturevalue("llmts_session" if bedrock else "app_session")
    return session


@pytest.mark.parametrize(
    "embed", [_openai, _gemini, _cohere, _ollama, _bedrock], ids=lambda f: f.__name__[1:]
)
def test_the_document_sharing_the_question_words_ranks_first(
    session: SessionClient, embed: Callable[[SessionClient, list[str]], list[list[float]]]
) -> None:
    documents = embed(session, DOCUMENTS)
    questions = embed(session, list(QUESTIONS))
    for question, expected in zip(questions, QUESTIONS.values(), strict=True):
        ranked = sorted(range(len(DOCUMENTS)), key=lambda i: -_cosine(question, documents[i]))
        assert ranked[0] == expected


def test_match_explain_says_an_embeddings_request_is_generated(app_session: SessionClient) -> None:
    app_session.configure({"scenarios": [{"id": "chat", "responses": [{"text": "x"}]}]})
    request: dict[str, Any] = {
        "provider_namespace": "openai",
        "request": {
            "model": "text-embedding-3-small",
            "operation": "embeddings",
            "messages": [{"role": "user", "content": "x"}],
        },
    }
    _, _, explained = app_session.server.request(
        "POST", "/admin-api/match/explain", request, session_id=app_session.id
    )
    assert explained["outcome"] == "generate"
    assert explained["selected_scenario"] is None and explained["matched_candidates"] == []


def test_connection_faults_and_rate_limits_apply_to_embeddings(llmts_session: SessionClient) -> None:
    llmts_session.configure(
        {
            "rate_limits": {"requests_per_minute": 10},
            "scenarios": [
                {
                    "operation": "embeddings",
                    "responses": [
                        {
                            "embeddings": [[1.0]],
                            "stream_delivery": {"mode": "http_error_page", "status": 502},
                        },
                        {"embeddings": [[1.0]]},
                    ],
                }
            ],
        }
    )
    client = llmts_session.openai_client(_strict_response_validation=True, max_retries=0)
    with pytest.raises(openai.InternalServerError) as caught:
        client.embeddings.create(model="text-embedding-3-small", input="x", encoding_format="float")
    assert caught.value.status_code == 502
    raw = client.embeddings.with_raw_response.create(
        model="text-embedding-3-small", input="x", encoding_format="float"
    )
    assert raw.parse().data[0].embedding == [1.0]
    assert raw.headers["x-ratelimit-remaining-requests"] == "8"
    faulted, answered = llmts_session.requests(order="asc")
    assert (faulted["operation"], faulted["status"], faulted["success"]) == ("embeddings", 502, False)
    assert (answered["status"], answered["success"]) == (200, True)
