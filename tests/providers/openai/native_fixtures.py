"""Shared ``items`` fixtures for the native-tool tests: the reference document's file-search and
code-interpreter examples, a web-search group, session configurations that pair each family with
its qualified model, and the strict openai SDK ``client`` fixture of the native-tool SDK tests."""

from __future__ import annotations

import copy
from typing import Any

import openai
import pytest

from llmts import SessionClient

FILE_MODEL = "gpt-4o-mini"
CODE_MODEL = "gpt-4.1"
WEB_MODEL = "gpt-4.1-mini"
MODELS = [WEB_MODEL, FILE_MODEL, CODE_MODEL]

FILE_ITEMS: list[dict[str, Any]] = [
    {
        "kind": "file_search",
        "id": "fs_fixture",
        "vector_store_ids": ["vs_fixture"],
        "queries": ["Paris fixture facts"],
        "results": [
            {
                "file_id": "file_source",
                "filename": "source.txt",
                "text": "Scripted Paris source",
                "score": 0.9,
                "attributes": {"category": "fixture", "year": 2026},
            }
        ],
    },
    {
        "kind": "message",
        "id": "msg_file",
        "content": "Paris fixture.",
        "citations": [{"kind": "file", "file_id": "file_source", "filename": "source.txt", "index": 5}],
    },
]

CODE_ITEMS: list[dict[str, Any]] = [
    {
        "kind": "code_interpreter",
        "id": "ci_fixture",
        "container_id": "cntr_fixture",
        "input_file_ids": ["file_input"],
        "generated_file_ids": ["file_plot"],
        "code": "print(42)\n",
        "code_chunks": ["print(", "42)\n"],
        "outputs": [
            {"kind": "logs", "logs": "42\n"},
            {"kind": "image", "url": "https://example.com/fixture.png"},
        ],
    },
    {
        "kind": "message",
        "id": "msg_code",
        "content": "42 fixture.",
        "citations": [
            {
                "kind": "container_file",
                "container_id": "cntr_fixture",
                "file_id": "file_plot",
                "filename": "plot.png",
                "start_index": 0,
                "end_index": 0,
            }
        ],
    },
]

WEB_ITEMS: list[dict[str, Any]] = [
    {
        "kind": "web_search",
        "id": "ws_fixture",
        "query": "Paris weather today",
        "sources": ["https://weather.example.com/paris", "https://news.example.org/paris"],
    },
    {
        "kind": "message",
        "id": "msg_web",
        "content": "Sunny in Paris.",
        "citations": [
            {
                "kind": "url",
                "url": "https://weather.example.com/paris",
                "title": "Paris weather",
                "start_index": 0,
                "end_index": 5,
            }
        ],
    },
]

FILE_TOOL: dict[str, Any] = {"type": "file_search", "vector_store_ids": ["vs_fixture"]}
CODE_TOOL: dict[str, Any] = {
    "type": "code_interpreter",
    "container": {"type": "auto", "file_ids": ["file_input"]},
}
WEB_TOOL: dict[str, Any] = {"type": "web_search"}
SEED_FILE_TOOL: dict[str, Any] = {
    "type": "file_search",
    "vector_store_ids": ["vs_fixture"],
    "max_num_results": 2,
    "ranking_options": {"ranker": "auto", "score_threshold": 0.5},
    "filters": {"type": "eq", "key": "category", "value": "fixture"},
}


def items(base: list[dict[str, Any]], **changes: Any) -> list[dict[str, Any]]:
    """A deep copy of ``base`` with the first native call item's fields changed."""
    copied = copy.deepcopy(base)
    copied[0].update(changes)
    return copied


def configure(
    session: SessionClient, *responses: list[dict[str, Any]], policy: str = "reject", **extra: Any
) -> None:
    """One scenario answering these ``items`` groups in order (to ``MODELS``, or ``models`` in ``extra``;
    ``models=None`` serves any model)."""
    extra.setdefault("models", MODELS)
    if extra["models"] is None:
        del extra["models"]
    session.configure(
        {
            "scenarios": [
                {"terminal_policy": policy, "responses": [{"items": group} for group in responses]}
            ],
            **extra,
        }
    )


@pytest.fixture(name="client")
def strict_responses_client(app_session: SessionClient) -> Any:
    """The openai SDK with strict response validation and no retries; skips on an SDK without Responses."""
    sdk = app_session.openai_client(_strict_response_validation=True, max_retries=0)
    if not hasattr(sdk, "responses"):
        pytest.skip(f"openai {openai.__version__} has no Responses API")
    return sdk
