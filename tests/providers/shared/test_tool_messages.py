"""Tool-call pairing walkers shared by the OpenAI Chat and Cohere v2 strict rules
(llmts/providers/tool_messages.py; docs/realistic-answers.md, "Strict request contract")."""

from __future__ import annotations

from typing import Any

import pytest

from llmts.providers.tool_messages import messages_of, orphan_tool_result, unanswered_tool_calls

_USER = {"role": "user", "content": "hi"}


def _asks(*ids: str) -> dict[str, Any]:
    return {"role": "assistant", "tool_calls": [{"id": i, "type": "function"} for i in ids]}


def _answers(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": "r"}


def test_messages_of_tolerates_a_body_without_a_list() -> None:
    assert messages_of({}) == [] and messages_of({"messages": "x"}) == []
    assert messages_of({"messages": [_USER]}) == [_USER]


@pytest.mark.parametrize(
    ("messages", "found"),
    [
        ([_USER, _asks("a", "b"), _answers("b"), _answers("a"), _USER], None),
        ([_USER, _answers("a")], (1, "a", False)),  # no assistant turn with calls before it
        ([_USER, _asks("a"), _answers("b")], (2, "b", True)),  # a call id the turn did not make
        ([_USER, _asks("a"), _answers("a"), _USER, _answers("a")], (4, "a", False)),  # the run ended
        ([_USER, _asks("a"), "not a message", _answers("a")], (3, "a", False)),
    ],
)
def test_orphan_tool_result_names_the_first_result_without_its_call(
    messages: list[Any], found: tuple[int, str, bool] | None
) -> None:
    assert orphan_tool_result(messages) == found


@pytest.mark.parametrize(
    ("messages", "last_may_wait", "found"),
    [
        ([_USER, _asks("a", "b"), _answers("a"), _answers("b")], False, None),
        ([_USER, _asks("a", "b"), _answers("a"), _USER], False, (1, ["b"])),
        ([_USER, _asks("a", "b"), _USER, _answers("a")], False, (1, ["a", "b"])),  # not right after it
        ([_USER, _asks("a")], False, (1, ["a"])),
        ([_USER, _asks("a")], True, None),  # the last turn's results are not due yet
        ([_USER, _asks("a"), _USER, _asks("b")], True, (1, ["a"])),
    ],
)
def test_unanswered_tool_calls_names_the_first_turn_with_calls_left_open(
    messages: list[Any], last_may_wait: bool, found: tuple[int, list[str]] | None
) -> None:
    assert unanswered_tool_calls(messages, last_may_wait=last_may_wait) == found
