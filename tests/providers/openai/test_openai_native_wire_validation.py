"""OpenAI Responses native tools on the wire (raw HTTP, for what the SDK cannot send or hides): every
request validation boundary of the tool declarations (served at the limits, 400 naming the field past
them), the filter tree's node limit, and ids on prior native items."""

from __future__ import annotations

from typing import Any

import pytest

from llmts import SessionClient
from tests.providers.openai.native_fixtures import (
    CODE_MODEL,
    CODE_TOOL,
    FILE_ITEMS,
    FILE_MODEL,
    FILE_TOOL,
    WEB_MODEL,
    configure,
)
from tests.providers.openai.native_wire_support import post_raw

pytestmark = pytest.mark.sdk


# --- request validation boundaries -----------------------------------------------------------------------

_DEEP_OK: dict[str, Any] = {"type": "eq", "key": "category", "value": "fixture"}
for _ in range(7):
    _DEEP_OK = {"type": "and", "filters": [_DEEP_OK]}
_DEEP_BAD = {"type": "and", "filters": [_DEEP_OK]}
_LEAF = {"type": "eq", "key": "category", "value": "fixture"}


def _file_tool(**changes: Any) -> dict[str, Any]:
    return {**FILE_TOOL, **changes}


VALID_TOOLS = [
    _file_tool(max_num_results=1),
    _file_tool(max_num_results=50),
    _file_tool(ranking_options={}),
    _file_tool(ranking_options={"ranker": "default-2024-11-15", "score_threshold": 0}),
    _file_tool(ranking_options={"score_threshold": 0.9}),
    _file_tool(filters=None),
    _file_tool(filters=_DEEP_OK),
    _file_tool(filters={"type": "or", "filters": [_LEAF] * 127}),
    _file_tool(filters={"type": "in", "key": "category", "value": ["fixture"] * 128}),
    _file_tool(vector_store_ids=["vs_fixture"] * 128),
    _file_tool(vector_store_ids=["vs_fixture", "v" * 128]),
]


@pytest.mark.parametrize("tool", VALID_TOOLS, ids=[str(i) for i in range(len(VALID_TOOLS))])
def test_valid_file_search_declarations_are_served(app_session: SessionClient, tool: dict[str, Any]) -> None:
    configure(app_session, FILE_ITEMS)

    response = post_raw(app_session, {"model": FILE_MODEL, "input": "x", "tools": [tool]})

    assert response.status == 200, response.body
    assert response.json()["tools"] == [tool]


INVALID = [
    # (tools, extra body, param, code)
    ([_file_tool(max_num_results=0)], {}, "tools[0].max_num_results", "invalid_value"),
    ([_file_tool(max_num_results=51)], {}, "tools[0].max_num_results", "invalid_value"),
    ([_file_tool(max_num_results=None)], {}, "tools[0].max_num_results", "invalid_type"),
    ([_file_tool(max_num_results=2.5)], {}, "tools[0].max_num_results", "invalid_type"),
    ([_file_tool(max_num_results=True)], {}, "tools[0].max_num_results", "invalid_type"),
    ([_file_tool(ranking_options=None)], {}, "tools[0].ranking_options", "invalid_type"),
    ([_file_tool(ranking_options={"ranker": None})], {}, "tools[0].ranking_options.ranker", "invalid_value"),
    (
        [_file_tool(ranking_options={"ranker": "best"})],
        {},
        "tools[0].ranking_options.ranker",
        "invalid_value",
    ),
    (
        [_file_tool(ranking_options={"score_threshold": None})],
        {},
        "tools[0].ranking_options.score_threshold",
        "invalid_type",
    ),
    (
        [_file_tool(ranking_options={"score_threshold": 1.01})],
        {},
        "tools[0].ranking_options.score_threshold",
        "invalid_value",
    ),
    (
        [_file_tool(ranking_options={"score_threshold": -0.5})],
        {},
        "tools[0].ranking_options.score_threshold",
        "invalid_value",
    ),
    (
        [_file_tool(ranking_options={"hybrid_search": {"embedding_weight": 1, "text_weight": 1}})],
        {},
        "tools[0].ranking_options.hybrid_search",
        "unsupported_parameter",
    ),
    ([_file_tool(ranking_options={"speed": 1})], {}, "tools[0].ranking_options.speed", "unknown_parameter"),
    ([_file_tool(extra=True)], {}, "tools[0].extra", "unknown_parameter"),
    ([{"type": "file_search"}], {}, "tools[0].vector_store_ids", "missing_required_parameter"),
    ([_file_tool(vector_store_ids=None)], {}, "tools[0].vector_store_ids", "missing_required_parameter"),
    ([_file_tool(vector_store_ids="vs_fixture")], {}, "tools[0].vector_store_ids", "invalid_type"),
    ([_file_tool(vector_store_ids=["vs_fixture"] * 129)], {}, "tools[0].vector_store_ids", "invalid_value"),
    ([_file_tool(vector_store_ids=["v" * 129])], {}, "tools[0].vector_store_ids[0]", "invalid_value"),
    ([_file_tool(vector_store_ids=[""])], {}, "tools[0].vector_store_ids[0]", "invalid_value"),
    ([_file_tool(filters="eq")], {}, "tools[0].filters", "invalid_type"),
    (
        [_file_tool(filters={"type": "like", "key": "a", "value": "b"})],
        {},
        "tools[0].filters.type",
        "invalid_value",
    ),
    (
        [_file_tool(filters={"type": "eq", "key": "a", "value": "b", "x": 1})],
        {},
        "tools[0].filters.x",
        "unknown_parameter",
    ),
    (
        [_file_tool(filters={"type": "eq", "key": "a"})],
        {},
        "tools[0].filters.value",
        "missing_required_parameter",
    ),
    (
        [_file_tool(filters={"type": "eq", "key": " ", "value": 1})],
        {},
        "tools[0].filters.key",
        "invalid_value",
    ),
    (
        [_file_tool(filters={"type": "eq", "key": "k" * 65, "value": 1})],
        {},
        "tools[0].filters.key",
        "invalid_value",
    ),
    (
        [_file_tool(filters={"type": "eq", "key": "a", "value": None})],
        {},
        "tools[0].filters.value",
        "invalid_type",
    ),
    (
        [_file_tool(filters={"type": "eq", "key": "a", "value": ["b"]})],
        {},
        "tools[0].filters.value",
        "invalid_type",
    ),
    (
        [_file_tool(filters={"type": "gt", "key": "a", "value": True})],
        {},
        "tools[0].filters.value",
        "invalid_type",
    ),
    (
        [_file_tool(filters={"type": "lte", "key": "a", "value": False})],
        {},
        "tools[0].filters.value",
        "invalid_type",
    ),
    (
        [_file_tool(filters={"type": "in", "key": "a", "value": []})],
        {},
        "tools[0].filters.value",
        "invalid_type",
    ),
    (
        [_file_tool(filters={"type": "in", "key": "a", "value": "b"})],
        {},
        "tools[0].filters.value",
        "invalid_type",
    ),
    (
        [_file_tool(filters={"type": "in", "key": "a", "value": ["b", 1]})],
        {},
        "tools[0].filters.value",
        "invalid_type",
    ),
    (
        [_file_tool(filters={"type": "nin", "key": "a", "value": [True]})],
        {},
        "tools[0].filters.value",
        "invalid_type",
    ),
    (
        [_file_tool(filters={"type": "in", "key": "a", "value": [None]})],
        {},
        "tools[0].filters.value",
        "invalid_type",
    ),
    (
        [_file_tool(filters={"type": "in", "key": "a", "value": ["b"] * 129})],
        {},
        "tools[0].filters.value",
        "invalid_value",
    ),
    ([_file_tool(filters={"type": "and"})], {}, "tools[0].filters.filters", "invalid_type"),
    (
        [_file_tool(filters={"type": "and", "filters": [_LEAF], "key": "a"})],
        {},
        "tools[0].filters.key",
        "unknown_parameter",
    ),
    (
        [_file_tool(filters={"type": "or", "filters": [_LEAF] * 129})],
        {},
        "tools[0].filters.filters",
        "invalid_value",
    ),
    (
        [_file_tool(filters={"type": "or", "filters": [{"type": "and", "filters": [_LEAF] * 64}] * 2})],
        {},
        "tools[0].filters.filters[1].filters[61]",
        "invalid_value",
    ),
    (
        [_file_tool(filters=_DEEP_BAD)],
        {},
        "tools[0].filters" + ".filters[0]" * 8,
        "invalid_value",
    ),
    ([{"type": "code_interpreter"}], {}, "tools[0].container", "missing_required_parameter"),
    (
        [{"type": "code_interpreter", "container": None}],
        {},
        "tools[0].container",
        "missing_required_parameter",
    ),
    ([{"type": "code_interpreter", "container": ""}], {}, "tools[0].container", "invalid_value"),
    ([{"type": "code_interpreter", "container": "c" * 129}], {}, "tools[0].container", "invalid_value"),
    ([{"type": "code_interpreter", "container": 5}], {}, "tools[0].container", "invalid_type"),
    (
        [{"type": "code_interpreter", "container": {"type": "auto", "file_ids": None}}],
        {},
        "tools[0].container.file_ids",
        "invalid_type",
    ),
    (
        [{"type": "code_interpreter", "container": {"type": "manual"}}],
        {},
        "tools[0].container.type",
        "invalid_value",
    ),
    (
        [{"type": "code_interpreter", "container": {"type": "auto", "memory_limit": "4g"}}],
        {},
        "tools[0].container.memory_limit",
        "unsupported_parameter",
    ),
    (
        [{"type": "code_interpreter", "container": {"type": "auto", "network_policy": {"type": "disabled"}}}],
        {},
        "tools[0].container.network_policy",
        "unsupported_parameter",
    ),
    ([{**CODE_TOOL, "name": "x"}], {}, "tools[0].name", "unknown_parameter"),
    (
        [{"type": "web_search", "search_context_size": "huge"}],
        {},
        "tools[0].search_context_size",
        "invalid_value",
    ),
    (
        [{"type": "web_search", "filters": {"blocked_domains": []}}],
        {},
        "tools[0].filters.blocked_domains",
        "unknown_parameter",
    ),
    ([{"type": "web_search_preview", "filters": {}}], {}, "tools[0].filters", "unknown_parameter"),
    (
        [{"type": "web_search", "user_location": {"type": "exact"}}],
        {},
        "tools[0].user_location.type",
        "invalid_value",
    ),
    ([FILE_TOOL], {"include": ["file_search_call.everything"]}, "include[0]", "invalid_value"),
    ([FILE_TOOL], {"include": "file_search_call.results"}, "include", "invalid_type"),
    ([FILE_TOOL], {"tool_choice": {"type": "code_interpreter"}}, "tool_choice", "invalid_value"),
]


@pytest.mark.parametrize(
    ("tools", "extra", "param", "code"), INVALID, ids=[f"{i}-{case[2]}" for i, case in enumerate(INVALID)]
)
def test_invalid_declarations_are_400_naming_the_field(
    app_session: SessionClient, tools: list[Any], extra: dict[str, Any], param: str, code: str
) -> None:
    configure(app_session, FILE_ITEMS)
    model = (
        CODE_MODEL
        if tools[0]["type"] == "code_interpreter"
        else WEB_MODEL
        if "web" in tools[0]["type"]
        else FILE_MODEL
    )

    response = post_raw(app_session, {"model": model, "input": "x", "tools": tools, **extra})

    assert response.status == 400, response.body
    error = response.json()["error"]
    assert (error["param"], error["code"], error["type"]) == (param, code, "invalid_request_error")
    entry = app_session.requests()[0]
    assert entry["status"] == 400 and entry["error_code"] == code


def test_filter_node_limit_counts_the_whole_tree(app_session: SessionClient) -> None:
    configure(app_session, FILE_ITEMS, policy="repeat_last_response")
    # 1 root + 127 leaves = 128 nodes: served; one more leaf anywhere: 400
    fits = {"type": "or", "filters": [{"type": "or", "filters": [_LEAF] * 63}, *[_LEAF] * 63]}
    too_many = {"type": "or", "filters": [{"type": "or", "filters": [_LEAF] * 64}, *[_LEAF] * 63]}

    ok = post_raw(app_session, {"model": FILE_MODEL, "input": "x", "tools": [_file_tool(filters=fits)]})
    bad = post_raw(app_session, {"model": FILE_MODEL, "input": "x", "tools": [_file_tool(filters=too_many)]})

    assert ok.status == 200, ok.body
    assert bad.status == 400 and "128 nodes" in bad.json()["error"]["message"]


def test_prior_native_items_need_ids(app_session: SessionClient) -> None:
    configure(app_session, FILE_ITEMS)

    response = post_raw(
        app_session,
        {
            "model": WEB_MODEL,
            "input": [
                {"type": "file_search_call", "queries": [], "status": "completed"},
                {"role": "user", "content": "x"},
            ],
        },
    )

    assert response.status == 400
    assert response.json()["error"]["param"] == "input[0].id"
