"""OpenAI Responses native tools on the wire (raw HTTP, for what the SDK cannot send or hides): the filter
language with exact numbers (literal spellings, tiny/large numbers, signed zero), every request validation
boundary, exact SSE sequences and replays, other surfaces, and the journal's evidence."""

from __future__ import annotations

import json
from typing import Any

import pytest

from llmts import SessionClient
from tests.helpers import RawResponse
from tests.providers.openai.native_fixtures import (
    CODE_ITEMS,
    CODE_MODEL,
    CODE_TOOL,
    FILE_ITEMS,
    FILE_MODEL,
    FILE_TOOL,
    MODELS,
    WEB_ITEMS,
    WEB_MODEL,
    configure,
    items,
)
from tests.support.in_process import send_raw
from tests.support.openai_tokens import message_tokens, o200k

pytestmark = pytest.mark.sdk

RESPONSES = "/openai/v1/responses"
AUTH = {"Authorization": "Bearer k"}


def _post(session: SessionClient, body: Any, path: str = RESPONSES) -> RawResponse:
    return send_raw(session, "POST", path, body, AUTH)


def _events(body: bytes) -> list[dict[str, Any]]:
    events = []
    for block in body.decode().split("\n\n")[:-1]:
        event_line, data_line = block.split("\n")
        data = json.loads(data_line[len("data: ") :])
        assert event_line == "event: " + data["type"]
        events.append(data)
    assert [event["sequence_number"] for event in events] == list(range(len(events)))
    return events


# --- the filter language over HTTP, with exact numbers ---------------------------------------------------

ATTRIBUTES = (
    '{"category": "fixture", "year": 2026, "price": 9.99, "flag": true, "tiny": 1e-29, "huge": 1e300,'
    ' "zero": 0, "big_int": 9007199254740993, "label": "Beta", "precise": 0.10000000000000000001}'
)


def _configure_attributes(session: SessionClient) -> None:
    """Configured as raw JSON text, so ``precise`` keeps all of its digits."""
    group = items(FILE_ITEMS)
    group[0]["results"][0]["attributes"] = "@ATTRIBUTES@"
    config = json.dumps(
        {
            "models": MODELS,
            "scenarios": [{"terminal_policy": "repeat_last_response", "responses": [{"items": group}]}],
        }
    ).replace('"@ATTRIBUTES@"', ATTRIBUTES)
    headers = {"X-Llm-Test-Server-Session": session.id}
    if session.server.control_key:
        headers["Authorization"] = f"Bearer {session.server.control_key}"
    response = send_raw(session.server, "POST", "/admin-api/configure", config, headers)
    assert response.status == 200, response.body


def _search(session: SessionClient, filter_text: str) -> RawResponse:
    tool = '{"type": "file_search", "vector_store_ids": ["vs_fixture"], "filters": ' + filter_text + "}"
    body = '{"model": "gpt-4o-mini", "input": "x", "tools": [' + tool + "]}"
    return _post(session, body)


FILTER_CASES = [
    ('{"type": "eq", "key": "category", "value": "fixture"}', True),
    ('{"type": "eq", "key": "category", "value": "Fixture"}', False),
    ('{"type": "ne", "key": "category", "value": "other"}', True),
    ('{"type": "ne", "key": "category", "value": "fixture"}', False),
    ('{"type": "ne", "key": "absent", "value": "x"}', False),
    ('{"type": "ne", "key": "year", "value": "2026"}', False),
    ('{"type": "eq", "key": "flag", "value": true}', True),
    ('{"type": "eq", "key": "flag", "value": false}', False),
    ('{"type": "ne", "key": "flag", "value": false}', True),
    ('{"type": "eq", "key": "flag", "value": 1}', False),
    ('{"type": "gt", "key": "year", "value": 2025}', True),
    ('{"type": "gt", "key": "year", "value": 2026}', False),
    ('{"type": "gte", "key": "year", "value": 2026}', True),
    ('{"type": "lt", "key": "year", "value": 2027}', True),
    ('{"type": "lte", "key": "year", "value": 2025.999}', False),
    ('{"type": "gt", "key": "label", "value": "Alpha"}', True),
    ('{"type": "lt", "key": "label", "value": "alpha"}', True),
    ('{"type": "gte", "key": "label", "value": "Beta"}', True),
    ('{"type": "lte", "key": "label", "value": "Bet"}', False),
    ('{"type": "gt", "key": "label", "value": 1}', False),
    ('{"type": "in", "key": "category", "value": ["a", "fixture"]}', True),
    ('{"type": "in", "key": "category", "value": ["a", "b"]}', False),
    ('{"type": "nin", "key": "category", "value": ["a", "b"]}', True),
    ('{"type": "nin", "key": "category", "value": ["fixture"]}', False),
    ('{"type": "in", "key": "year", "value": [2025, 2.026E+3]}', True),
    ('{"type": "nin", "key": "year", "value": [1, 2]}', True),
    ('{"type": "in", "key": "year", "value": ["2026"]}', False),
    ('{"type": "nin", "key": "year", "value": ["2026"]}', False),
    ('{"type": "in", "key": "absent", "value": ["x"]}', False),
    ('{"type": "nin", "key": "absent", "value": ["x"]}', False),
    (
        '{"type": "and", "filters": [{"type": "eq", "key": "flag", "value": true},'
        ' {"type": "gt", "key": "year", "value": 2000}]}',
        True,
    ),
    (
        '{"type": "and", "filters": [{"type": "eq", "key": "flag", "value": true},'
        ' {"type": "gt", "key": "year", "value": 3000}]}',
        False,
    ),
    (
        '{"type": "or", "filters": [{"type": "eq", "key": "flag", "value": false},'
        ' {"type": "gt", "key": "year", "value": 2000}]}',
        True,
    ),
    (
        '{"type": "or", "filters": [{"type": "eq", "key": "flag", "value": false},'
        ' {"type": "and", "filters": [{"type": "lt", "key": "year", "value": 0}]}]}',
        False,
    ),
    ('{"type": "and", "filters": []}', True),
    ('{"type": "or", "filters": []}', False),
    # exact tiny numbers: binary floats would not tell some of these apart
    ('{"type": "eq", "key": "tiny", "value": 1e-29}', True),
    ('{"type": "eq", "key": "tiny", "value": 2e-29}', False),
    ('{"type": "lt", "key": "tiny", "value": 2e-29}', True),
    ('{"type": "gt", "key": "tiny", "value": 1e-30}', True),
    ('{"type": "eq", "key": "tiny", "value": 1.0e-29}', True),
    ('{"type": "eq", "key": "tiny", "value": 10E-30}', True),
    ('{"type": "eq", "key": "tiny", "value": 0.00000000000000000000000000001}', True),
    ('{"type": "eq", "key": "tiny", "value": 1.0000000000000000000001e-29}', False),
    ('{"type": "gt", "key": "tiny", "value": 0}', True),
    ('{"type": "eq", "key": "zero", "value": 1e-400}', False),
    # exact large numbers
    ('{"type": "eq", "key": "huge", "value": 1e300}', True),
    ('{"type": "eq", "key": "huge", "value": 1.0000000000000001e300}', False),
    ('{"type": "lt", "key": "huge", "value": 1.0000000000000001e300}', True),
    ('{"type": "eq", "key": "big_int", "value": 9007199254740992}', False),
    ('{"type": "eq", "key": "big_int", "value": 9007199254740993}', True),
    ('{"type": "eq", "key": "big_int", "value": 9007199254740993.0}', True),
    ('{"type": "gt", "key": "big_int", "value": 9007199254740992}', True),
    ('{"type": "in", "key": "big_int", "value": [9007199254740992, 9007199254740994]}', False),
    # signed zero and equivalent spellings
    ('{"type": "eq", "key": "zero", "value": -0.0}', True),
    ('{"type": "eq", "key": "zero", "value": -0}', True),
    ('{"type": "gt", "key": "zero", "value": -0.0}', False),
    ('{"type": "gte", "key": "zero", "value": -0}', True),
    ('{"type": "eq", "key": "zero", "value": 0e10}', True),
    ('{"type": "eq", "key": "year", "value": 2026.000}', True),
    ('{"type": "eq", "key": "year", "value": 202600e-2}', True),
    ('{"type": "eq", "key": "price", "value": 9.99}', True),
    ('{"type": "eq", "key": "price", "value": 9.990000000000000001}', False),
    # a fixture literal with more digits than a double holds
    ('{"type": "eq", "key": "precise", "value": 0.1}', False),
    ('{"type": "eq", "key": "precise", "value": 0.10000000000000000001}', True),
    ('{"type": "gt", "key": "precise", "value": 0.1}', True),
]


@pytest.mark.parametrize(("filter_text", "matches"), FILTER_CASES, ids=[c[0] for c in FILTER_CASES])
def test_filter_operator(app_session: SessionClient, filter_text: str, matches: bool) -> None:
    _configure_attributes(app_session)

    response = _search(app_session, filter_text)

    if matches:
        assert response.status == 200, response.body
        assert response.json()["output"][0]["id"] == "fs_fixture"
    else:
        assert response.status == 409, response.body
        error = response.json()["error"]
        assert (error["code"], error["param"]) == ("llm_test_server_fixture_mismatch", "tools[0].filters")


def test_configured_attributes_round_trip_as_json_numbers(app_session: SessionClient) -> None:
    _configure_attributes(app_session)

    attributes = app_session.configuration()["scenarios"][0]["responses"][0]["items"][0]["results"][0][
        "attributes"
    ]
    response = _post(
        app_session,
        {"model": FILE_MODEL, "input": "x", "tools": [FILE_TOOL], "include": ["file_search_call.results"]},
    )

    assert attributes["year"] == 2026 and attributes["tiny"] == 1e-29 and attributes["flag"] is True
    assert attributes["big_int"] == 9007199254740993 and attributes["precise"] == 0.1
    wire = response.json()["output"][0]["results"][0]["attributes"]
    assert wire == attributes


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

    response = _post(app_session, {"model": FILE_MODEL, "input": "x", "tools": [tool]})

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

    response = _post(app_session, {"model": model, "input": "x", "tools": tools, **extra})

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

    ok = _post(app_session, {"model": FILE_MODEL, "input": "x", "tools": [_file_tool(filters=fits)]})
    bad = _post(app_session, {"model": FILE_MODEL, "input": "x", "tools": [_file_tool(filters=too_many)]})

    assert ok.status == 200, ok.body
    assert bad.status == 400 and "128 nodes" in bad.json()["error"]["message"]


def test_prior_native_items_need_ids(app_session: SessionClient) -> None:
    configure(app_session, FILE_ITEMS)

    response = _post(
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


# --- wire shapes and streams -----------------------------------------------------------------------------


def test_code_interpreter_json_shape(app_session: SessionClient) -> None:
    configure(app_session, CODE_ITEMS)

    response = _post(
        app_session,
        {
            "model": CODE_MODEL,
            "input": "x",
            "tools": [CODE_TOOL],
            "include": ["code_interpreter_call.outputs"],
        },
    )

    call, message = response.json()["output"]
    assert call == {
        "id": "ci_fixture",
        "type": "code_interpreter_call",
        "status": "completed",
        "code": "print(42)\n",
        "container_id": "cntr_fixture",
        "outputs": [
            {"type": "logs", "logs": "42\n"},
            {"type": "image", "url": "https://example.com/fixture.png"},
        ],
    }
    assert message["content"][0]["annotations"] == [
        {
            "type": "container_file_citation",
            "container_id": "cntr_fixture",
            "file_id": "file_plot",
            "filename": "plot.png",
            "start_index": 0,
            "end_index": 0,
        }
    ]


def test_code_interpreter_sse_sequence_and_final_json(app_session: SessionClient) -> None:
    configure(app_session, CODE_ITEMS, CODE_ITEMS)
    request = {
        "model": CODE_MODEL,
        "input": "x",
        "tools": [CODE_TOOL],
        "include": ["code_interpreter_call.outputs"],
    }

    streamed = _post(app_session, {**request, "stream": True})
    plain = _post(app_session, request)

    events = _events(streamed.body)
    assert [(e["type"], e.get("item_id"), e.get("output_index")) for e in events[2:10]] == [
        ("response.output_item.added", None, 0),
        ("response.code_interpreter_call.in_progress", "ci_fixture", 0),
        ("response.code_interpreter_call_code.delta", "ci_fixture", 0),
        ("response.code_interpreter_call_code.delta", "ci_fixture", 0),
        ("response.code_interpreter_call_code.done", "ci_fixture", 0),
        ("response.code_interpreter_call.interpreting", "ci_fixture", 0),
        ("response.code_interpreter_call.completed", "ci_fixture", 0),
        ("response.output_item.done", None, 0),
    ]
    assert events[2]["item"] == {
        "id": "ci_fixture",
        "type": "code_interpreter_call",
        "status": "in_progress",
        "code": "",
        "container_id": "cntr_fixture",
        "outputs": None,
    }
    annotation = next(e for e in events if e["type"] == "response.output_text.annotation.added")
    assert annotation["annotation_index"] == 0 and annotation["annotation"]["file_id"] == "file_plot"
    completed = events[-1]["response"]
    expected = plain.json()
    assert completed["output"] == expected["output"] and completed["usage"] == expected["usage"]
    stored = send_raw(app_session, "GET", f"{RESPONSES}/{completed['id']}", None, AUTH)
    last_frame = streamed.body.split(b"\n\n")[-2]
    assert last_frame.endswith(b',"response":' + stored.body + b"}")  # byte-identical final JSON


def test_replay_stream_starting_after(app_session: SessionClient) -> None:
    configure(app_session, WEB_ITEMS)
    created = _post(app_session, {"model": WEB_MODEL, "input": "x", "tools": [{"type": "web_search"}]}).json()

    full = send_raw(app_session, "GET", f"{RESPONSES}/{created['id']}?stream=true", None, AUTH)
    tail = send_raw(
        app_session,
        "GET",
        f"{RESPONSES}/{created['id']}?stream=true&starting_after=5",
        None,
        AUTH,
    )

    events = _events(full.body)
    assert [e["type"] for e in events[3:6]] == [
        "response.web_search_call.in_progress",
        "response.web_search_call.searching",
        "response.web_search_call.completed",
    ]
    assert events[-1]["response"] == created
    assert tail.body.startswith(
        b'event: response.output_item.done\ndata: {"type":"response.output_item.done","sequence_number":6'
    )


def test_items_fixture_does_not_answer_other_providers(app_session: SessionClient) -> None:
    configure(app_session, FILE_ITEMS)

    anthropic = send_raw(
        app_session,
        "POST",
        "/anthropic/v1/messages",
        {"model": FILE_MODEL, "max_tokens": 10, "messages": [{"role": "user", "content": "x"}]},
        {"x-api-key": "k"},
    )
    served = _post(app_session, {"model": FILE_MODEL, "input": "x", "tools": [FILE_TOOL]})

    assert anthropic.status == 409
    assert "llm_test_server_fixture_mismatch" in anthropic.body.decode()
    assert served.status == 200


def test_journal_and_export_carry_declarations_results_and_citations(app_session: SessionClient) -> None:
    configure(app_session, FILE_ITEMS)
    _post(
        app_session,
        {
            "model": FILE_MODEL,
            "input": "x",
            "tools": [{**FILE_TOOL, "filters": {"type": "eq", "key": "year", "value": 2026}}],
            "include": ["file_search_call.results"],
            "stream": True,
        },
    )

    (entry,) = app_session.requests()
    exported = app_session.export()

    assert entry["success"] is True and entry["terminal_marker_observed"] is True
    assert entry.get("response_tool_calls", []) == []  # native calls are not function calls
    request_preview, response_preview = entry["request_preview"], entry["response_preview"]
    assert '"vector_store_ids":["vs_fixture"]' in request_preview.replace(" ", "")
    assert '"key":"year"' in request_preview.replace(" ", "")
    assert "file_search_call" in response_preview and '"file_source"' in response_preview
    assert "file_citation" in response_preview
    assert exported["requests"][0]["response_preview"] == response_preview


def test_declarations_are_part_of_the_prompt_identity(app_session: SessionClient) -> None:
    configure(app_session, FILE_ITEMS, FILE_ITEMS)
    narrow = [{**FILE_TOOL, "filters": {"type": "eq", "key": "category", "value": "fixture"}}]
    wide = [
        {**FILE_TOOL, "ranking_options": {"ranker": "default-2024-11-15"}, "filters": narrow[0]["filters"]}
    ]

    usages = [
        _post(app_session, {"model": FILE_MODEL, "input": "x", "tools": tools}).json()["usage"][
            "input_tokens"
        ]
        for tools in (narrow, wide)
    ]

    # A hosted tool counts as its compact JSON in the model's encoding (docs/tokens.md).
    compact = [json.dumps(tools[0], separators=(",", ":")) for tools in (narrow, wide)]
    assert usages == [3 + o200k(text) + message_tokens("x") for text in compact]
    assert usages[0] != usages[1]
