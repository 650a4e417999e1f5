"""Conversation graphs through the official OpenAI SDK (Chat Completions) over the real server."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

from llmts import ConfigBuilder, SessionClient
from tests.helpers import APPROVAL_STEPS, TIME_TOOL, WEATHER_TOOL

pytestmark = pytest.mark.sdk

MODEL = "gpt-4.1-mini"

APPROVAL: dict[str, Any] = {
    "conversations": [
        {
            "id": "approval",
            "start_at": "ask",
            "terminal_policy": "reject",
            "max_steps": 64,
            "replay_successful_requests": True,
            "steps": APPROVAL_STEPS,
        }
    ]
}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def ask(client: Any, *messages: dict[str, Any], **kwargs: Any) -> str:
    reply = client.chat.completions.create(model=MODEL, messages=list(messages), **kwargs)
    return str(reply.choices[0].message.content)


def conflict(client: Any, *messages: dict[str, Any], **kwargs: Any) -> openai.APIStatusError:
    with pytest.raises(openai.APIStatusError) as caught:
        client.chat.completions.create(model=MODEL, messages=list(messages), **kwargs)
    return caught.value


def only_state(session: SessionClient, conversation_id: str = "default") -> dict[str, Any]:
    states = session.conversations(conversation_id)
    assert len(states) == 1, states
    return states[0]


@pytest.mark.parametrize(
    ("choice", "answer", "step", "unvisited"),
    [("Approve", "Approved", "approve", ["cancel"]), ("Cancel", "Cancelled", "cancel", ["approve"])],
)
def test_approval_example_both_branches(
    app_session: SessionClient, choice: str, answer: str, step: str, unvisited: list[str]
) -> None:
    app_session.configure(APPROVAL)
    conversation = app_session.for_conversation("approval-test")
    chat = conversation.openai_client(_strict_response_validation=True, max_retries=0)

    first = ask(chat, user("Start"))
    second = ask(chat, user("Start"), assistant(first), user(choice))

    assert (first, second) == ("Approve or cancel?", answer)
    state = only_state(app_session, "approval-test")
    assert state["scenario"] == "approval" and state["provider"] == "openai"
    assert state["executed_steps"] == ["ask", step]
    assert state["state"] == "completed" and state["terminal"] and not state["busy"]
    assert state["last_turn"] == 2 and state["next_steps"] == [] and state["unvisited_steps"] == unvisited
    journal = app_session.requests(order="asc")
    assert [(e["conversation"], e["step"], e["turn"]) for e in journal] == [
        ("approval-test", "ask", 1),
        ("approval-test", step, 2),
    ]


def test_ordered_alternatives_pick_the_first_matching_target(app_session: SessionClient) -> None:
    graph = (
        ConfigBuilder()
        .conversation("support")
        .step("greet")
        .when(turn=1)
        .text("How can I help?")
        .then("refund", "anything")
        .step("refund")
        .when(latest_user_contains="refund")
        .text("Refund started")
        .complete()
        .step("anything")
        .text("Noted")
        .complete()
    )
    app_session.configure(graph)
    refund = app_session.for_conversation("a").openai_client(max_retries=0)
    other = app_session.for_conversation("b").openai_client(max_retries=0)

    assert ask(refund, user("Hi")) == ask(other, user("Hi")) == "How can I help?"
    # Both targets match "a refund please": the first in then-order wins.
    assert ask(refund, user("Hi"), assistant("How can I help?"), user("a refund please")) == "Refund started"
    assert ask(other, user("Hi"), assistant("How can I help?"), user("just saying hi")) == "Noted"
    assert only_state(app_session, "a")["executed_steps"] == ["greet", "refund"]
    assert only_state(app_session, "b")["executed_steps"] == ["greet", "anything"]


def test_latest_message_predicates_do_not_search_history(app_session: SessionClient) -> None:
    app_session.configure(
        ConfigBuilder()
        .conversation("confirm")
        .step("ask")
        .when(latest_role="user", latest_user_contains="order")
        .text("Confirm?")
        .then("yes")
        .step("yes")
        .when(latest_user_contains="yes", latest_text_contains="yes")
        .text("Done")
        .complete()
    )
    chat = app_session.openai_client(max_retries=0)
    history = [user("order: yes, my order"), assistant("Confirm?")]

    assert ask(chat, history[0]) == "Confirm?"
    # "yes" appears in the first user message, not in the latest one: no match, nothing advances.
    error = conflict(chat, *history, user("no"))
    assert error.status_code == 409 and error.code == "conversation_step_mismatch"
    assert "latest_user_contains" in error.message and "latest_text_contains" in error.message
    # The latest message is the assistant's: latest_user_* predicates never pass on another role.
    assert conflict(chat, *history, user("no"), assistant("yes")).code == "conversation_step_mismatch"
    assert only_state(app_session)["executed_steps"] == ["ask"]
    assert ask(chat, *history, user("yes please")) == "Done"


def test_logical_turn_counts_assistant_groups_not_attempts(app_session: SessionClient) -> None:
    app_session.configure(
        ConfigBuilder()
        .conversation("turns")
        .step("one")
        .when(turn=1)
        .text("first")
        .then("three")
        .step("three")
        .when(turn=3)
        .text("third")
        .complete()
    )
    chat = app_session.openai_client(max_retries=0)
    assert ask(chat, {"role": "system", "content": "be brief"}, user("a")) == "first"
    # System/developer messages do not count; consecutive assistant messages are one group; turn 2 != 3.
    turn_two = [
        {"role": "developer", "content": "x"},
        user("a"),
        assistant("first"),
        assistant("more"),
        user("b"),
    ]
    assert conflict(chat, *turn_two).code == "conversation_step_mismatch"
    turn_three = [*turn_two, assistant("second"), {"role": "system", "content": "s"}, user("c")]
    assert ask(chat, *turn_three) == "third"
    state = only_state(app_session)
    assert (state["last_turn"], state["executions"]) == (3, 2)


def test_parallel_tool_calls_and_results_with_argument_matching(app_session: SessionClient) -> None:
    app_session.configure(
        ConfigBuilder()
        .conversation("tools")
        .step("call")
        .when(turn=1)
        .tool_calls(
            {"id": "call_w", "name": "get_weather", "arguments": {"city": "Paris"}},
            {"id": "call_t", "name": "get_time", "arguments": {"tz": "CET"}},
        )
        .then("paris", "elsewhere")
        .step("paris")
        .when(turn=2, tool_result="get_weather", call_id="call_w", tool_arguments_json={"city": "Paris"})
        .when(latest_role="tool")
        .text("Sunny in Paris")
        .complete()
        .step("elsewhere")
        .when(tool_result="get_weather")
        .text("Somewhere else")
        .complete()
    )
    tools = [WEATHER_TOOL, TIME_TOOL]

    def results_for(client: Any, city: str) -> str:
        first = client.chat.completions.create(model=MODEL, messages=[user("Weather and time?")], tools=tools)
        calls = first.choices[0].message.tool_calls
        assert [(c.id, c.function.name, json.loads(c.function.arguments)) for c in calls] == [
            ("call_w", "get_weather", {"city": "Paris"}),
            ("call_t", "get_time", {"tz": "CET"}),
        ]
        said = [
            {
                "id": "call_w",
                "type": "function",
                "function": {"name": "get_weather", "arguments": json.dumps({"city": city})},
            },
            {
                "id": "call_t",
                "type": "function",
                "function": {"name": "get_time", "arguments": '{"tz":"CET"}'},
            },
        ]
        history = [
            user("Weather and time?"),
            {"role": "assistant", "content": None, "tool_calls": said},
            {"role": "tool", "tool_call_id": "call_w", "content": "18C"},
            {"role": "tool", "tool_call_id": "call_t", "content": "12:00"},
        ]
        return ask(client, *history, tools=tools)

    assert (
        results_for(app_session.for_conversation("p").openai_client(max_retries=0), "Paris")
        == "Sunny in Paris"
    )
    # Same results, but the history says the model asked for Lyon: the argument predicate fails.
    assert (
        results_for(app_session.for_conversation("l").openai_client(max_retries=0), "Lyon")
        == "Somewhere else"
    )
    assert only_state(app_session, "p")["executed_steps"] == ["call", "paris"]
    assert only_state(app_session, "l")["executed_steps"] == ["call", "elsewhere"]


def test_json_path_predicates(app_session: SessionClient) -> None:
    app_session.configure(
        ConfigBuilder()
        .conversation("orders")
        .step("start")
        .when(turn=1)
        .text("Send the order")
        .then("paid", "unpaid")
        .step("paid")
        .when(latest_json=("$.order.items[0].sku", "A-1"), latest_json_value=("/order/status~1state", "paid"))
        .json({"shipped": True})
        .complete()
        .step("unpaid")
        .when(latest_json=("$['order'].total", '{"amount": 10}'))
        .text("Please pay 10")
        .complete()
    )
    base = [user("hi"), assistant("Send the order")]
    paid = {"order": {"items": [{"sku": "A-1"}], "status/state": "paid", "total": {"amount": 10}}}
    unpaid = {"order": {"items": [{"sku": "A-1"}], "status/state": "open", "total": {"amount": 10.0}}}

    chat = app_session.for_conversation("paid").openai_client(max_retries=0)
    assert ask(chat, user("hi")) == "Send the order"
    assert json.loads(ask(chat, *base, user(json.dumps(paid)))) == {"shipped": True}

    chat = app_session.for_conversation("unpaid").openai_client(max_retries=0)
    ask(chat, user("hi"))
    # Malformed JSON and a missing field fail every JSON predicate; nothing advances.
    assert conflict(chat, *base, user("{not json")).code == "conversation_step_mismatch"
    assert conflict(chat, *base, user('{"order": {}}')).code == "conversation_step_mismatch"
    # 10.0 equals the expected 10 structurally; the expected JSON text was given as a string.
    assert ask(chat, *base, user(json.dumps(unpaid))) == "Please pay 10"


def test_replay_returns_the_same_answer_without_advancing(app_session: SessionClient) -> None:
    app_session.configure(APPROVAL)
    chat = app_session.openai_client(_strict_response_validation=True, max_retries=0)
    first = chat.chat.completions.create(model=MODEL, messages=[user("Start")])

    again = chat.chat.completions.create(model=MODEL, messages=[user("Start")])
    streamed = "".join(
        chunk.choices[0].delta.content or ""
        for chunk in chat.chat.completions.create(model=MODEL, messages=[user("Start")], stream=True)
        if chunk.choices
    )

    assert again.id == first.id and again.choices[0].message.content == "Approve or cancel?"
    assert streamed == "Approve or cancel?"  # the streaming flag is not part of the fingerprint
    state = only_state(app_session)
    assert (state["executions"], state["replays"], state["executed_steps"]) == (1, 2, ["ask"])
    assert [e["replayed"] for e in app_session.requests(order="asc")] == [False, True, True]
    # Changed input at an already answered turn cannot advance it.
    error = conflict(chat, user("Start!"))
    assert error.status_code == 409 and error.code == "conversation_turn_not_advanced"
    assert ask(chat, user("Start"), assistant("Approve or cancel?"), user("Approve")) == "Approved"


def test_without_replay_a_repeated_request_does_not_advance(app_session: SessionClient) -> None:
    config = json.loads(json.dumps(APPROVAL))
    config["conversations"][0]["replay_successful_requests"] = False
    app_session.configure(config)
    chat = app_session.openai_client(max_retries=0)
    assert ask(chat, user("Start")) == "Approve or cancel?"
    assert conflict(chat, user("Start")).code == "conversation_turn_not_advanced"
    assert only_state(app_session)["executions"] == 1


def test_error_step_then_recovery_at_the_same_turn(app_session: SessionClient) -> None:
    app_session.configure(
        ConfigBuilder()
        .conversation("flaky")
        .step("fail")
        .when(turn=1)
        .error(503, "overloaded", "Try again", should_retry=False)
        .then("recover")
        .step("recover")
        .when(turn=1)
        .text("Recovered")
        .complete()
    )
    chat = app_session.openai_client(max_retries=0)
    with pytest.raises(openai.InternalServerError) as caught:
        ask(chat, user("Hi"))
    assert caught.value.status_code == 503 and caught.value.code == "overloaded"
    state = only_state(app_session)
    assert (state["executed_steps"], state["last_successful_turn"], state["next_steps"]) == (
        ["fail"],
        None,
        ["recover"],
    )
    assert ask(chat, user("Hi")) == "Recovered"
    assert only_state(app_session)["executed_steps"] == ["fail", "recover"]


@pytest.mark.parametrize("policy", ["reject", "repeat_last_response", "restart"])
def test_terminal_policies(app_session: SessionClient, policy: str) -> None:
    config = json.loads(json.dumps(APPROVAL))
    config["conversations"][0]["terminal_policy"] = policy
    app_session.configure(config)
    chat = app_session.openai_client(max_retries=0)
    assert ask(chat, user("Start")) == "Approve or cancel?"
    assert ask(chat, user("Start"), assistant("Approve or cancel?"), user("Approve")) == "Approved"
    # An identical successful replay comes before terminal handling, whatever the policy.
    assert ask(chat, user("Start"), assistant("Approve or cancel?"), user("Approve")) == "Approved"

    if policy == "reject":
        assert conflict(chat, user("Start")).code == "conversation_completed"
        assert only_state(app_session)["state"] == "completed"
    elif policy == "repeat_last_response":
        assert ask(chat, user("anything at all")) == "Approved"
        assert ask(chat, user("something else")) == "Approved"
        assert only_state(app_session)["executions"] == 2
    else:
        assert only_state(app_session)["next_steps"] == ["ask"]
        assert conflict(chat, user("not the start")).code == "conversation_step_mismatch"
        assert ask(chat, user("Start")) == "Approve or cancel?"
        state = only_state(app_session)
        assert (state["run"], state["executed_steps"], state["unvisited_steps"]) == (
            2,
            ["ask"],
            ["approve", "cancel"],
        )
        assert ask(chat, user("Start"), assistant("Approve or cancel?"), user("Cancel")) == "Cancelled"


def test_cycles_are_bounded_by_max_steps(app_session: SessionClient) -> None:
    app_session.configure(
        ConfigBuilder()
        .conversation("loop", max_steps=3)
        .step("ping")
        .text("ping")
        .then("pong")
        .step("pong")
        .text("pong")
        .then("ping")
    )
    chat = app_session.openai_client(max_retries=0)
    history: list[dict[str, Any]] = []
    answers = []
    for turn in range(3):
        history.append(user(f"go {turn}"))
        answers.append(ask(chat, *history))
        history.append(assistant(answers[-1]))
    history.append(user("go 3"))

    assert answers == ["ping", "pong", "ping"]
    assert conflict(chat, *history).code == "conversation_exhausted"
    state = only_state(app_session)
    assert (state["state"], state["executions"], state["terminal"]) == ("exhausted", 3, True)


def test_fixture_mismatch_does_not_advance(app_session: SessionClient) -> None:
    app_session.configure(
        ConfigBuilder()
        .conversation("weather")
        .step("hello")
        .text("Hello")
        .then("call")
        .step("call")
        .tool_call("get_weather", {"city": "Paris"})
        .complete()
    )
    chat = app_session.openai_client(max_retries=0)
    assert ask(chat, user("hi")) == "Hello"
    history = [user("hi"), assistant("Hello"), user("weather?")]

    # The request declares no tools: the step's tool call cannot answer it.
    assert conflict(chat, *history).code == "llm_test_server_fixture_mismatch"
    assert conflict(chat, *history, tool_choice="none", tools=[WEATHER_TOOL]).code == (
        "llm_test_server_fixture_mismatch"
    )
    state = only_state(app_session)
    assert (state["executed_steps"], state["next_steps"], state["busy"]) == (["hello"], ["call"], False)
    reply = chat.chat.completions.create(model=MODEL, messages=history, tools=[WEATHER_TOOL])
    assert reply.choices[0].message.tool_calls[0].function.name == "get_weather"


def test_a_start_mismatch_and_a_rejected_first_fixture_leave_no_state(app_session: SessionClient) -> None:
    app_session.configure(APPROVAL)
    chat = app_session.openai_client(max_retries=0)
    error = conflict(chat, user("Hello"))
    assert error.code == "conversation_step_mismatch" and "latest_user_equals" in error.message
    assert conflict(chat, user("Start"), tool_choice="required", tools=[WEATHER_TOOL]).code == (
        "llm_test_server_fixture_mismatch"
    )
    assert app_session.conversations() == []
