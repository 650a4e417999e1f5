"""OpenAI Responses native tools on the wire (raw HTTP, for what the SDK cannot send or hides): exact JSON
shapes and SSE sequences, replays, other surfaces, and the journal's evidence."""

from __future__ import annotations

import json
from typing import Any

import pytest

from llmts import SessionClient
from tests.providers.openai.native_fixtures import (
    CODE_ITEMS,
    CODE_MODEL,
    CODE_TOOL,
    FILE_ITEMS,
    FILE_MODEL,
    FILE_TOOL,
    WEB_ITEMS,
    WEB_MODEL,
    configure,
)
from tests.providers.openai.native_wire_support import AUTH, RESPONSES, post_raw
from tests.support.in_process import send_raw
from tests.support.openai_tokens import message_tokens, o200k
from tests.support.sse import typed_events

pytestmark = pytest.mark.sdk


def _events(body: bytes) -> list[dict[str, Any]]:
    """The events' data, numbered from 0 by ``sequence_number``."""
    events = [data for _, data in typed_events(body)]
    assert [event["sequence_number"] for event in events] == list(range(len(events)))
    return events


# --- wire shapes and streams -----------------------------------------------------------------------------


def test_code_interpreter_json_shape(app_session: SessionClient) -> None:
    configure(app_session, CODE_ITEMS)

    response = post_raw(
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

    streamed = post_raw(app_session, {**request, "stream": True})
    plain = post_raw(app_session, request)

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
    created = post_raw(
        app_session, {"model": WEB_MODEL, "input": "x", "tools": [{"type": "web_search"}]}
    ).json()

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
    served = post_raw(app_session, {"model": FILE_MODEL, "input": "x", "tools": [FILE_TOOL]})

    assert anthropic.status == 409
    assert "llm_test_server_fixture_mismatch" in anthropic.body.decode()
    assert served.status == 200


def test_journal_and_export_carry_declarations_results_and_citations(app_session: SessionClient) -> None:
    configure(app_session, FILE_ITEMS)
    post_raw(
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
        post_raw(app_session, {"model": FILE_MODEL, "input": "x", "tools": tools}).json()["usage"][
            "input_tokens"
        ]
        for tools in (narrow, wide)
    ]

    # A hosted tool counts as its compact JSON in the model's encoding (docs/tokens.md).
    compact = [json.dumps(tools[0], separators=(",", ":")) for tools in (narrow, wide)]
    assert usages == [3 + o200k(text) + message_tokens("x") for text in compact]
    assert usages[0] != usages[1]
