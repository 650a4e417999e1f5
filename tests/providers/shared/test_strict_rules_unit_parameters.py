"""The strict rule tables in memory, on sampling parameters (reasoning models, numeric ranges in each
provider's words, values at the published limits), and what holds for every table: ``check_strict``'s
error, the markers' fast path, a source per rule and a row per rule in docs/realistic-answers.md
("Strict request contract")."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from llmts.errors import InvalidRequest, StrictRequestRejected
from llmts.providers.adapters import ADAPTERS
from llmts.providers.anthropic_messages.strict_rules import MESSAGES_RULES
from llmts.providers.bedrock.strict_rules import CONVERSE_RULES
from llmts.providers.cohere.strict_rules import CHAT_RULES as COHERE_RULES
from llmts.providers.gemini.strict_rules import GENERATE_RULES
from llmts.providers.openai.strict_rules import CHAT_RULES, RESPONSES_RULES
from llmts.providers.strict import StrictRule, check_strict
from llmts.runtime.signatures import SignatureBook
from tests.providers.shared.strict_rules_support import (
    BOOK,
    HI,
    broken_rule,
)


def _rule(table: tuple[StrictRule, ...], name: str) -> StrictRule:
    return next(rule for rule in table if rule.name == name)


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
    assert broken_rule(CHAT_RULES, {"model": model, "messages": [HI], **params}) == rule
    assert broken_rule(RESPONSES_RULES, {"model": model, "input": "Hi", **params}) == rule


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


def _routed_tables() -> set[tuple[StrictRule, ...]]:
    """The rule table of every route of every registered adapter."""
    return {getattr(route, "strict_rules", ()) for adapter in ADAPTERS for route in adapter.routes}


def test_every_rule_names_a_source_and_has_a_unique_name_per_table() -> None:
    for table in (CHAT_RULES, RESPONSES_RULES, MESSAGES_RULES, GENERATE_RULES):
        names = [rule.name for rule in table]
        assert len(names) == len(set(names))
        assert all(rule.source.startswith("https://") for rule in table)


def test_docs_table_lists_every_rule() -> None:
    """Every rule any route runs, found through the registered adapters (a new route's rules included)."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[3] / "docs" / "realistic-answers.md").read_text(encoding="utf-8")
    routed = {rule.name for table in _routed_tables() for rule in table}
    assert {rule.name for rule in (*CHAT_RULES, *COHERE_RULES, *CONVERSE_RULES)} <= routed
    missing = sorted(name for name in routed if f"`{name}`" not in text)
    assert not missing, f"docs/realistic-answers.md does not list the strict rule(s) {', '.join(missing)}"
    assert _rule(CHAT_RULES, "tool_calls_unanswered").code == "tool_calls_unanswered"


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
    assert broken_rule(table, body) is None
