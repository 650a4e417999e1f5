"""``items`` response fixtures: every configure-time rule and limit, with the paths of the 400, the typed
models and the builder, the JSON round trip, and exact numbers kept from the configuration text."""

from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any

import pytest

from llmts import LlmTestServer, ServerError
from llmts.errors import ConfigurationInvalid
from llmts.schema import (
    LIMITS,
    CodeInterpreterItem,
    CodeInterpreterLogsOutput,
    ConfigBuilder,
    ContainerFileCitation,
    FileCitation,
    FileSearchItem,
    FileSearchResult,
    MessageItem,
    SessionConfig,
    UrlCitation,
    WebSearchItem,
    parse_session_config,
    parse_session_config_json,
)
from tests.providers.openai.native_fixtures import CODE_ITEMS, FILE_ITEMS, WEB_ITEMS

N = 128


def _config(*groups: list[dict[str, Any]], **response: Any) -> dict[str, Any]:
    return {"scenarios": [{"responses": [{"items": group, **response} for group in groups]}]}


def _parse(group: list[dict[str, Any]], **response: Any) -> SessionConfig:
    return parse_session_config(_config(group, **response))


def _rejects(group: list[dict[str, Any]], **response: Any) -> dict[str, Any]:
    with pytest.raises(ConfigurationInvalid) as caught:
        _parse(group, **response)
    detail: dict[str, Any] = caught.value.details[0]
    return detail


def _file(**changes: Any) -> list[dict[str, Any]]:
    group = copy.deepcopy(FILE_ITEMS)
    group[0].update(changes)
    return group


def _code(**changes: Any) -> list[dict[str, Any]]:
    group = copy.deepcopy(CODE_ITEMS)
    group[0].update(changes)
    return group


def _result(**changes: Any) -> list[dict[str, Any]]:
    return _file(results=[{"file_id": "file_source", **changes}])


def _message(content: str, *citations: dict[str, Any], **extra: Any) -> list[dict[str, Any]]:
    return [*_file()[:1], {"kind": "message", "content": content, "citations": list(citations), **extra}]


def test_limits_are_published() -> None:
    assert {
        key: LIMITS[key]
        for key in (
            "native_items_per_response",
            "native_id_chars",
            "native_entries",
            "file_attributes",
            "attribute_key_chars",
            "attribute_value_chars",
        )
    } == {
        "native_items_per_response": 128,
        "native_id_chars": 128,
        "native_entries": 128,
        "file_attributes": 16,
        "attribute_key_chars": 64,
        "attribute_value_chars": 512,
    }


def test_reference_examples_round_trip() -> None:
    config = parse_session_config(_config(FILE_ITEMS, CODE_ITEMS, WEB_ITEMS))
    dumped = config.model_dump(mode="json")

    assert [r["items"] for r in dumped["scenarios"][0]["responses"]] == [FILE_ITEMS, CODE_ITEMS, WEB_ITEMS]
    assert SessionConfig.model_validate(dumped) == config
    assert config.scenarios[0].responses[0].kind == "items"


def test_null_code_and_outputs_are_kept_apart_from_empty() -> None:
    config = parse_session_config(
        _config(
            _code(code=None, code_chunks=None, outputs=None), _code(code="", code_chunks=None, outputs=[])
        )
    )

    nulls, empties = (r["items"][0] for r in config.model_dump(mode="json")["scenarios"][0]["responses"])
    assert "code" not in nulls and "outputs" not in nulls
    assert empties["code"] == "" and empties["outputs"] == []


# --- boundaries: what fits and the first value that does not --------------------------------------------

FITS = [
    ("128 items", [{"kind": "message", "content": "x"}] * N),
    ("128-char id", [{"kind": "message", "id": "m" * N, "content": "x"}]),
    ("128 queries", _file(queries=["q"] * N)),
    ("128 stores", _file(vector_store_ids=[f"vs_{i}" for i in range(N - 1)] + ["vs_fixture"])),
    (
        "128 results",
        _file(results=[{"file_id": f"f{i}"} for i in range(N - 1)] + [{"file_id": "file_source"}]),
    ),
    ("16 attributes", _result(filename="source.txt", attributes={f"k{i}": i for i in range(16)})),
    ("64-char key", _result(filename="source.txt", attributes={"k" * 64: 1})),
    ("512-char value", _result(filename="source.txt", attributes={"k": "v" * 512})),
    ("score 0 and 1", _file(results=[{"file_id": "file_source", "score": 0}, {"file_id": "b", "score": 1}])),
    ("no results", [*_file(results=[])[:1]]),
    ("128 input files", _code(input_file_ids=[f"f{i}" for i in range(N)])),
    ("128 generated files", _code(generated_file_ids=[f"g{i}" for i in range(N - 1)] + ["file_plot"])),
    ("128 code chunks", _code(code="x" * N, code_chunks=["x"] * N)),
    ("128 outputs", _code(outputs=[{"kind": "logs", "logs": ""}] * N)),
    ("128 sources", [{"kind": "web_search", "query": "q", "sources": ["https://e.com"] * N}]),
    (
        "128 citations",
        _message(
            "abc", *[{"kind": "file", "file_id": "file_source", "filename": "source.txt", "index": 3}] * N
        ),
    ),
    (
        "file citation at the end",
        _message("abc", {"kind": "file", "file_id": "file_source", "filename": "source.txt", "index": 3}),
    ),
    (
        "empty container range",
        [
            *_code()[:1],
            {
                "kind": "message",
                "content": "",
                "citations": [
                    {
                        "kind": "container_file",
                        "container_id": "cntr_fixture",
                        "file_id": "file_input",
                        "filename": "in.csv",
                        "start_index": 0,
                        "end_index": 0,
                    }
                ],
            },
        ],
    ),
    ("uncited unicode", [{"kind": "message", "content": "Grüße 🌍"}]),
    (
        "url citation",
        _message("abc", {"kind": "url", "url": "http://e.com", "start_index": 2, "end_index": 3}),
    ),
    ("filename-less result", _file(results=[{"file_id": "file_source"}])),
    ("connection fault", FILE_ITEMS),
]


@pytest.mark.parametrize(("name", "group"), FITS, ids=[name for name, _ in FITS])
def test_boundary_fits(name: str, group: list[dict[str, Any]]) -> None:
    extra = {"stream_delivery": {"mode": "reset_before_headers"}} if name == "connection fault" else {}

    assert _parse(group, **extra).scenarios[0].responses[0].items is not None


EXCEEDS = [
    ("129 items", [{"kind": "message", "content": "x"}] * (N + 1), "scenarios[0].responses[0].items"),
    ("no items", [], "scenarios[0].responses[0].items"),
    (
        "129-char id",
        [{"kind": "message", "id": "m" * (N + 1), "content": "x"}],
        "scenarios[0].responses[0].items[0].message.id",
    ),
    (
        "empty id",
        [{"kind": "message", "id": "", "content": "x"}],
        "scenarios[0].responses[0].items[0].message.id",
    ),
    (
        "duplicate ids",
        [{"kind": "message", "id": "a", "content": "x"}] * 2,
        "scenarios[0].responses[0].items[1].id",
    ),
    ("unknown kind", [{"kind": "image_generation"}], "scenarios[0].responses[0].items[0]"),
    (
        "unknown field",
        [{"kind": "message", "content": "x", "role": "user"}],
        "scenarios[0].responses[0].items[0].message.role",
    ),
    ("129 queries", _file(queries=["q"] * (N + 1)), "scenarios[0].responses[0].items[0].file_search.queries"),
    ("no queries", _file(queries=[]), "scenarios[0].responses[0].items[0].file_search.queries"),
    (
        "no stores",
        _file(vector_store_ids=[]),
        "scenarios[0].responses[0].items[0].file_search.vector_store_ids",
    ),
    (
        "duplicate stores",
        _file(vector_store_ids=["a", "a"]),
        "scenarios[0].responses[0].items[0].file_search.vector_store_ids",
    ),
    (
        "129 stores",
        _file(vector_store_ids=[f"v{i}" for i in range(N + 1)]),
        "scenarios[0].responses[0].items[0].file_search.vector_store_ids",
    ),
    (
        "129 results",
        _file(results=[{"file_id": "file_source"}] * (N + 1)),
        "scenarios[0].responses[0].items[0].file_search.results",
    ),
    (
        "17 attributes",
        _result(attributes={f"k{i}": i for i in range(17)}),
        "scenarios[0].responses[0].items[0].file_search.results[0].attributes",
    ),
    (
        "65-char key",
        _result(attributes={"k" * 65: 1}),
        "scenarios[0].responses[0].items[0].file_search.results[0].attributes",
    ),
    (
        "blank key",
        _result(attributes={" ": 1}),
        "scenarios[0].responses[0].items[0].file_search.results[0].attributes",
    ),
    (
        "513-char value",
        _result(attributes={"k": "v" * 513}),
        "scenarios[0].responses[0].items[0].file_search.results[0].attributes",
    ),
    (
        "null attribute",
        _result(attributes={"k": None}),
        "scenarios[0].responses[0].items[0].file_search.results[0].attributes",
    ),
    (
        "array attribute",
        _result(attributes={"k": [1]}),
        "scenarios[0].responses[0].items[0].file_search.results[0].attributes",
    ),
    ("score above 1", _result(score=1.01), "scenarios[0].responses[0].items[0].file_search.results[0].score"),
    (
        "negative score",
        _result(score=-0.01),
        "scenarios[0].responses[0].items[0].file_search.results[0].score",
    ),
    ("boolean score", _result(score=True), "scenarios[0].responses[0].items[0].file_search.results[0].score"),
    (
        "unknown result field",
        _result(page=1),
        "scenarios[0].responses[0].items[0].file_search.results[0].page",
    ),
    (
        "129 input files",
        _code(input_file_ids=[f"f{i}" for i in range(N + 1)]),
        "scenarios[0].responses[0].items[0].code_interpreter.input_file_ids",
    ),
    (
        "duplicate input files",
        _code(input_file_ids=["a", "a"]),
        "scenarios[0].responses[0].items[0].code_interpreter",
    ),
    (
        "129 code chunks",
        _code(code="x" * (N + 1), code_chunks=["x"] * (N + 1)),
        "scenarios[0].responses[0].items[0].code_interpreter.code_chunks",
    ),
    ("chunks without code", _code(code=None), "scenarios[0].responses[0].items[0].code_interpreter"),
    (
        "chunks that do not concatenate",
        _code(code_chunks=["print("]),
        "scenarios[0].responses[0].items[0].code_interpreter",
    ),
    (
        "129 outputs",
        _code(outputs=[{"kind": "logs", "logs": ""}] * (N + 1)),
        "scenarios[0].responses[0].items[0].code_interpreter.outputs",
    ),
    (
        "file output",
        _code(outputs=[{"kind": "files", "files": []}]),
        "scenarios[0].responses[0].items[0].code_interpreter.outputs[0]",
    ),
    (
        "ftp image",
        _code(outputs=[{"kind": "image", "url": "ftp://e.com/a.png"}]),
        "scenarios[0].responses[0].items[0].code_interpreter.outputs[0].image.url",
    ),
    (
        "no container",
        _code(container_id=None),
        "scenarios[0].responses[0].items[0].code_interpreter.container_id",
    ),
    ("search without query", [{"kind": "web_search"}], "scenarios[0].responses[0].items[0].web_search"),
    (
        "open_page without url",
        [{"kind": "web_search", "action": "open_page"}],
        "scenarios[0].responses[0].items[0].web_search",
    ),
    (
        "find_in_page without pattern",
        [{"kind": "web_search", "action": "find_in_page", "url": "https://e.com"}],
        "scenarios[0].responses[0].items[0].web_search",
    ),
    (
        "relative source",
        [{"kind": "web_search", "query": "q", "sources": ["/a"]}],
        "scenarios[0].responses[0].items[0].web_search",
    ),
    (
        "129 sources",
        [{"kind": "web_search", "query": "q", "sources": ["https://e.com"] * (N + 1)}],
        "scenarios[0].responses[0].items[0].web_search.sources",
    ),
    (
        "129 citations",
        _message(
            "abc",
            *[{"kind": "file", "file_id": "file_source", "filename": "source.txt", "index": 0}] * (N + 1),
        ),
        "scenarios[0].responses[0].items[1].message.citations",
    ),
    (
        "file index past the end",
        _message("abc", {"kind": "file", "file_id": "file_source", "filename": "source.txt", "index": 4}),
        "scenarios[0].responses[0].items[1].message.citations[0]",
    ),
    (
        "empty url range",
        _message("abc", {"kind": "url", "url": "https://e.com", "start_index": 1, "end_index": 1}),
        "scenarios[0].responses[0].items[1].message.citations[0].url",
    ),
    (
        "url range past the end",
        _message("abc", {"kind": "url", "url": "https://e.com", "start_index": 1, "end_index": 4}),
        "scenarios[0].responses[0].items[1].message.citations[0]",
    ),
    (
        "inverted container range",
        [
            *_code()[:1],
            {
                "kind": "message",
                "content": "abc",
                "citations": [
                    {
                        "kind": "container_file",
                        "container_id": "cntr_fixture",
                        "file_id": "file_plot",
                        "filename": "p",
                        "start_index": 2,
                        "end_index": 1,
                    }
                ],
            },
        ],
        "scenarios[0].responses[0].items[1].message.citations[0].container_file",
    ),
    (
        "cited unicode",
        _message("Grüße", {"kind": "file", "file_id": "file_source", "filename": "source.txt", "index": 0}),
        "scenarios[0].responses[0].items[1].message.content",
    ),
    (
        "citation of an unknown file",
        _message("abc", {"kind": "file", "file_id": "file_other", "filename": "source.txt", "index": 0}),
        "scenarios[0].responses[0].items[1].citations[0]",
    ),
    (
        "citation with another filename",
        _message("abc", {"kind": "file", "file_id": "file_source", "filename": "other.txt", "index": 0}),
        "scenarios[0].responses[0].items[1].citations[0]",
    ),
    (
        "citation of an unknown container",
        [
            *_code()[:1],
            {
                "kind": "message",
                "content": "abc",
                "citations": [
                    {
                        "kind": "container_file",
                        "container_id": "cntr_other",
                        "file_id": "file_plot",
                        "filename": "p",
                        "start_index": 0,
                        "end_index": 1,
                    }
                ],
            },
        ],
        "scenarios[0].responses[0].items[1].citations[0]",
    ),
    (
        "citation of a foreign container file",
        [
            *_code()[:1],
            {
                "kind": "message",
                "content": "abc",
                "citations": [
                    {
                        "kind": "container_file",
                        "container_id": "cntr_fixture",
                        "file_id": "file_x",
                        "filename": "p",
                        "start_index": 0,
                        "end_index": 1,
                    }
                ],
            },
        ],
        "scenarios[0].responses[0].items[1].citations[0]",
    ),
    (
        "chunks that do not concatenate to content",
        [{"kind": "message", "content": "abc", "chunks": ["ab"]}],
        "scenarios[0].responses[0].items[0].message",
    ),
]


@pytest.mark.parametrize(("name", "group", "path"), EXCEEDS, ids=[name for name, _, _ in EXCEEDS])
def test_boundary_rejected_with_path(name: str, group: list[dict[str, Any]], path: str) -> None:
    assert _rejects(group)["path"] == path


def test_items_exclude_other_kinds_and_in_stream_faults() -> None:
    both = _rejects(FILE_ITEMS, text="x")
    chunks = _rejects(FILE_ITEMS, chunks=["x"])
    in_stream = _rejects(FILE_ITEMS, stream_delivery={"mode": "early_clean_end"})

    assert "a response needs exactly one of text, json, tool_calls, items," in both["message"]
    assert "(found: text, items)" in both["message"]
    assert "chunks are only allowed with text" in chunks["message"]
    assert "plain-text responses" in in_stream["message"]


def test_exact_numbers_come_from_the_configuration_text() -> None:
    body = (
        b'{"scenarios": [{"responses": [{"items": [{"kind": "file_search", "vector_store_ids": ["v"],'
        b' "queries": ["q"], "results": [{"file_id": "f", "score": 0.50000000000000000001,'
        b' "attributes": {"p": 0.10000000000000000001, "n": 2026, "s": "1.5", "b": true}}]}]}]}]}'
    )

    result = parse_session_config_json(body).scenarios[0].responses[0].items[0].results[0]  # type: ignore[index, union-attr]

    assert result.score == Decimal("0.50000000000000000001")
    assert result.attributes == {
        "p": Decimal("0.10000000000000000001"),
        "n": Decimal(2026),
        "s": "1.5",
        "b": True,
    }
    assert result.model_dump(mode="json")["attributes"] == {"p": 0.1, "n": 2026, "s": "1.5", "b": True}


def test_typed_models_and_builder_serialize_to_the_contract_json() -> None:
    config = (
        ConfigBuilder()
        .models("gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini")
        .scenario()
        .items(
            FileSearchItem(
                kind="file_search",
                id="fs_fixture",
                vector_store_ids=["vs_fixture"],
                queries=["Paris fixture facts"],
                results=[
                    FileSearchResult(
                        file_id="file_source",
                        filename="source.txt",
                        text="Scripted Paris source",
                        score=0.9,
                        attributes={"category": "fixture", "year": 2026},
                    )
                ],
            ),
            MessageItem(
                kind="message",
                id="msg_file",
                content="Paris fixture.",
                citations=[FileCitation(kind="file", file_id="file_source", filename="source.txt", index=5)],
            ),
        )
        .items(
            CodeInterpreterItem(
                kind="code_interpreter",
                container_id="cntr",
                generated_file_ids=["file_plot"],
                code="1",
                outputs=[CodeInterpreterLogsOutput(kind="logs", logs="1")],
            ),
            {
                "kind": "message",
                "content": "See plot.",
                "citations": [
                    ContainerFileCitation(
                        kind="container_file",
                        container_id="cntr",
                        file_id="file_plot",
                        filename="plot.png",
                        start_index=4,
                        end_index=8,
                    ).model_dump()
                ],
            },
        )
        .items(
            WebSearchItem(kind="web_search", query="q"),
            MessageItem(
                kind="message",
                content="cited",
                citations=[
                    UrlCitation(kind="url", url="https://e.com", title="E", start_index=0, end_index=5)
                ],
            ),
        )
        .build()
    )

    responses = config.model_dump(mode="json")["scenarios"][0]["responses"]
    assert responses[0]["items"] == FILE_ITEMS
    assert responses[1]["items"][0] == {
        "kind": "code_interpreter",
        "container_id": "cntr",
        "input_file_ids": [],
        "generated_file_ids": ["file_plot"],
        "code": "1",
        "outputs": [{"kind": "logs", "logs": "1"}],
    }
    assert responses[2]["items"][0] == {"kind": "web_search", "query": "q"}


@pytest.mark.sdk
def test_control_api_answers_400_with_the_item_path(llmts_server: LlmTestServer) -> None:
    session = llmts_server.create_session()
    try:
        session.configure({"models": ["gpt-4o-mini"], "scenarios": [{"responses": [{"text": "kept"}]}]})
        with pytest.raises(ServerError) as caught:
            session.configure(
                _config(_message("abc", {"kind": "file", "file_id": "nope", "filename": "x", "index": 0}))
            )

        assert caught.value.status == 400 and caught.value.code == "invalid_configuration"
        assert caught.value.details[0]["path"] == "scenarios[0].responses[0].items[1].citations[0]"
        assert session.configuration()["scenarios"][0]["responses"] == [{"text": "kept"}]
    finally:
        session.delete()
