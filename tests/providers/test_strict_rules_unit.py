"""The strict rule tables in memory: each rule's check on bodies that break it and bodies that do not,
and ``check_strict``'s error (docs/realistic-answers.md, "Strict request contract")."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from llmts.errors import InvalidRequest, StrictRequestRejected
from llmts.providers.anthropic.strict_rules import MESSAGES_RULES
from llmts.providers.bedrock.strict_rules import CONVERSE_RULES
from llmts.providers.cohere.strict_rules import CHAT_RULES as COHERE_RULES
from llmts.providers.gemini.strict_rules import GENERATE_RULES
from llmts.providers.openai.strict_rules import CHAT_RULES, RESPONSES_RULES
from llmts.providers.strict import StrictRule, check_strict
from llmts.runtime.signatures import SignatureBook, signing_key

HI = {"role": "user", "content": "Hi"}
# The signatures the bodies below pass back, as a configuration scripting them would have issued them.
BOOK = SignatureBook(signing_key(None), {"s": frozenset({"t"}), "x": frozenset({""})})


def _rule(table: tuple[StrictRule, ...], name: str) -> StrictRule:
    return next(rule for rule in table if rule.name == name)


def _broken(table: tuple[StrictRule, ...], body: dict[str, Any]) -> str | None:
    try:
        check_strict(table, orjson.dumps(body), body, BOOK)
    except StrictRequestRejected as error:
        return error.rule
    return None


def _call(call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "f", "arguments": "{}"}}


def _tool(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": "r"}


@pytest.mark.parametrize(
    ("messages", "rule"),
    [
        ([HI], None),
        ([HI, _tool("a")], "tool_result_without_call"),
        ([HI, {"role": "assistant", "tool_calls": [_call("a")]}, _tool("b")], "tool_result_without_call"),
        ([HI, {"role": "assistant", "tool_calls": [_call("a")]}, _tool("a"), _tool("a")], None),
        (
            [HI, {"role": "assistant", "tool_calls": [_call("a")]}, _tool("a"), HI, _tool("a")],
            "tool_result_without_call",
        ),
        ([HI, {"role": "assistant", "tool_calls": [_call("a"), _call("b")]}, _tool("b"), _tool("a")], None),
        (
            [HI, {"role": "assistant", "tool_calls": [_call("a"), _call("b")]}, _tool("a")],
            "tool_calls_unanswered",
        ),
        ([HI, {"role": "assistant", "tool_calls": [_call("a")]}], "tool_calls_unanswered"),
        ([HI, {"role": "assistant", "content": "plain"}, HI], None),
        ("not a list", None),  # the parser answers malformed bodies; rules never crash on them
    ],
)
def test_chat_tool_rules(messages: Any, rule: str | None) -> None:
    assert _broken(CHAT_RULES, {"model": "gpt-4o", "messages": messages}) == rule


@pytest.mark.parametrize(
    ("model", "params", "rule"),
    [
        ("o3-mini", {"temperature": 0.2}, "reasoning_model_temperature"),
        ("o1", {"top_p": 0.9}, "reasoning_model_top_p"),
        ("gpt-5", {"temperature": 0}, "reasoning_model_temperature"),
        ("gpt-5.1-mini", {"top_p": 0.5}, "reasoning_model_top_p"),
        ("o4-mini", {"temperature": 1, "top_p": 1}, None),
        ("gpt-5-chat-latest", {"temperature": 0.2}, None),
        ("gpt-4o", {"temperature": 0.2, "top_p": 0.1}, None),
        ("omni-moderation", {"temperature": 0.2}, None),
    ],
)
def test_reasoning_model_sampling(model: str, params: dict[str, Any], rule: str | None) -> None:
    assert _broken(CHAT_RULES, {"model": model, "messages": [HI], **params}) == rule
    assert _broken(RESPONSES_RULES, {"model": model, "input": "Hi", **params}) == rule


def test_check_strict_raises_the_rules_code_param_and_names_the_rule() -> None:
    with pytest.raises(StrictRequestRejected) as caught:
        body = {"model": "o3", "messages": [HI], "temperature": 0.5}
        check_strict(CHAT_RULES, orjson.dumps(body), body, BOOK)
    error = caught.value
    assert isinstance(error, InvalidRequest)
    assert (error.http_status, error.code, error.param, error.rule) == (
        400,
        "unsupported_value",
        "temperature",
        "reasoning_model_temperature",
    )
    assert error.should_retry is False
    assert "llmts strict rule reasoning_model_temperature" in error.message


def _fc(call_id: str) -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": "f", "arguments": "{}"}


def _fco(call_id: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": "r"}


@pytest.mark.parametrize(
    ("body", "rule"),
    [
        ({"input": "Hi"}, None),
        ({"input": [_fco("a")]}, "function_call_output_without_call"),
        ({"input": [_fco("a")], "previous_response_id": "resp_1"}, None),
        ({"input": [HI, _fc("a"), _fco("a")]}, None),
        ({"input": [HI, _fc("a"), HI]}, "function_call_unanswered"),
        ({"input": [HI, _fc("a"), _fc("b"), _fco("b")]}, "function_call_unanswered"),
        ({"input": [HI], "previous_response_id": "resp_1", "store": False}, None),
    ],
)
def test_responses_rules(body: dict[str, Any], rule: str | None) -> None:
    assert _broken(RESPONSES_RULES, {"model": "gpt-4o", **body}) == rule


def _use(tool_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": "f", "input": {}}


def _result(tool_id: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": "r"}


_THINK = {"type": "thinking", "thinking": "t", "signature": "s"}
_ON = {"type": "enabled", "budget_tokens": 1024}


@pytest.mark.parametrize(
    ("body", "rule"),
    [
        ({"messages": [HI]}, None),
        ({"messages": [HI, HI]}, None),  # consecutive same-role turns are combined by the API
        ({"messages": [{"role": "assistant", "content": "x"}, HI]}, "first_message_not_user"),
        ({"messages": [HI, {"role": "user", "content": [_result("a")]}]}, "tool_result_without_tool_use"),
        (
            {
                "messages": [
                    HI,
                    {"role": "assistant", "content": [_use("a")]},
                    {"role": "user", "content": [_result("b")]},
                ]
            },
            "tool_result_without_tool_use",
        ),
        (
            {"messages": [HI, {"role": "assistant", "content": [_use("a")]}, HI]},
            "tool_use_without_tool_result",
        ),
        ({"messages": [HI, {"role": "assistant", "content": [_use("a")]}]}, None),  # nothing after it yet
        (
            {
                "messages": [
                    HI,
                    {"role": "assistant", "content": [_use("a")]},
                    {"role": "user", "content": [_result("a")]},
                ]
            },
            None,
        ),
        (
            {"max_tokens": 4096, "thinking": {"type": "enabled", "budget_tokens": 1023}, "messages": [HI]},
            "thinking_budget",
        ),
        ({"max_tokens": 1024, "thinking": _ON, "messages": [HI]}, "thinking_budget"),
        ({"max_tokens": 0, "thinking": _ON, "messages": [HI]}, None),  # the cache warm-up
        ({"max_tokens": 1025, "thinking": _ON, "messages": [HI]}, None),
        ({"max_tokens": 100, "thinking": {"type": "disabled"}, "messages": [HI]}, None),
        (
            {
                "max_tokens": 4096,
                "thinking": _ON,
                "messages": [
                    HI,
                    {"role": "assistant", "content": [_use("a")]},
                    {"role": "user", "content": [_result("a")]},
                ],
            },
            "thinking_block_not_first",
        ),
        (
            {
                "max_tokens": 4096,
                "thinking": _ON,
                "messages": [
                    HI,
                    {"role": "assistant", "content": [_THINK, _use("a")]},
                    {"role": "user", "content": [_result("a")]},
                ],
            },
            None,
        ),
        (
            {
                "max_tokens": 4096,
                "thinking": _ON,
                "messages": [
                    HI,
                    {"role": "assistant", "content": [{"type": "redacted_thinking", "data": "x"}, _use("a")]},
                    {"role": "user", "content": [_result("a")]},
                ],
            },
            None,
        ),
        (
            {
                "max_tokens": 4096,
                "messages": [
                    HI,
                    {"role": "assistant", "content": [_use("a")]},
                    {"role": "user", "content": [_result("a")]},
                ],
            },
            None,  # thinking off: no thinking block needed
        ),
    ],
)
def test_anthropic_rules(body: dict[str, Any], rule: str | None) -> None:
    assert _broken(MESSAGES_RULES, {"model": "claude", "max_tokens": 256, **body}) == rule


def _content(role: str, *parts: dict[str, Any]) -> dict[str, Any]:
    return {"role": role, "parts": list(parts)}


_TEXT = {"text": "Hi"}
_CALL = {"functionCall": {"name": "f", "args": {}}}
_ANSWER = {"functionResponse": {"name": "f", "response": {}}}
_OTHER_ANSWER = {"functionResponse": {"name": "g", "response": {}}}


@pytest.mark.parametrize(
    ("contents", "rule"),
    [
        ([_content("user", _TEXT)], None),
        ([_content("user", _TEXT), _content("model", _CALL), _content("user", _ANSWER)], None),
        ([_content("user", _TEXT), _content("user", _ANSWER)], "function_response_without_call"),
        (
            [_content("user", _TEXT), _content("model", _CALL), _content("user", _OTHER_ANSWER)],
            "function_response_without_call",
        ),
        (
            [_content("user", _TEXT), _content("model", _CALL, _CALL), _content("user", _ANSWER)],
            "function_calls_unanswered",
        ),
        (
            [
                _content("user", _TEXT),
                _content("model", {"function_call": {"name": "f"}}),
                _content("user", {"function_response": {"name": "f"}}),
            ],
            None,
        ),
    ],
)
def test_gemini_rules(contents: list[dict[str, Any]], rule: str | None) -> None:
    assert _broken(GENERATE_RULES, {"contents": contents}) == rule


def test_every_rule_names_a_source_and_has_a_unique_name_per_table() -> None:
    for table in (CHAT_RULES, RESPONSES_RULES, MESSAGES_RULES, GENERATE_RULES):
        names = [rule.name for rule in table]
        assert len(names) == len(set(names))
        assert all(rule.source.startswith("https://") for rule in table)


def test_docs_table_lists_every_rule() -> None:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "realistic-answers.md").read_text(encoding="utf-8")
    for table in (CHAT_RULES, RESPONSES_RULES, MESSAGES_RULES, GENERATE_RULES, CONVERSE_RULES, COHERE_RULES):
        for rule in table:
            assert f"`{rule.name}`" in text, rule.name
    assert _rule(CHAT_RULES, "tool_calls_unanswered").code == "tool_calls_unanswered"


@pytest.mark.parametrize(
    "hostile",
    [
        {"type": "function_call", "call_id": {"a": 1}},
        {"type": "function_call_output", "call_id": [1]},
        {"type": "tool_result", "tool_use_id": [1], "content": "r"},
        {"functionResponse": {"name": ["f"]}},
        {"functionCall": {"name": {"f": 1}}},
    ],
)
def test_rules_never_crash_on_unhashable_ids(hostile: dict[str, Any]) -> None:
    """Ids of the wrong type (which parsers may let through) give a rule's 400 or nothing, never a 500."""
    bodies = [
        (RESPONSES_RULES, {"model": "o3", "input": [HI, hostile, hostile]}),
        (
            MESSAGES_RULES,
            {
                "messages": [
                    HI,
                    {"role": "assistant", "content": [_use("a")]},
                    {"role": "user", "content": [hostile]},
                ]
            },
        ),
        (
            GENERATE_RULES,
            {"contents": [{"role": "model", "parts": [hostile]}, {"role": "user", "parts": [hostile]}]},
        ),
    ]
    for table, body in bodies:
        _broken(table, body)  # must not raise anything but StrictRequestRejected
