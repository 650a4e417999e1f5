"""Unit tests of conversation predicates: JSON paths, structural equality, logical turns, step checks."""

from __future__ import annotations

from typing import Any

import pytest

from llmts.runtime.conversations.fingerprint import fingerprint
from llmts.runtime.conversations.predicates import (
    RequestView,
    compile_when,
    json_equal,
    logical_turn,
    resolve_path,
)
from llmts.schema.conversations import StepWhen
from llmts.schema.json_path import parse_json_path
from llmts.schema.neutral import NeutralMessage, NeutralRequest, NeutralToolCall

MISSING = resolve_path({}, parse_json_path("$.absent"))


def message(
    role: str, text: str = "", calls: tuple[NeutralToolCall, ...] = (), call_id: str | None = None
) -> Any:
    return NeutralMessage(role=role, text=text, tool_calls=calls, tool_call_id=call_id)  # type: ignore[arg-type]


def request(*messages: NeutralMessage, **fields: Any) -> NeutralRequest:
    return NeutralRequest(
        provider="openai", operation="chat.completions", model="m", messages=messages, **fields
    )


def failed(when: dict[str, Any], req: NeutralRequest) -> list[str]:
    view = RequestView(req)
    return [p.field for p in compile_when(StepWhen.model_validate(when)) if not p.test(view)]


@pytest.mark.parametrize(
    ("path", "document", "expected"),
    [
        ("$", {"a": 1}, {"a": 1}),
        ("$.a.b[1]", {"a": {"b": [0, "x"]}}, "x"),
        ("$['odd.key'][0]", {"odd.key": [True]}, True),
        ('$["a*b"]', {"a*b": 2}, 2),
        ("/a/0/b", {"a": [{"b": None}]}, None),
        ("/a~1b/m~0n", {"a/b": {"m~n": 3}}, 3),
        ("/", {"": 4}, 4),
        ("/list/01", {"list": [1, 2]}, MISSING),  # not a canonical index
        ("$.a[5]", {"a": [1]}, MISSING),
        ("$.a.b", {"a": [1]}, MISSING),
        ("$[0]", {"0": 1}, MISSING),  # an index never selects an object member
        ("/0", {"0": 1}, 1),  # a pointer token does
    ],
)
def test_paths_resolve(path: str, document: Any, expected: Any) -> None:
    actual = resolve_path(document, parse_json_path(path))
    assert actual is MISSING if expected is MISSING else actual == expected


@pytest.mark.parametrize(
    "path",
    ["", "a", "$..a", "$.*", "$.a[*]", "$[?(@.a)]", "$.a[-1]", "$.a[0:2]", "$.a.", "$a", "/a~2", "$[1"],
)
def test_unsupported_paths_are_rejected(path: str) -> None:
    with pytest.raises(ValueError):
        parse_json_path(path)


def test_path_length_limit() -> None:
    parse_json_path("$." + "a" * 254)
    with pytest.raises(ValueError, match="256"):
        parse_json_path("$." + "a" * 255)


@pytest.mark.parametrize(
    ("left", "right", "equal"),
    [
        ({"a": [1, 2.0]}, {"a": [1.0, 2]}, True),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}, True),
        (True, 1, False),
        (0, False, False),
        (None, None, True),
        ("1", 1, False),
        ([1, 2], [2, 1], False),
        ({"a": 1}, {"a": 1, "b": None}, False),
    ],
)
def test_json_structural_equality(left: Any, right: Any, equal: bool) -> None:
    assert json_equal(left, right) is equal
    assert json_equal(right, left) is equal


def test_logical_turn() -> None:
    call = NeutralToolCall(id="c1", name="f", arguments="{}")
    assert logical_turn(()) == 1
    assert logical_turn((message("system"), message("user", "a"))) == 1
    history = (
        message("developer"),
        message("user", "a"),
        message("assistant", "x"),
        message("system"),
        message("assistant", "", (call, call)),  # same group: system messages are skipped
        message("tool", "r", call_id="c1"),
        message("tool", "r", call_id="c1"),
        message("assistant", "y"),
        message("user", "b"),
    )
    assert logical_turn(history) == 3


def test_latest_message_predicates() -> None:
    req = request(message("user", "yes please"), message("assistant", "ok"), message("user", "No way"))
    assert failed({"latest_user_equals": "No way", "latest_role": "user", "turn": 2}, req) == []
    assert failed({"latest_user_contains": "yes"}, req) == ["latest_user_contains"]
    assert failed({"latest_text_contains": "no"}, req) == ["latest_text_contains"]  # ordinal: case matters
    assert failed({"latest_user_equals": "No way "}, req) == ["latest_user_equals"]
    tool_last = request(message("user", "x"), message("tool", "the word", call_id="c"))
    assert failed({"latest_user_contains": "word", "latest_text_contains": "word"}, tool_last) == [
        "latest_user_contains"
    ]


def test_tool_result_resolves_the_call_in_history() -> None:
    calls = (
        NeutralToolCall(id="w", name="get_weather", arguments='{"city": "Paris", "units": "C"}'),
        NeutralToolCall(id="t", name="get_time", arguments="not json"),
    )
    req = request(
        message("user", "?"),
        message("assistant", "", calls),
        message("tool", '{"temp": 18}', call_id="w"),
        message("tool", "12:00", call_id="t"),
    )
    assert failed({"tool_result": {"name": "get_weather"}}, req) == []
    assert failed({"tool_result": {"name": "get_weather", "call_id": "w"}}, req) == []
    assert failed({"tool_result": {"name": "get_weather", "call_id": "t"}}, req) == ["tool_result"]
    assert failed({"tool_result": {"name": "search"}}, req) == ["tool_result"]
    args = {"tool_result": {"name": "get_weather"}, "tool_arguments_json": {"units": "C", "city": "Paris"}}
    assert failed(args, req) == []
    assert failed({**args, "tool_arguments_json": {"city": "Paris"}}, req) == ["tool_arguments_json"]
    # Malformed call arguments never equal anything.
    assert failed({"tool_result": {"name": "get_time"}, "tool_arguments_json": "not json"}, req) == [
        "tool_arguments_json"
    ]
    # A result whose call is not in the history does not count.
    orphan = request(message("user", "?"), message("tool", "x", call_id="zzz"))
    assert failed({"tool_result": {"name": "get_weather"}}, orphan) == ["tool_result"]
    # A user message after the results: the latest message is not a tool result.
    later = request(*req.messages, message("user", "thanks"))
    assert failed({"tool_result": {"name": "get_weather"}}, later) == ["tool_result"]


def test_json_predicates() -> None:
    req = request(message("user", '{"a": {"b": [1, {"c": "x"}]}, "n": 2}'))
    assert failed({"latest_json": {"path": "$.a.b[1].c", "expected_json": "x"}}, req) == []
    assert failed({"latest_json": {"path": "/a/b/1", "expected_json": '{"c": "x"}'}}, req) == []
    assert failed({"latest_json_value": {"path": "$.n", "value": 2.0}}, req) == []
    assert failed({"latest_json_value": {"path": "$.n", "value": "2"}}, req) == ["latest_json_value"]
    assert failed({"latest_json_value": {"path": "$.missing", "value": None}}, req) == ["latest_json_value"]
    bad = request(message("user", "{oops"))
    assert failed({"latest_json": {"path": "$", "expected_json": "{oops"}}, bad) == ["latest_json"]


def test_fingerprint_ignores_streaming_and_cache_hints_only() -> None:
    base = request(message("user", "a"))
    assert fingerprint(base) == fingerprint(
        request(message("user", "a"), stream=True, stream_include_usage=True, cache_mode="explicit")
    )
    assert fingerprint(base) == fingerprint(base.model_copy(update={"operation": "stream_generate_content"}))
    assert fingerprint(base) != fingerprint(request(message("user", "b")))
    assert fingerprint(base) != fingerprint(request(message("user", "a"), tool_names=("f",)))
    assert fingerprint(base) != fingerprint(request(message("user", "a"), preamble="system"))
    assert fingerprint(base) != fingerprint(base.model_copy(update={"provider": "anthropic"}))


def test_system_contains_reads_the_system_field_and_system_or_developer_messages() -> None:
    when = {"system_contains": "terse"}
    assert failed(when, request(message("user", "hi"), system="Be terse.")) == []
    assert failed(when, request(message("system", "Be terse."), message("user", "hi"))) == []
    assert failed(when, request(message("developer", "Be terse."), message("user", "hi"))) == []
    assert failed(when, request(message("user", "Be terse."))) == ["system_contains"]
    # Each system text on its own: the needle never spans two of them.
    spanning = request(message("system", "ter"), message("system", "se"), message("user", "x"), system="te")
    assert failed(when, spanning) == ["system_contains"]


def test_declares_tool_reads_the_declared_tool_names() -> None:
    when = {"declares_tool": "get_weather"}
    assert failed(when, request(message("user", "x"), tool_names=("get_time", "get_weather"))) == []
    assert failed(when, request(message("user", "x"), tool_names=("get_weather_v2",))) == ["declares_tool"]


def test_latest_text_matches_searches_the_final_message() -> None:
    when = {"latest_text_matches": r"order #\d{3}\b"}
    assert failed(when, request(message("user", "about order #123 please"))) == []
    assert failed(when, request(message("user", "order #12"))) == ["latest_text_matches"]
    assert failed(when, request(message("user", "order #123"), message("assistant", "ok"))) == [
        "latest_text_matches"
    ]


def test_a_runaway_pattern_fails_within_its_timeout() -> None:
    import time

    from llmts.schema.predicates import PATTERN_TIMEOUT_SECONDS

    when = {"latest_text_matches": "(x+x+)+y"}
    started = time.monotonic()
    assert failed(when, request(message("user", "x" * 5000))) == ["latest_text_matches"]
    assert time.monotonic() - started < PATTERN_TIMEOUT_SECONDS + 1.0


def test_new_predicates_evaluate_in_table_order() -> None:
    when = {"latest_text_matches": "z", "system_contains": "s", "declares_tool": "t", "turn": 2}
    assert failed(when, request(message("user", "x"))) == [
        "turn",
        "declares_tool",
        "system_contains",
        "latest_text_matches",
    ]
