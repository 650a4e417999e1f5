"""OpenAI Responses native tool items (web_search, file_search, code_interpreter) as the official openai SDK
reads them with strict response validation, against a real server: the reference's file-search and
code-interpreter examples as JSON and SSE (``responses.create``, ``responses.stream``), include projection,
citations of each kind, web search actions, and stored continuation with native items."""

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
    SEED_FILE_TOOL,
    WEB_ITEMS,
    WEB_MODEL,
    WEB_TOOL,
    configure,
    items,
    # the ``client`` fixture: pytest finds it by name once it is imported here
    strict_responses_client,  # noqa: F401
)

pytestmark = pytest.mark.sdk


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
