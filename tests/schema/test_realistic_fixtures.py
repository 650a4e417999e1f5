"""Realistic-answer fixture fields (docs/realistic-answers.md): what validates, what is refused with a
message naming the field, how fixtures compile, and the bounded reasoning settings the journal keeps."""

from __future__ import annotations

from typing import Any

import pytest

from llmts.errors import ConfigurationInvalid
from llmts.runtime.plans import compile_response
from llmts.schema import ConfigBuilder, parse_session_config
from llmts.schema.fixtures import LIMITS, ResponseFixture
from llmts.schema.neutral import reasoning_settings

CALL = {"id": "c1", "name": "f", "arguments": {"a": 1}}


def _fixture(response: dict[str, Any]) -> ResponseFixture:
    return parse_session_config({"scenarios": [{"responses": [response]}]}).scenarios[0].responses[0]


def _refused(response: dict[str, Any]) -> tuple[str, str]:
    with pytest.raises(ConfigurationInvalid) as caught:
        parse_session_config({"scenarios": [{"responses": [response]}]})
    detail = caught.value.details[0]
    return detail["path"], detail["message"]


@pytest.mark.parametrize(
    "response",
    [
        {"text": "a", "tool_calls": [CALL]},
        {"text": "a", "chunks": ["a"], "tool_calls": [CALL], "reasoning": {"summary": ["s"]}},
        {"json": {"a": 1}, "reasoning": {"text": "t", "tokens": 0}},
        {"tool_calls": [CALL], "reasoning": {"redacted": True}},
        {"refusal": "No."},
        {"refusal": "No.", "finish_reason": "content_filter", "reasoning": {"text": "t"}},
        {"text": "a", "finish_reason": "length"},
        {"text": "a", "finish_reason": "refusal"},
    ],
)
def test_valid_realistic_fixtures_round_trip(response: dict[str, Any]) -> None:
    fixture = _fixture(response)
    assert ResponseFixture.model_validate(fixture.model_dump(by_alias=True)) == fixture
    assert fixture.model_dump(by_alias=True) == response


@pytest.mark.parametrize(
    ("response", "path", "message"),
    [
        ({"text": "a", "json": 1}, "scenarios[0].responses[0]", "exactly one of"),
        ({"refusal": "No.", "text": "a"}, "scenarios[0].responses[0]", "exactly one of"),
        ({"json": 1, "tool_calls": [CALL]}, "scenarios[0].responses[0]", "exactly one of"),
        ({"text": "a", "reasoning": {}}, "scenarios[0].responses[0].reasoning", "text, summary or redacted"),
        (
            {"text": "a", "reasoning": {"summary": []}},
            "scenarios[0].responses[0].reasoning.summary",
            "at least 1",
        ),
        (
            {"text": "a", "reasoning": {"text": "t", "tokens": -1}},
            "scenarios[0].responses[0].reasoning.tokens",
            "",
        ),
        ({"text": "a", "finish_reason": "tool_calls"}, "scenarios[0].responses[0].finish_reason", ""),
        ({"refusal": ""}, "scenarios[0].responses[0].refusal", ""),
        ({"refusal": "No.", "finish_reason": "length"}, "scenarios[0].responses[0]", "refusal ends with"),
        (
            {"error": {"status": 500, "code": "x", "message": "m"}, "finish_reason": "length"},
            "scenarios[0].responses[0]",
            "cannot be combined with an error",
        ),
        (
            {"items": [{"kind": "message", "content": "x"}], "reasoning": {"text": "t"}},
            "scenarios[0].responses[0]",
            "cannot be combined with items",
        ),
        (
            {"text": "a", "reasoning": {"text": "t"}, "stream_delivery": {"mode": "early_clean_end"}},
            "scenarios[0].responses[0]",
            "plain-text responses",
        ),
        (
            {"text": "a", "tool_calls": [CALL], "stream_delivery": {"mode": "early_clean_end"}},
            "scenarios[0].responses[0]",
            "plain-text responses",
        ),
    ],
)
def test_invalid_realistic_fixtures_name_the_field(response: dict[str, Any], path: str, message: str) -> None:
    got_path, got_message = _refused(response)
    assert got_path == path
    assert message in got_message


def test_summary_parts_are_bounded() -> None:
    parts = ["s"] * (LIMITS["reasoning_summary_parts"] + 1)
    assert (
        _refused({"text": "a", "reasoning": {"summary": parts}})[0]
        == "scenarios[0].responses[0].reasoning.summary"
    )


def test_compiled_mixed_answer_with_reasoning() -> None:
    fixture = _fixture(
        {"text": "Hi.", "tool_calls": [CALL], "reasoning": {"summary": ["a", "b"], "tokens": 9}}
    )
    output = compile_response(fixture, "s", 0).output
    assert output is not None
    assert (output.kind, output.text, output.chunks, output.finish_reason) == (
        "tool_calls",
        "Hi.",
        ("Hi.",),
        "stop",
    )
    assert output.reasoning is not None
    assert (output.reasoning.text, output.reasoning.thinking(), output.reasoning.tokens) == ("", "a\n\nb", 9)
    assert output.reasoning.signature  # derived: providers always sign
    # Output tokens include the reasoning tokens.
    plain = compile_response(_fixture({"text": "Hi.", "tool_calls": [CALL]}), "s", 0).output
    assert plain is not None and output.output_tokens == plain.output_tokens + 9


def test_compiled_signature_is_stable_and_estimated_tokens() -> None:
    first = compile_response(_fixture({"text": "a", "reasoning": {"text": "abcdefgh"}}), "s", 0).output
    again = compile_response(_fixture({"text": "b", "reasoning": {"text": "abcdefgh"}}), "t", 3).output
    assert (
        first is not None
        and again is not None
        and first.reasoning is not None
        and again.reasoning is not None
    )
    assert first.reasoning.signature == again.reasoning.signature
    assert first.reasoning.tokens == 2  # the documented estimate: 4 characters a token


def test_compiled_refusal() -> None:
    output = compile_response(_fixture({"refusal": "No way."}), "s", 0).output
    assert output is not None
    assert (output.kind, output.text, output.refusal, output.finish_reason) == (
        "text",
        "",
        "No way.",
        "refusal",
    )


def test_reasoning_settings_keep_bounded_scalars() -> None:
    assert reasoning_settings(None) is None
    assert reasoning_settings({}) is None
    assert reasoning_settings("high") is None
    assert reasoning_settings({"effort": "high", "nested": {"x": 1}, "budget_tokens": 5, "on": True}) == {
        "effort": "high",
        "budget_tokens": 5,
        "on": True,
    }
    kept = reasoning_settings({f"k{i}": "v" * 500 for i in range(40)})
    assert kept is not None and len(kept) == 16 and all(len(v) == 128 for v in kept.values())


def test_scenario_builder_takes_any_fixture() -> None:
    config = (
        ConfigBuilder()
        .scenario()
        .response({"reasoning": {"summary": ["s"]}, "text": "a", "tool_calls": [CALL]})
        .response({"refusal": "No."})
        .build()
    )
    responses = config.scenarios[0].responses
    assert [r.kind for r in responses] == ["tool_calls", "refusal"]
    assert responses[0].text == "a" and responses[0].reasoning is not None
