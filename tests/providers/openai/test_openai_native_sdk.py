"""OpenAI Responses native tools (web_search, file_search, code_interpreter) through the official openai SDK
with strict response validation, against a real server: the reference's file-search and code-interpreter
examples as JSON and SSE (``responses.create``, ``responses.stream``), include projection, citations of each
kind, named tool choices, model pairing, stored continuation, Azure routes, and mismatches that consume
nothing."""

from __future__ import annotations

import typing
from typing import Any

import openai
import pytest

from llmts import SessionClient
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
    WEB_TOOL,
    configure,
    items,
)

pytestmark = pytest.mark.sdk

SEED_FILE_TOOL = {
    "type": "file_search",
    "vector_store_ids": ["vs_fixture"],
    "max_num_results": 2,
    "ranking_options": {"ranker": "auto", "score_threshold": 0.5},
    "filters": {"type": "eq", "key": "category", "value": "fixture"},
}


@pytest.fixture
def client(app_session: SessionClient) -> Any:
    sdk = app_session.openai_client(_strict_response_validation=True, max_retries=0)
    if not hasattr(sdk, "responses"):
        pytest.skip(f"openai {openai.__version__} has no Responses API")
    return sdk


def _dump(items: list[Any]) -> list[dict[str, Any]]:
    return [item.model_dump(exclude_none=False) for item in items]


# --- the reference examples ------------------------------------------------------------------------


def test_file_search_reference_example(app_session: SessionClient, client: Any) -> None:
    configure(app_session, FILE_ITEMS)

    response = client.responses.create(
        model=FILE_MODEL,
        input=[{"role": "user", "content": "Use the file fixture"}],
        tools=[SEED_FILE_TOOL],
        tool_choice={"type": "file_search"},
        include=["file_search_call.results"],
    )

    search, message = response.output
    assert (search.type, search.id, search.status) == ("file_search_call", "fs_fixture", "completed")
    assert search.queries == ["Paris fixture facts"]
    (result,) = search.results
    assert (result.file_id, result.filename, result.text, result.score) == (
        "file_source",
        "source.txt",
        "Scripted Paris source",
        0.9,
    )
    assert result.attributes == {"category": "fixture", "year": 2026}
    assert (message.type, message.id, message.role) == ("message", "msg_file", "assistant")
    (part,) = message.content
    assert part.text == "Paris fixture." == response.output_text
    (citation,) = part.annotations
    assert (citation.type, citation.file_id, citation.filename, citation.index) == (
        "file_citation",
        "file_source",
        "source.txt",
        5,
    )
    assert response.tool_choice.type == "file_search"
    assert response.tools[0].type == "file_search" and response.tools[0].ranking_options.ranker == "auto"
    assert response.usage.output_tokens == 5 + 4  # "Paris fixture facts" + "Paris fixture."


def test_code_interpreter_reference_example(app_session: SessionClient, client: Any) -> None:
    configure(app_session, CODE_ITEMS)

    response = client.responses.create(
        model=CODE_MODEL,
        input=[{"role": "user", "content": "Use the code fixture"}],
        tools=[CODE_TOOL],
        tool_choice="required",
        include=["code_interpreter_call.outputs"],
    )

    call, message = response.output
    assert (call.type, call.id, call.status, call.container_id) == (
        "code_interpreter_call",
        "ci_fixture",
        "completed",
        "cntr_fixture",
    )
    assert call.code == "print(42)\n"
    assert [(o.type, getattr(o, "logs", None), getattr(o, "url", None)) for o in call.outputs] == [
        ("logs", "42\n", None),
        ("image", None, "https://example.com/fixture.png"),
    ]
    (citation,) = message.content[0].annotations
    assert citation.type == "container_file_citation"
    assert (citation.container_id, citation.file_id, citation.filename) == (
        "cntr_fixture",
        "file_plot",
        "plot.png",
    )
    assert (citation.start_index, citation.end_index) == (0, 0)


def test_code_interpreter_explicit_container_and_named_choice(
    app_session: SessionClient, client: Any
) -> None:
    configure(app_session, CODE_ITEMS)

    response = client.responses.create(
        model=CODE_MODEL,
        input="Use the code fixture",
        tools=[{"type": "code_interpreter", "container": "cntr_fixture"}],
        tool_choice={"type": "code_interpreter"},
    )

    assert response.output[0].container_id == "cntr_fixture"
    assert response.output[0].outputs is None  # not included


# --- streams -----------------------------------------------------------------------------------------


def test_file_search_stream_helper_final_response_equals_json(
    app_session: SessionClient, client: Any
) -> None:
    configure(app_session, FILE_ITEMS, policy="repeat_last_response")
    request = {
        "model": FILE_MODEL,
        "input": "Use the file fixture",
        "tools": [SEED_FILE_TOOL],
        "include": ["file_search_call.results"],
    }

    with client.responses.stream(**request) as stream:
        events = list(stream)
        final = stream.get_final_response()
    plain = client.responses.create(**request)

    assert [event.type for event in events] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.file_search_call.in_progress",
        "response.file_search_call.searching",
        "response.file_search_call.completed",
        "response.output_item.done",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.annotation.added",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    added = events[2].item
    assert (added.type, added.status, added.results) == ("file_search_call", "in_progress", None)
    annotation = events[10]
    cited = annotation.annotation  # a model in openai >= 2, a plain dict in 1.x
    assert annotation.annotation_index == 0
    assert (cited["file_id"] if isinstance(cited, dict) else cited.file_id) == "file_source"
    assert final.output[0].model_dump() == plain.output[0].model_dump()
    assert final.output[1].content[0].annotations == plain.output[1].content[0].annotations
    assert final.output_text == plain.output_text == "Paris fixture."
    assert final.usage == plain.usage
    assert client.responses.retrieve(final.id).output[0].model_dump() == plain.output[0].model_dump()


def test_code_interpreter_stream_events(app_session: SessionClient, client: Any) -> None:
    configure(app_session, CODE_ITEMS)

    stream = client.responses.create(
        model=CODE_MODEL,
        input="Use the code fixture",
        tools=[CODE_TOOL],
        include=["code_interpreter_call.outputs"],
        stream=True,
    )
    events = list(stream)

    kinds = [event.type for event in events]
    assert kinds[:9] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.code_interpreter_call.in_progress",
        "response.code_interpreter_call_code.delta",
        "response.code_interpreter_call_code.delta",
        "response.code_interpreter_call_code.done",
        "response.code_interpreter_call.interpreting",
        "response.code_interpreter_call.completed",
    ]
    assert [e.delta for e in events if e.type == "response.code_interpreter_call_code.delta"] == [
        "print(",
        "42)\n",
    ]
    assert events[6].code == "print(42)\n"
    assert events[2].item.code == "" and events[2].item.container_id == "cntr_fixture"
    done = events[9]
    assert done.type == "response.output_item.done" and done.item.outputs[0].logs == "42\n"
    assert "response.output_text.annotation.added" in kinds
    assert kinds[-1] == "response.completed"
    assert events[-1].response.output[0].outputs[1].url == "https://example.com/fixture.png"
    (entry,) = app_session.requests()
    assert entry["terminal_marker_observed"] is True and entry["transport_outcome"] == "completed"


def test_null_code_streams_no_code_events_and_empty_outputs_stay_empty(
    app_session: SessionClient, client: Any
) -> None:
    group = items(CODE_ITEMS, code=None, code_chunks=None, outputs=[])
    configure(app_session, group, group, group)
    request = {"model": CODE_MODEL, "input": "x", "tools": [CODE_TOOL]}

    with client.responses.stream(**request, include=["code_interpreter_call.outputs"]) as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_response()
    included = client.responses.create(**request, include=["code_interpreter_call.outputs"])
    excluded = client.responses.create(**request)

    assert not any(kind.startswith("response.code_interpreter_call_code") for kind in kinds)
    assert "response.code_interpreter_call.interpreting" in kinds
    assert final.output[0].code is None and final.output[0].outputs == []
    assert included.output[0].code is None and included.output[0].outputs == []
    assert excluded.output[0].outputs is None


# --- include projection and citations ------------------------------------------------------------------


def test_include_off_omits_results_and_outputs_but_keeps_citations(
    app_session: SessionClient, client: Any
) -> None:
    configure(app_session, FILE_ITEMS, CODE_ITEMS, FILE_ITEMS)

    search = client.responses.with_raw_response.create(model=FILE_MODEL, input="x", tools=[FILE_TOOL])
    code = client.responses.create(model=CODE_MODEL, input="x", tools=[CODE_TOOL])
    included = client.responses.create(
        model=FILE_MODEL, input="x", tools=[FILE_TOOL], include=["file_search_call.results"]
    )

    body = search.http_response.json()
    assert "results" not in body["output"][0]  # the optional field is absent, not null
    assert body["output"][1]["content"][0]["annotations"][0]["type"] == "file_citation"
    assert code.output[0].outputs is None and code.output[0].code == "print(42)\n"
    assert code.output[1].content[0].annotations[0].file_id == "file_plot"
    assert included.output[0].results[0].file_id == "file_source"


def test_results_keep_their_optional_fields_absent(app_session: SessionClient, client: Any) -> None:
    group = items(FILE_ITEMS, results=[{"file_id": "file_source"}, {"file_id": "file_b", "score": 1}])
    group[1]["citations"] = [
        {"kind": "file", "file_id": "file_source", "filename": "any-name.txt", "index": 0}
    ]
    configure(app_session, group)

    raw = client.responses.with_raw_response.create(
        model=FILE_MODEL, input="x", tools=[FILE_TOOL], include=["file_search_call.results"]
    )

    results = raw.http_response.json()["output"][0]["results"]
    assert results == [{"file_id": "file_source"}, {"file_id": "file_b", "score": 1.0}]
    assert raw.parse().output[1].content[0].annotations[0].filename == "any-name.txt"


def test_citations_of_each_kind_keep_their_order(app_session: SessionClient, client: Any) -> None:
    file_group = items(FILE_ITEMS)
    file_group[1] = {
        "kind": "message",
        "content": "See source and web.",
        "citations": [
            {"kind": "file", "file_id": "file_source", "filename": "source.txt", "index": 10},
            {"kind": "url", "url": "https://example.com/a", "title": "A", "start_index": 15, "end_index": 18},
            {"kind": "file", "file_id": "file_source", "filename": "source.txt", "index": 0},
        ],
    }
    configure(app_session, file_group, CODE_ITEMS, WEB_ITEMS)

    file_answer = client.responses.create(model=FILE_MODEL, input="x", tools=[FILE_TOOL])
    code_answer = client.responses.create(model=CODE_MODEL, input="x", tools=[CODE_TOOL])
    web_answer = client.responses.create(model=WEB_MODEL, input="x", tools=[WEB_TOOL])

    annotations = file_answer.output[1].content[0].annotations
    assert [a.type for a in annotations] == ["file_citation", "url_citation", "file_citation"]
    assert [getattr(a, "index", None) for a in annotations] == [10, None, 0]
    assert (
        annotations[1].url,
        annotations[1].title,
        annotations[1].start_index,
        annotations[1].end_index,
    ) == (
        "https://example.com/a",
        "A",
        15,
        18,
    )
    assert file_answer.output[1].id.startswith("msg_")  # generated id
    assert code_answer.output[1].content[0].annotations[0].type == "container_file_citation"
    url = web_answer.output[1].content[0].annotations[0]
    assert (url.type, url.url, url.start_index, url.end_index) == (
        "url_citation",
        "https://weather.example.com/paris",
        0,
        5,
    )


def test_stream_announces_each_citation_in_order(app_session: SessionClient, client: Any) -> None:
    group = items(FILE_ITEMS)
    group[1] = {
        "kind": "message",
        "content": "One two three.",
        "chunks": ["One ", "two ", "three."],
        "citations": [
            {"kind": "url", "url": "https://example.com/2", "title": "2", "start_index": 4, "end_index": 7},
            {"kind": "file", "file_id": "file_source", "filename": "source.txt", "index": 0},
        ],
    }
    configure(app_session, group)

    with client.responses.stream(model=FILE_MODEL, input="x", tools=[FILE_TOOL]) as stream:
        events = [event for event in stream if event.type.startswith("response.output_text")]
        final = stream.get_final_response()

    assert [(e.type.rsplit(".", 2)[-2:], getattr(e, "delta", None)) for e in events] == [
        (["output_text", "delta"], "One "),
        (["output_text", "delta"], "two "),
        (["annotation", "added"], None),
        (["annotation", "added"], None),
        (["output_text", "delta"], "three."),
        (["output_text", "done"], None),
    ]
    assert [events[2].annotation_index, events[3].annotation_index] == [0, 1]
    assert [a.type for a in final.output[1].content[0].annotations] == ["url_citation", "file_citation"]


# --- web search regression ------------------------------------------------------------------------------


def test_web_search_json_and_sources_include(app_session: SessionClient, client: Any) -> None:
    configure(app_session, WEB_ITEMS, policy="repeat_last_response")

    plain = client.responses.create(model=WEB_MODEL, input="Weather in Paris?", tools=[WEB_TOOL])
    sourced = client.responses.create(
        model=WEB_MODEL,
        input="Weather in Paris?",
        tools=[{"type": "web_search_preview", "search_context_size": "low"}],
        tool_choice={"type": "web_search_preview"},
        include=["web_search_call.action.sources"],
    )

    call = plain.output[0]
    assert (call.type, call.id, call.status) == ("web_search_call", "ws_fixture", "completed")
    assert (call.action.type, call.action.query, call.action.sources) == (
        "search",
        "Paris weather today",
        None,
    )
    assert [s.url for s in sourced.output[0].action.sources] == [
        "https://weather.example.com/paris",
        "https://news.example.org/paris",
    ]
    assert plain.output_text == "Sunny in Paris."


def _sdk_spells_find_in_page() -> bool:
    """openai 1.x types the find action as ``find``; the API and later SDKs say ``find_in_page``."""
    from openai.types.responses import response_function_web_search as web

    return "find_in_page" in typing.get_args(web.ActionFind.model_fields["type"].annotation)


def test_web_search_actions_and_stream(app_session: SessionClient, client: Any) -> None:
    if not _sdk_spells_find_in_page():
        pytest.skip(f"openai {openai.__version__} spells the find_in_page action 'find'")
    open_page = [{"kind": "web_search", "action": "open_page", "url": "https://example.com/page"}]
    find = [
        {
            "kind": "web_search",
            "action": "find_in_page",
            "url": "https://example.com/page",
            "pattern": "rain",
        },
        {"kind": "message", "content": "No rain."},
    ]
    configure(app_session, open_page, find)

    opened = client.responses.create(model=WEB_MODEL, input="x", tools=[WEB_TOOL])
    with client.responses.stream(model=WEB_MODEL, input="x", tools=[WEB_TOOL]) as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_response()

    assert (
        opened.output[0].action.type == "open_page"
        and opened.output[0].action.url == "https://example.com/page"
    )
    assert opened.output[0].id.startswith("ws_")
    assert kinds[:7] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.web_search_call.in_progress",
        "response.web_search_call.searching",
        "response.web_search_call.completed",
        "response.output_item.done",
    ]
    assert (final.output[0].action.type, final.output[0].action.pattern) == ("find_in_page", "rain")
    assert final.output_text == "No rain."


def test_web_search_allowed_domains_mismatch_consumes_nothing(
    app_session: SessionClient, client: Any
) -> None:
    configure(app_session, WEB_ITEMS)
    narrow = {"type": "web_search", "filters": {"allowed_domains": ["weather.example.com"]}}
    wide = {"type": "web_search", "filters": {"allowed_domains": ["example.com", "example.org"]}}

    with pytest.raises(openai.ConflictError) as caught:
        client.responses.create(model=WEB_MODEL, input="x", tools=[narrow])
    answer = client.responses.create(
        model=WEB_MODEL, input="x", tools=[wide], include=["web_search_call.action.sources"]
    )

    assert caught.value.code == "llm_test_server_fixture_mismatch"
    assert caught.value.param == "tools[0].filters.allowed_domains"
    assert "news.example.org" in caught.value.message
    assert len(answer.output[0].action.sources) == 2


# --- tool choice and model pairing ------------------------------------------------------------------------


def test_tool_choice_is_checked_against_the_ordered_fixture(app_session: SessionClient, client: Any) -> None:
    message_only = [{"kind": "message", "content": "No search needed."}]
    configure(app_session, FILE_ITEMS, message_only)

    with pytest.raises(openai.ConflictError) as none_choice:
        client.responses.create(model=FILE_MODEL, input="x", tools=[FILE_TOOL], tool_choice="none")
    with pytest.raises(openai.ConflictError) as forced_function:
        client.responses.create(
            model=FILE_MODEL,
            input="x",
            tools=[FILE_TOOL, {"type": "function", "name": "lookup", "parameters": {"type": "object"}}],
            tool_choice={"type": "function", "name": "lookup"},
        )
    first = client.responses.create(model=FILE_MODEL, input="x", tools=[FILE_TOOL], tool_choice="required")
    with pytest.raises(openai.ConflictError) as required:
        client.responses.create(model=FILE_MODEL, input="x", tools=[FILE_TOOL], tool_choice="required")
    with pytest.raises(openai.ConflictError) as named:
        client.responses.create(
            model=FILE_MODEL, input="x", tools=[FILE_TOOL], tool_choice={"type": "file_search"}
        )
    second = client.responses.create(model=FILE_MODEL, input="x", tools=[FILE_TOOL], tool_choice="none")

    assert none_choice.value.param == forced_function.value.param == "tool_choice"
    assert "tool_choice to none" in none_choice.value.message
    assert "requires a tool call" in required.value.message
    assert "forces the file_search tool" in named.value.message
    assert first.output[0].type == "file_search_call"
    assert second.output_text == "No search needed."


def test_named_native_choice_rejects_text_and_function_fixtures(
    app_session: SessionClient, client: Any
) -> None:
    app_session.configure(
        {
            "models": MODELS,
            "scenarios": [{"responses": [{"tool_calls": [{"name": "lookup"}]}, {"text": "plain"}]}],
        }
    )
    tools = [FILE_TOOL, {"type": "function", "name": "lookup", "parameters": {"type": "object"}}]

    with pytest.raises(openai.ConflictError) as caught:
        client.responses.create(model=FILE_MODEL, input="x", tools=tools, tool_choice={"type": "file_search"})

    assert "forces the file_search tool" in caught.value.message
    assert client.responses.create(model=FILE_MODEL, input="x", tools=tools).output[0].name == "lookup"


@pytest.mark.parametrize(
    ("model", "tools"),
    [
        ("gpt-5.4", [WEB_TOOL]),  # the spec's own examples
        ("gpt-4.1", [FILE_TOOL]),
        ("gpt-4o", [CODE_TOOL]),
        ("gpt-4o", [WEB_TOOL, FILE_TOOL, CODE_TOOL]),
        ("o3", [{"type": "web_search_preview"}, CODE_TOOL]),
        ("gpt-4.1-nano", [FILE_TOOL, CODE_TOOL]),
        ("some-future-model", [WEB_TOOL]),
    ],
    ids=["web-gpt-5.4", "file-gpt-4.1", "code-gpt-4o", "all-three", "o3", "nano-file-code", "unknown-model"],
)
def test_every_model_the_real_api_serves_takes_native_tools(
    app_session: SessionClient, client: Any, model: str, tools: list[Any]
) -> None:
    app_session.configure({"scenarios": [{"responses": [{"text": "Answered without a tool."}]}]})

    answer = client.responses.create(model=model, input="x", tools=tools)

    assert answer.output_text == "Answered without a tool." and answer.model == model


@pytest.mark.parametrize(
    ("model", "tools", "extra", "param", "words"),
    [
        ("gpt-4.1-nano", [WEB_TOOL], {}, "tools[0]", "not supported with gpt-4.1-nano"),
        ("gpt-4.1-nano-2025-04-14", [FILE_TOOL, WEB_TOOL], {}, "tools[1]", "not supported"),
        ("gpt-5", [WEB_TOOL], {"reasoning": {"effort": "minimal"}}, "tools[0]", "reasoning.effort 'minimal'"),
        (
            FILE_MODEL,
            [FILE_TOOL],
            {"tool_choice": {"type": "code_interpreter"}},
            "tool_choice",
            "declares no",
        ),
    ],
    ids=["web-on-nano", "web-on-nano-snapshot", "web-at-minimal-effort", "undeclared-choice"],
)
def test_documented_refusals_are_400_and_consume_nothing(
    app_session: SessionClient,
    client: Any,
    model: str,
    tools: list[Any],
    extra: Any,
    param: str,
    words: str,
) -> None:
    configure(app_session, FILE_ITEMS, models=None)

    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model=model, input="x", tools=tools, **extra)

    assert caught.value.param == param and words in caught.value.message
    assert (
        client.responses.create(model=FILE_MODEL, input="x", tools=[FILE_TOOL]).output[0].id == "fs_fixture"
    )


def test_refusals_are_strict_rules(app_session: SessionClient, client: Any) -> None:
    """``strict_requests: false`` accepts what the real API refuses, like every strict rule."""
    app_session.configure({"strict_requests": False, "scenarios": [{"responses": [{"text": "Lenient."}]}]})

    answer = client.responses.create(model="gpt-4.1-nano", input="x", tools=[WEB_TOOL])

    assert answer.output_text == "Lenient."


# --- mismatches never consume ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "param", "words"),
    [
        ({**FILE_TOOL, "vector_store_ids": ["vs_other"]}, "tools[0].vector_store_ids", "vs_fixture"),
        ({**FILE_TOOL, "vector_store_ids": []}, "tools[0].vector_store_ids", "vs_fixture"),
        (
            {**FILE_TOOL, "ranking_options": {"score_threshold": 0.95}},
            "tools[0].ranking_options.score_threshold",
            "below",
        ),
        (
            {**FILE_TOOL, "filters": {"type": "eq", "key": "category", "value": "other"}},
            "tools[0].filters",
            "match",
        ),
        ({**FILE_TOOL, "filters": {"type": "gt", "key": "missing", "value": 1}}, "tools[0].filters", "match"),
    ],
    ids=["foreign-store", "no-stores", "threshold", "filter", "missing-attribute"],
)
def test_file_search_mismatch_consumes_nothing(
    app_session: SessionClient, client: Any, tool: dict[str, Any], param: str, words: str
) -> None:
    configure(app_session, FILE_ITEMS)

    with pytest.raises(openai.ConflictError) as caught:
        client.responses.create(model=FILE_MODEL, input="x", tools=[tool])
    answer = client.responses.create(
        model=FILE_MODEL,
        input="x",
        tools=[{**FILE_TOOL, "vector_store_ids": ["vs_x", "vs_fixture", "vs_fixture"]}],
    )

    assert caught.value.code == "llm_test_server_fixture_mismatch"
    assert caught.value.param == param and words in caught.value.message
    assert caught.value.response.headers["x-should-retry"] == "false"
    assert answer.output[0].id == "fs_fixture"


def test_max_num_results_must_already_fit(app_session: SessionClient, client: Any) -> None:
    two = items(FILE_ITEMS, results=[{"file_id": "file_source"}, {"file_id": "file_two"}])
    configure(app_session, two)

    with pytest.raises(openai.ConflictError) as caught:
        client.responses.create(model=FILE_MODEL, input="x", tools=[{**FILE_TOOL, "max_num_results": 1}])
    answer = client.responses.create(model=FILE_MODEL, input="x", tools=[{**FILE_TOOL, "max_num_results": 2}])

    assert caught.value.param == "tools[0].max_num_results"
    assert answer.output[0].id == "fs_fixture"


@pytest.mark.parametrize(
    ("container", "param"),
    [
        ("cntr_other", "tools[0].container"),
        ({"type": "auto"}, "tools[0].container.file_ids"),
        ({"type": "auto", "file_ids": ["file_input", "file_extra"]}, "tools[0].container.file_ids"),
    ],
    ids=["foreign-container", "no-files", "extra-file"],
)
def test_code_interpreter_mismatch_consumes_nothing(
    app_session: SessionClient, client: Any, container: Any, param: str
) -> None:
    configure(app_session, CODE_ITEMS)

    with pytest.raises(openai.ConflictError) as caught:
        client.responses.create(
            model=CODE_MODEL, input="x", tools=[{"type": "code_interpreter", "container": container}]
        )
    answer = client.responses.create(
        model=CODE_MODEL,
        input="x",
        tools=[
            {
                "type": "code_interpreter",
                "container": {"type": "auto", "file_ids": ["file_input", "file_input"]},
            }
        ],
    )

    assert caught.value.param == param
    assert answer.output[0].container_id == "cntr_fixture"


def test_undeclared_family_and_other_surfaces_consume_nothing(
    app_session: SessionClient, client: Any
) -> None:
    configure(app_session, FILE_ITEMS)

    with pytest.raises(openai.ConflictError) as undeclared:
        client.responses.create(model=FILE_MODEL, input="x")
    with pytest.raises(openai.ConflictError) as chat:
        client.chat.completions.create(model=FILE_MODEL, messages=[{"role": "user", "content": "x"}])
    answer = client.responses.create(model=FILE_MODEL, input="x", tools=[FILE_TOOL])

    assert undeclared.value.param == "tools" and "declares no file_search tool" in undeclared.value.message
    assert "only OpenAI Responses requests" in chat.value.message
    assert answer.output[0].id == "fs_fixture"


def test_chat_completions_reject_native_declarations(app_session: SessionClient, client: Any) -> None:
    configure(app_session, FILE_ITEMS)

    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(
            model=FILE_MODEL,
            messages=[{"role": "user", "content": "x"}],
            tools=[{"type": "file_search", "vector_store_ids": ["vs_fixture"]}],
        )

    assert caught.value.param == "tools[0].type" and "Responses API tool" in caught.value.message


# --- history ----------------------------------------------------------------------------------------------


def test_stored_continuation_with_previous_response_id_and_replay(
    app_session: SessionClient, client: Any
) -> None:
    app_session.configure(
        {
            "models": MODELS,
            "scenarios": [{"responses": [{"items": FILE_ITEMS}, {"text": "Follow-up."}]}],
        }
    )

    first = client.responses.create(
        model=FILE_MODEL,
        input="Use the file fixture",
        tools=[FILE_TOOL],
        include=["file_search_call.results"],
    )
    second = client.responses.create(
        model=WEB_MODEL,
        input="And then?",
        previous_response_id=first.id,
        include=["file_search_call.results"],  # a selector alone does not re-qualify a past tool
    )
    retrieved = client.responses.retrieve(first.id)
    replay = list(client.responses.retrieve(first.id, stream=True))

    assert second.output_text == "Follow-up." and second.previous_response_id == first.id
    assert retrieved.output[0].model_dump() == first.output[0].model_dump()
    assert retrieved.output[1].content[0].annotations == first.output[1].content[0].annotations
    assert [event.type for event in replay][3:6] == [
        "response.file_search_call.in_progress",
        "response.file_search_call.searching",
        "response.file_search_call.completed",
    ]
    assert replay[-1].response.output[0].results[0].file_id == "file_source"
    second_request = app_session.requests(order="asc")[1]
    assert second_request["model"] == WEB_MODEL and second_request["success"] is True


def test_explicit_prior_native_items_continue_the_conversation(
    app_session: SessionClient, client: Any
) -> None:
    app_session.configure(
        {
            "models": MODELS,
            "scenarios": [{"responses": [{"items": CODE_ITEMS}, {"text": "Plotted."}]}],
        }
    )
    first = client.responses.create(
        model=CODE_MODEL, input="Plot it", tools=[CODE_TOOL], include=["code_interpreter_call.outputs"]
    )

    second = client.responses.create(
        model=WEB_MODEL,
        input=[{"role": "user", "content": "Plot it"}, *first.output, {"role": "user", "content": "Thanks"}],
        store=True,
    )
    listed = list(client.responses.input_items.list(second.id, order="asc"))

    assert second.output_text == "Plotted."
    assert [item.type for item in listed] == ["message", "code_interpreter_call", "message", "message"]
    assert listed[1].id == "ci_fixture" and listed[1].container_id == "cntr_fixture"


# --- Azure ------------------------------------------------------------------------------------------------


def _azure_config(session: SessionClient, *groups: list[dict[str, Any]]) -> None:
    configure(
        session,
        *groups,
        models=[*MODELS, "gpt-4.1-nano"],
        azure_deployments={
            "files": FILE_MODEL,
            "coder": CODE_MODEL,
            "searcher": WEB_MODEL,
            "small": "gpt-4.1-nano",
        },
    )


def test_azure_openai_client_serves_native_items_through_deployments(app_session: SessionClient) -> None:
    _azure_config(app_session, FILE_ITEMS, CODE_ITEMS, WEB_ITEMS)
    azure = app_session.azure_openai_client(_strict_response_validation=True, max_retries=0)

    search = azure.responses.create(
        model="files", input="x", tools=[SEED_FILE_TOOL], include=["file_search_call.results"]
    )
    with azure.responses.stream(
        model="coder", input="x", tools=[CODE_TOOL], include=["code_interpreter_call.outputs"]
    ) as stream:
        code = stream.get_final_response()
    web = azure.responses.create(model="searcher", input="x", tools=[WEB_TOOL])

    assert search.model == FILE_MODEL and search.output[0].results[0].file_id == "file_source"
    assert code.output[0].container_id == "cntr_fixture" and code.output[0].outputs[0].logs == "42\n"
    assert web.output[0].type == "web_search_call"
    assert {entry["provider"] for entry in app_session.requests()} == {"azure-openai"}


def test_azure_v1_base_url_and_deployment_pairing(llmts_session: SessionClient) -> None:
    _azure_config(llmts_session, FILE_ITEMS)
    v1 = openai.OpenAI(
        base_url=f"{llmts_session.provider_base}/azure-openai/openai/v1",
        api_key="azure-key",
        _strict_response_validation=True,
        max_retries=0,
    )

    with pytest.raises(openai.BadRequestError) as caught:
        v1.responses.create(model="small", input="x", tools=[WEB_TOOL])
    response = v1.responses.create(model="files", input="x", tools=[FILE_TOOL])

    assert caught.value.param == "tools[0]" and "gpt-4.1-nano" in caught.value.message
    assert response.output[1].content[0].annotations[0].file_id == "file_source"
    retrieved = v1.responses.retrieve(response.id)
    assert retrieved.output[0].id == "fs_fixture"


def test_conversation_step_with_items_is_not_consumed_by_a_mismatch(app_session: SessionClient) -> None:
    app_session.configure(
        {
            "models": MODELS,
            "conversations": [
                {
                    "id": "research",
                    "steps": [
                        {
                            "id": "search",
                            "when": {"turn": 1},
                            "response": {"items": FILE_ITEMS},
                            "then": ["done"],
                        },
                        {"id": "done", "when": {"turn": 2}, "response": {"text": "Done."}, "complete": True},
                    ],
                }
            ],
        }
    )
    conversation = app_session.for_conversation("c1")
    client = conversation.openai_client(_strict_response_validation=True, max_retries=0)

    with pytest.raises(openai.ConflictError) as caught:
        client.responses.create(
            model=FILE_MODEL, input="Find it", tools=[{**FILE_TOOL, "vector_store_ids": ["vs_elsewhere"]}]
        )
    first = client.responses.create(model=FILE_MODEL, input="Find it", tools=[FILE_TOOL])
    second = client.responses.create(model=FILE_MODEL, input="Thanks", previous_response_id=first.id)

    assert caught.value.code == "llm_test_server_fixture_mismatch"
    assert first.output[0].id == "fs_fixture" and second.output_text == "Done."
    (state,) = conversation.conversations()
    assert state["executed_steps"] == ["search", "done"]
