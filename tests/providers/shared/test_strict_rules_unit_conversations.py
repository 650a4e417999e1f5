"""The strict rule tables in memory, on the shape of a conversation: each provider's rules on tool calls
and their results, roles and their order, and thinking blocks' place and budget, checked on bodies that
break them and bodies that do not (docs/realistic-answers.md, "Strict request contract")."""

from __future__ import annotations

from typing import Any

import pytest

from llmts.providers.anthropic_messages.strict_rules import MESSAGES_RULES
from llmts.providers.bedrock.strict_rules import CONVERSE_RULES
from llmts.providers.cohere.strict_rules import CHAT_RULES as COHERE_RULES
from llmts.providers.gemini.strict_rules import GENERATE_RULES
from llmts.providers.openai.strict_rules import CHAT_RULES, RESPONSES_RULES
from tests.providers.shared.strict_rules_support import (
    HI,
    KEYED_SIGNATURE,
    THINKING_ON,
    broken_rule,
    tool_result_block,
    tool_use_block,
)


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
    assert broken_rule(CHAT_RULES, {"model": "gpt-4o", "messages": messages}) == rule


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
    assert broken_rule(RESPONSES_RULES, {"model": "gpt-4o", **body}) == rule


_THINK = {"type": "thinking", "thinking": "t", "signature": "s"}


@pytest.mark.parametrize(
    ("body", "rule"),
    [
        ({"messages": [HI]}, None),
        ({"messages": [HI, HI]}, None),  # consecutive same-role turns are combined by the API
        ({"messages": [{"role": "assistant", "content": "x"}, HI]}, "first_message_not_user"),
        (
            {"messages": [HI, {"role": "user", "content": [tool_result_block("a")]}]},
            "tool_result_without_tool_use",
        ),
        (
            {
                "messages": [
                    HI,
                    {"role": "assistant", "content": [tool_use_block("a")]},
                    {"role": "user", "content": [tool_result_block("b")]},
                ]
            },
            "tool_result_without_tool_use",
        ),
        (
            {"messages": [HI, {"role": "assistant", "content": [tool_use_block("a")]}, HI]},
            "tool_use_without_tool_result",
        ),
        (
            {"messages": [HI, {"role": "assistant", "content": [tool_use_block("a")]}]},
            None,
        ),  # nothing after it yet
        (
            {
                "messages": [
                    HI,
                    {"role": "assistant", "content": [tool_use_block("a")]},
                    {"role": "user", "content": [tool_result_block("a")]},
                ]
            },
            None,
        ),
        (
            {"max_tokens": 4096, "thinking": {"type": "enabled", "budget_tokens": 1023}, "messages": [HI]},
            "thinking_budget",
        ),
        ({"max_tokens": 1024, "thinking": THINKING_ON, "messages": [HI]}, "thinking_budget"),
        ({"max_tokens": 0, "thinking": THINKING_ON, "messages": [HI]}, None),  # the cache warm-up
        ({"max_tokens": 1025, "thinking": THINKING_ON, "messages": [HI]}, None),
        ({"max_tokens": 100, "thinking": {"type": "disabled"}, "messages": [HI]}, None),
        (
            {
                "max_tokens": 4096,
                "thinking": THINKING_ON,
                "messages": [
                    HI,
                    {"role": "assistant", "content": [tool_use_block("a")]},
                    {"role": "user", "content": [tool_result_block("a")]},
                ],
            },
            "thinking_block_not_first",
        ),
        (
            {
                "max_tokens": 4096,
                "thinking": THINKING_ON,
                "messages": [
                    HI,
                    {"role": "assistant", "content": [_THINK, tool_use_block("a")]},
                    {"role": "user", "content": [tool_result_block("a")]},
                ],
            },
            None,
        ),
        (
            {
                "max_tokens": 4096,
                "thinking": THINKING_ON,
                "messages": [
                    HI,
                    {
                        "role": "assistant",
                        "content": [{"type": "redacted_thinking", "data": "x"}, tool_use_block("a")],
                    },
                    {"role": "user", "content": [tool_result_block("a")]},
                ],
            },
            None,
        ),
        (
            {
                "max_tokens": 4096,
                "messages": [
                    HI,
                    {"role": "assistant", "content": [tool_use_block("a")]},
                    {"role": "user", "content": [tool_result_block("a")]},
                ],
            },
            None,  # thinking off: no thinking block needed
        ),
    ],
)
def test_anthropic_rules(body: dict[str, Any], rule: str | None) -> None:
    assert broken_rule(MESSAGES_RULES, {"model": "claude", "max_tokens": 256, **body}) == rule


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
    assert broken_rule(GENERATE_RULES, {"contents": contents}) == rule


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
                    {"role": "assistant", "content": [tool_use_block("a")]},
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
        broken_rule(table, body)  # must not raise anything but StrictRequestRejected


def _cohere_call(call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "f", "arguments": "{}"}}


@pytest.mark.parametrize(
    ("messages", "rule"),
    [
        ([HI], None),
        ([HI, {"role": "tool", "tool_call_id": "a", "content": "r"}], "tool_result_without_call"),
        (
            [
                HI,
                {"role": "assistant", "tool_calls": [_cohere_call("a")]},
                {"role": "tool", "tool_call_id": "b", "content": "r"},
            ],
            "tool_result_without_call",
        ),
        ([HI, {"role": "assistant", "tool_calls": [_cohere_call("a")]}, HI], "tool_calls_unanswered"),
        ([HI, {"role": "assistant", "tool_calls": [_cohere_call("a")]}], None),
        (
            [
                HI,
                {"role": "assistant", "tool_calls": [_cohere_call("a")]},
                {"role": "tool", "tool_call_id": "a", "content": "r"},
            ],
            None,
        ),
    ],
)
def test_cohere_tool_rules(messages: list[dict[str, Any]], rule: str | None) -> None:
    assert broken_rule(COHERE_RULES, {"model": "command-a-03-2025", "messages": messages}) == rule


def _converse_user(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks) or [{"text": "Hi"}]}


def _converse_use(tool_id: str) -> dict[str, Any]:
    return {"toolUse": {"toolUseId": tool_id, "name": "f", "input": {}}}


def _converse_result(tool_id: str) -> dict[str, Any]:
    return {"toolResult": {"toolUseId": tool_id, "content": [{"text": "r"}]}}


_THINK_ON = {"additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 1024}}}


@pytest.mark.parametrize(
    ("body", "rule"),
    [
        ({"messages": [_converse_user()]}, None),
        (
            {"messages": [{"role": "assistant", "content": [{"text": "x"}]}, _converse_user()]},
            "first_message_not_user",
        ),
        ({"messages": [_converse_user(), _converse_user()]}, "roles_not_alternating"),
        ({"messages": [_converse_user(), _converse_user(_converse_result("a"))]}, "roles_not_alternating"),
        (
            {
                "messages": [
                    _converse_user(),
                    {"role": "assistant", "content": [_converse_use("a")]},
                    _converse_user(_converse_result("b")),
                ]
            },
            "tool_result_without_tool_use",
        ),
        (
            {
                "messages": [
                    _converse_user(),
                    {"role": "assistant", "content": [_converse_use("a")]},
                    _converse_user(_converse_result("a"), _converse_result("a")),
                ]
            },
            "tool_result_without_tool_use",
        ),
        (
            {
                "messages": [
                    _converse_user(),
                    {"role": "assistant", "content": [_converse_use("a")]},
                    _converse_user(),
                ]
            },
            "tool_use_without_tool_result",
        ),
        (
            {
                **_THINK_ON,
                "messages": [
                    _converse_user(),
                    {"role": "assistant", "content": [_converse_use("a")]},
                    _converse_user(_converse_result("a")),
                ],
            },
            "thinking_block_not_first",
        ),
        (
            {
                **_THINK_ON,
                "messages": [
                    _converse_user(),
                    {
                        "role": "assistant",
                        "content": [
                            {
                                "reasoningContent": {
                                    "reasoningText": {"text": "Think.", "signature": KEYED_SIGNATURE}
                                }
                            },
                            _converse_use("a"),
                        ],
                    },
                    _converse_user(_converse_result("a")),
                ],
            },
            None,
        ),
        (
            {
                **_THINK_ON,
                "messages": [
                    _converse_user(),
                    {
                        "role": "assistant",
                        "content": [
                            {
                                "reasoningContent": {
                                    "reasoningText": {"text": "Other.", "signature": KEYED_SIGNATURE}
                                }
                            },
                            _converse_use("a"),
                        ],
                    },
                    _converse_user(_converse_result("a")),
                ],
            },
            "thinking_block_modified",
        ),
        (
            {
                **_THINK_ON,
                "messages": [
                    _converse_user(),
                    {"role": "assistant", "content": [{"reasoningContent": {"redactedContent": "Zm9yZ2Vk"}}]},
                    _converse_user(),
                ],
            },
            "thinking_block_modified",
        ),
        (
            {
                "additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 512}},
                "messages": [_converse_user()],
            },
            "thinking_budget",
        ),
        (
            {**_THINK_ON, "inferenceConfig": {"maxTokens": 1024}, "messages": [_converse_user()]},
            "thinking_budget",
        ),
        ({**_THINK_ON, "inferenceConfig": {"maxTokens": 2048}, "messages": [_converse_user()]}, None),
    ],
)
def test_bedrock_converse_rules(body: dict[str, Any], rule: str | None) -> None:
    assert broken_rule(CONVERSE_RULES, body) == rule
