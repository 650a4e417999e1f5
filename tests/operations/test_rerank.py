"""Rerank through the official SDKs (docs/rerank.md): Cohere ``ClientV2.rerank`` (and the v1 client),
Bedrock ``cohere.rerank`` and ``amazon.rerank`` models; generated ranking by shared words, ``top_n``,
``return_documents``, fixtures, errors and strict rules."""

from __future__ import annotations

import json
from typing import Any

import botocore.config
import cohere
import pytest

from llmts import SessionClient

pytestmark = pytest.mark.sdk

QUERY = "What is the capital of France?"
DOCUMENTS = [
    "Berlin is the capital of Germany.",
    "Paris is the capital and largest city of France.",
    "France is famous for its wine.",
    "Bananas are rich in potassium.",
]


def test_generated_ranking_follows_shared_words(app_session: SessionClient) -> None:
    answer = app_session.cohere_client().rerank(model="rerank-v3.5", query=QUERY, documents=DOCUMENTS)
    assert [result.index for result in answer.results] == [1, 0, 2, 3]
    scores = [result.relevance_score for result in answer.results]
    assert scores == sorted(scores, reverse=True) and scores[0] > scores[1] > 0 and scores[-1] == 0
    assert answer.meta is not None and answer.meta.billed_units is not None
    assert answer.meta.billed_units.search_units == 1
    top = app_session.cohere_client().rerank(model="rerank-v3.5", query=QUERY, documents=DOCUMENTS, top_n=2)
    assert [result.index for result in top.results] == [1, 0]
    (entry, _) = app_session.requests()
    assert (entry["operation"], entry["model"], entry["provider"]) == ("rerank", "rerank-v3.5", "cohere")


def test_v1_client_returns_documents(llmts_session: SessionClient) -> None:
    client = cohere.Client(base_url=f"{llmts_session.provider_base}/cohere", api_key="k")
    answer = client.rerank(query=QUERY, documents=DOCUMENTS, top_n=1, return_documents=True)
    (result,) = answer.results
    assert result.index == 1 and result.document is not None and result.document.text == DOCUMENTS[1]


def test_fixtures_script_the_ranking(app_session: SessionClient) -> None:
    app_session.configure(
        {
            "scenarios": [
                {
                    "responses": [
                        {
                            "rerank": [
                                {"index": 3, "relevance_score": 0.9},
                                {"index": 0, "relevance_score": 0.2},
                            ]
                        },
                        {"rerank": [{"index": 9, "relevance_score": 0.9}]},
                    ]
                }
            ]
        }
    )
    client = app_session.cohere_client()
    answer = client.rerank(model="rerank-v3.5", query=QUERY, documents=DOCUMENTS, top_n=1)
    assert [(r.index, r.relevance_score) for r in answer.results] == [(3, 0.9)]
    with pytest.raises(cohere.core.ApiError) as caught:  # 409: document 9 does not exist, nothing consumed
        client.rerank(model="rerank-v3.5", query=QUERY, documents=DOCUMENTS)
    assert caught.value.status_code == 409 and "ranks document 9" in caught.value.body["message"]


@pytest.mark.parametrize(
    ("kwargs", "rule"),
    [
        ({"documents": []}, "rerank_empty_input"),
        ({"query": ""}, "rerank_empty_input"),
        ({"top_n": 0}, "rerank_top_n"),
        ({"documents": ["d"] * 1001}, "rerank_too_many_documents"),
    ],
)
def test_requests_the_api_rejects(app_session: SessionClient, kwargs: dict[str, Any], rule: str) -> None:
    arguments = {"model": "rerank-v3.5", "query": QUERY, "documents": DOCUMENTS, **kwargs}
    with pytest.raises(cohere.BadRequestError) as caught:
        app_session.cohere_client().rerank(**arguments)
    assert rule in caught.value.body["message"]


def test_every_route_takes_text_objects_as_documents(app_session: SessionClient) -> None:
    """docs/rerank.md: documents are strings or ``{"text": ...}`` objects on every route, v2 too."""
    answer = app_session.cohere_client().rerank(
        model="rerank-v3.5",
        query=QUERY,
        documents=[{"text": text} for text in DOCUMENTS],  # type: ignore[misc]
    )
    assert len(answer.results) == len(DOCUMENTS)


def test_bedrock_rerank_models(llmts_session: SessionClient) -> None:
    client = llmts_session.bedrock_client(config=botocore.config.Config(retries={"total_max_attempts": 1}))
    for model, body in (
        ("cohere.rerank-v3-5:0", {"query": QUERY, "documents": DOCUMENTS, "top_n": 2, "api_version": 2}),
        ("amazon.rerank-v1:0", {"query": QUERY, "documents": DOCUMENTS}),
    ):
        answer = json.loads(client.invoke_model(modelId=model, body=json.dumps(body))["body"].read())
        assert set(answer) == {"id", "results"}  # docs/rerank.md
        assert [result["index"] for result in answer["results"]][:2] == [1, 0]
    assert [e["operation"] for e in llmts_session.requests()] == ["rerank", "rerank"]
