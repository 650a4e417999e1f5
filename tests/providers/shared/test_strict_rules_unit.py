"""The strict rule tables in memory: each rule's check on bodies that break it and bodies that do not,
and ``check_strict``'s error (docs/realistic-answers.md, "Strict request contract")."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from llmts.errors import InvalidRequest, StrictRequestRejected
from llmts.providers.anthropic_messages.strict_rules import MESSAGES_RULES
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

    text = (Path(__file__).resolve().parents[3] / "docs" / "realistic-answers.md").read_text(encoding="utf-8")
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


# --- reasoning blocks passed back, Cohere, Bedrock Converse, the markers' fast path ------------------

_KEYED = BOOK.sign("Think.")


@pytest.mark.parametrize(
    ("block", "rule"),
    [
        ({"type": "thinking", "thinking": "Think.", "signature": _KEYED}, None),
        ({"type": "thinking", "thinking": "Think!", "signature": _KEYED}, "thinking_block_modified"),
        ({"type": "thinking", "thinking": "t", "signature": "s"}, None),  # scripted with that text
        ({"type": "thinking", "thinking": "u", "signature": "s"}, "thinking_block_modified"),
        ({"type": "thinking", "thinking": "Think."}, "thinking_block_modified"),
        ({"type": "redacted_thinking", "data": _KEYED}, None),
        ({"type": "redacted_thinking", "data": "x"}, None),
        ({"type": "redacted_thinking", "data": "forged"}, "thinking_block_modified"),
    ],
)
def test_anthropic_thinking_blocks_must_be_the_ones_issued(block: dict[str, Any], rule: str | None) -> None:
    messages = [
        HI,
        {"role": "assistant", "content": [block, _use("a")]},
        {"role": "user", "content": [_result("a")]},
    ]
    assert _broken(MESSAGES_RULES, {"max_tokens": 4096, "thinking": _ON, "messages": messages}) == rule
    # Thinking off: passed-back blocks are not checked.
    assert _broken(MESSAGES_RULES, {"max_tokens": 4096, "messages": messages}) is None


def test_anthropic_adaptive_thinking_checks_blocks_but_requires_none() -> None:
    adaptive = {"type": "adaptive"}
    forged = {"type": "thinking", "thinking": "Think.", "signature": "forged"}
    with_forged = [
        HI,
        {"role": "assistant", "content": [forged, _use("a")]},
        {"role": "user", "content": [_result("a")]},
    ]
    without = [HI, {"role": "assistant", "content": [_use("a")]}, {"role": "user", "content": [_result("a")]}]
    body = {"max_tokens": 4096, "thinking": adaptive}
    assert _broken(MESSAGES_RULES, {**body, "messages": with_forged}) == "thinking_block_modified"
    # The model may not have thought in that turn: no thinking block is required, and no budget applies.
    assert _broken(MESSAGES_RULES, {**body, "messages": without}) is None


def test_anthropic_checks_blocks_of_early_turns_and_names_them() -> None:
    forged = {"type": "thinking", "thinking": "Think.", "signature": "forged"}
    messages = [HI, {"role": "assistant", "content": [forged, {"type": "text", "text": "Hi"}]}, HI]
    body = {"max_tokens": 4096, "thinking": _ON, "messages": messages}
    with pytest.raises(StrictRequestRejected) as error:
        check_strict(MESSAGES_RULES, orjson.dumps(body), body, BOOK)
    assert error.value.message.startswith("messages.1.content.0: Invalid `signature` in `thinking` block")


def test_gemini_thought_signatures_must_be_unchanged() -> None:
    import base64

    keyed = base64.b64encode(base64.b64decode(_KEYED)).decode()
    good = {"contents": [HI_GEMINI, {"role": "model", "parts": [{"text": "a", "thoughtSignature": keyed}]}]}
    bad = {
        "contents": [HI_GEMINI, {"role": "model", "parts": [{"text": "a", "thought_signature": "Zm9yZ2Vk"}]}]
    }
    assert _broken(GENERATE_RULES, good) is None
    assert _broken(GENERATE_RULES, bad) == "thought_signature_corrupted"


@pytest.mark.parametrize(
    "dummy", [b"skip_thought_signature_validator", b"context_engineering_is_the_way_to_go"]
)
def test_gemini_accepts_the_documented_dummy_thought_signatures(dummy: bytes) -> None:
    """The thought signatures guide's dummy values pass the real API (pydantic-ai sends the first on every
    function call it passes back that had no signature); a regression: the rule once refused them."""
    import base64

    call = {"functionCall": {"name": "f", "args": {}}, "thoughtSignature": base64.b64encode(dummy).decode()}
    body = {
        "contents": [
            HI_GEMINI,
            {"role": "model", "parts": [call]},
            {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]},
        ]
    }
    assert _broken(GENERATE_RULES, body) is None
    call["thoughtSignature"] = base64.b64encode(dummy + b"x").decode()
    assert _broken(GENERATE_RULES, body) == "thought_signature_corrupted"


HI_GEMINI = {"role": "user", "parts": [{"text": "Hi"}]}


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
    assert _broken(COHERE_RULES, {"model": "command-a-03-2025", "messages": messages}) == rule


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
                            {"reasoningContent": {"reasoningText": {"text": "Think.", "signature": _KEYED}}},
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
                            {"reasoningContent": {"reasoningText": {"text": "Other.", "signature": _KEYED}}},
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
    assert _broken(CONVERSE_RULES, body) == rule


def test_a_rule_whose_markers_are_absent_never_runs() -> None:
    """The fast path: without any of its markers in the raw body, a rule's check is not even called."""
    calls: list[int] = []

    def check(body: dict[str, Any], signatures: SignatureBook) -> None:
        calls.append(1)
        return None

    rule = StrictRule("r", check, code="r", source="-", markers=(b'"tool_result"', b"redacted"))
    body = {"messages": [HI] * 50}
    check_strict((rule,), orjson.dumps(body), body, BOOK)
    assert calls == []
    check_strict((rule,), b'{"x": "redacted"}', body, BOOK)
    assert calls == [1]


def test_responses_encrypted_content_must_be_issued() -> None:
    def body(content: Any) -> dict[str, Any]:
        reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": content}
        return {"model": "o3", "input": [HI, reasoning]}

    assert _broken(RESPONSES_RULES, body(_KEYED)) is None
    assert _broken(RESPONSES_RULES, body("s")) is None  # a scripted signature
    assert _broken(RESPONSES_RULES, body(None)) is None
    assert _broken(RESPONSES_RULES, body("gAAAAforgedforgedforged==")) == "encrypted_content_unverified"
    with pytest.raises(StrictRequestRejected) as error:
        forged = body("gAAAAforgedforgedforged==")
        check_strict(RESPONSES_RULES, orjson.dumps(forged), forged, BOOK)
    assert error.value.code == "invalid_encrypted_content"
    assert error.value.message.startswith("The encrypted content gAAA...ed== could not be verified.")


def _rejected(table: tuple[StrictRule, ...], body: dict[str, Any]) -> StrictRequestRejected:
    with pytest.raises(StrictRequestRejected) as caught:
        check_strict(table, orjson.dumps(body), body, BOOK)
    return caught.value


@pytest.mark.parametrize(
    ("table", "body", "code", "param", "message"),
    [
        (
            CHAT_RULES,
            {"temperature": 3},
            "decimal_above_max_value",
            "temperature",
            "Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got 3 instead.",
        ),
        (
            CHAT_RULES,
            {"presence_penalty": -2.5},
            "decimal_below_min_value",
            "presence_penalty",
            "Invalid 'presence_penalty': decimal below minimum value. Expected a value >= -2, but got -2.5 "
            "instead.",
        ),
        (
            RESPONSES_RULES,
            {"top_logprobs": 21},
            "integer_above_max_value",
            "top_logprobs",
            "Invalid 'top_logprobs': integer above maximum value. Expected a value <= 20, "
            "but got 21 instead.",
        ),
        (
            MESSAGES_RULES,
            {"temperature": 1.5},
            "parameter_out_of_range",
            "temperature",
            "temperature: range: 0..1",
        ),
        (MESSAGES_RULES, {"top_k": -1}, "parameter_out_of_range", "top_k", "top_k: range: 0.."),
        (
            GENERATE_RULES,
            {"generationConfig": {"topP": 1.5}},
            "parameter_out_of_range",
            "generationConfig.topP",
            "Unable to submit request because it has a topP value of 1.5 but the supported range is from 0 "
            "(inclusive) to 1 (inclusive). Update the value and try again.",
        ),
        (
            CONVERSE_RULES,
            {"inferenceConfig": {"temperature": 1.5}},
            "parameter_out_of_range",
            "inferenceConfig.temperature",
            "1 validation error detected: Value '1.5' at 'inferenceConfig.temperature' failed to satisfy "
            "constraint: Member must have value less than or equal to 1",
        ),
        (
            COHERE_RULES,
            {"p": 0},
            "parameter_out_of_range",
            "p",
            "invalid request: p must be between 0.01 and 0.99, got 0",
        ),
    ],
    ids=[
        "chat",
        "chat-below",
        "responses-integer",
        "anthropic",
        "anthropic-open",
        "gemini",
        "bedrock",
        "cohere",
    ],
)
def test_numeric_ranges_in_each_providers_words(
    table: tuple[StrictRule, ...], body: dict[str, Any], code: str, param: str, message: str
) -> None:
    error = _rejected(table, body)

    assert (error.rule, error.code, error.param) == ("parameter_out_of_range", code, param)
    assert error.message.startswith(message + " (llmts strict rule parameter_out_of_range;")


@pytest.mark.parametrize(
    ("table", "body"),
    [
        (CHAT_RULES, {"temperature": 2, "top_p": 0, "frequency_penalty": -2, "presence_penalty": 2, "n": 9}),
        (CHAT_RULES, {"temperature": "hot", "top_p": None, "top_logprobs": True}),  # types: the parser's
        (RESPONSES_RULES, {"temperature": 0.0, "top_p": 1.0, "top_logprobs": 20}),
        (MESSAGES_RULES, {"temperature": 1, "top_p": 0.5, "top_k": 0}),
        (GENERATE_RULES, {"generation_config": {"temperature": 2, "top_k": 1}}),
        (CONVERSE_RULES, {"inferenceConfig": {"temperature": 0, "topP": 1, "maxTokens": 1}}),
        (COHERE_RULES, {"temperature": 5, "p": 0.99, "k": 500}),
    ],
)
def test_values_at_the_published_limits_pass(table: tuple[StrictRule, ...], body: dict[str, Any]) -> None:
    assert _broken(table, body) is None
