"""Admission and ``POST /admin-api/match/explain`` are one selection (docs/architecture.md, "Selection"):
the same requests, explained first and then sent for real over HTTP with the official SDK, agree on the
outcome, the owner, the step and the error message, across graphs and scenarios (start, execute, replay,
step mismatch, completed, exhausted graph, scenario answer, exhausted scenario, fixture mismatch, a graph
that does not start, an unknown model, nothing serving the model)."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from llmts import ConfigBuilder, SessionClient
from llmts.client import ServerError
from tests.support.in_process import send_raw

ANSWERED = {"start", "execute", "restart", "repeat_last_response", "replay", "scenario"}


# The conversations and scenarios both selection paths are checked against.
GRAPH = (
    ConfigBuilder()
    .models("gpt-4.1-mini", "gpt-4.1", "gpt-4o", "gpt-4-turbo", "o3")
    .conversation("approval", model="gpt-4.1-mini")
    .step("ask")
    .when(latest_user_equals="Start", turn=1)
    .text("Approve or cancel?")
    .then("approve", "cancel")
    .step("approve")
    .when(latest_user_equals="Approve", turn=2)
    .text("Approved")
    .complete()
    .step("cancel")
    .when(latest_user_equals="Cancel", turn=2)
    .text("Cancelled")
    .complete()
    .conversation("strict", model="gpt-4o")
    .step("go")
    .when(latest_user_equals="Go")
    .text("Going")
    .complete()
    .conversation("loop", model="gpt-4-turbo", max_steps=1)
    .step("again")
    .text("Again")
    .then("again")
    .scenario("fallback", model="gpt-4.1-mini")
    .text("fallback")
    .scenario("never", model="gpt-4.1-mini")  # shadowed by fallback
    .text("never")
    .scenario("tooly", model="gpt-4.1")
    .tool_call("get_weather", {"city": "Paris"})
).build()


def _history(*texts: str) -> list[dict[str, str]]:
    roles = ("user", "assistant")
    return [{"role": roles[index % 2], "content": text} for index, text in enumerate(texts)]


# (conversation id, model, user/assistant texts, expected outcome): run in order, state carries over.
CASES: list[tuple[str, str, tuple[str, ...], str]] = [
    ("parity", "gpt-4.1-mini", ("Start",), "start"),
    ("parity", "gpt-4.1-mini", ("Start",), "replay"),
    ("parity", "gpt-4.1-mini", ("Start", "Approve or cancel?", "Maybe"), "conversation_step_mismatch"),
    ("parity", "gpt-4.1-mini", ("Start", "Approve or cancel?", "Approve"), "execute"),
    ("parity", "gpt-4.1-mini", ("Start", "Approve or cancel?", "Approve"), "replay"),
    ("parity", "gpt-4.1-mini", ("Start", "A", "Approve", "Approved", "More"), "conversation_completed"),
    ("fresh", "gpt-4.1-mini", ("Hello",), "scenario"),
    ("fresh", "gpt-4.1-mini", ("Hello", "fallback", "Again"), "llm_test_server_scenario_exhausted"),
    ("parity", "gpt-4.1", ("Hi",), "llm_test_server_fixture_mismatch"),
    ("parity", "gpt-4o", ("Nope",), "conversation_step_mismatch"),
    ("parity", "gpt-4o", ("Go",), "start"),
    ("parity", "gpt-4-turbo", ("X",), "start"),
    ("parity", "gpt-4-turbo", ("X", "Again", "Y"), "conversation_exhausted"),
    ("parity", "gpt-9", ("Hi",), "model_not_found"),
    ("parity", "o3", ("Hi",), "llm_test_server_no_matching_scenario"),
]


def _send(session: SessionClient, conversation: str, model: str, messages: Any) -> dict[str, Any]:
    """The real request; what admission decided, read back from the answer and the journal."""
    client = session.for_conversation(conversation).openai_client(
        max_retries=0, _strict_response_validation=True
    )
    try:
        client.chat.completions.create(model=model, messages=messages)
    except openai.APIStatusError as exc:
        error = exc.body if isinstance(exc.body, dict) else {}
        entry = session.requests()[0]
        return {
            "answered": False,
            "code": error.get("code"),
            "message": error.get("message"),
            "owner": entry["scenario"],
            "step": entry["step"],
        }
    entry = session.requests()[0]
    return {
        "answered": True,
        "code": None,
        "message": None,
        "owner": entry["scenario"],
        "step": entry["step"],
    }


@pytest.mark.sdk
def test_admission_and_explanation_agree(app_session: SessionClient) -> None:
    app_session.configure(GRAPH)
    seen = set()
    for conversation, model, texts, expected in CASES:
        messages = _history(*texts)
        explained = app_session.explain({"model": model, "messages": messages}, conversation_id=conversation)
        real = _send(app_session, conversation, model, messages)
        where = f"{conversation} {model} {texts}"
        answered = explained["outcome"] in ANSWERED
        assert (explained["outcome"] if answered else explained["error_code"]) == expected, where
        assert real["answered"] is answered, where
        assert (real["code"], real["message"]) == (explained["error_code"], explained["error_message"]), where
        owner = next((c for c in explained["candidates"] if c["selected"]), None)
        assert (owner["scenario"] if owner else None) == explained["selected_scenario"], where
        if answered or (owner is not None and owner["kind"] == "conversation"):
            # Admission tags the journal with the owner (a graph's rejections included) and the step.
            actual = (real["owner"], real["step"])
            assert actual == (explained["selected_scenario"], explained["selected_step"]), where
        elif owner is not None:
            # A scenario's rejection is not tagged in the journal; its message names the owner.
            assert f"scenario {owner['scenario']!r}" in real["message"], where
        else:
            assert real["owner"] is None and explained["selected_scenario"] is None, where
        seen.add(expected)
    assert len(seen) == len({case[3] for case in CASES})


def test_explanations_name_the_messages_admission_answers(app_session: SessionClient) -> None:
    """The three messages the two copies used to word differently."""
    app_session.configure(GRAPH)
    unknown = app_session.explain({"model": "gpt-9", "messages": _history("Hi")})
    assert unknown["error_message"] == "The model `gpt-9` does not exist or you do not have access to it."
    nothing = app_session.explain({"model": "o3", "messages": _history("Hi")})
    assert nothing["error_message"] == "no scenario of this session serves openai requests for model 'o3'"
    app_session.openai_client(max_retries=0).chat.completions.create(
        model="gpt-4.1-mini", messages=_history("Hello")
    )
    exhausted = app_session.explain({"model": "gpt-4.1-mini", "messages": _history("Hello", "x", "y")})
    assert (
        exhausted["error_message"] == "scenario 'fallback' has no responses left (1 configured, all consumed)"
    )


# --- wire requests: explain runs the route's parser and strict rules, like admission ----------------

_THINK = {"type": "enabled", "budget_tokens": 1024}
_TOOL_USE = {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}
_TOOL_RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "22C"}
_CONVERSE_USE = {"toolUse": {"toolUseId": "t1", "name": "get_weather", "input": {}}}
# (path, body, the expected outcome or error code): each explained, then sent for real over raw HTTP.
WIRE_CASES: list[tuple[str, dict[str, Any], str]] = [
    (  # a rule the parser runs (it needs the resolved model): rejected like the table's rules
        "/openai/v1/responses",
        {"model": "gpt-4.1-nano", "input": "x", "tools": [{"type": "web_search"}]},
        "unsupported_value",
    ),
    (
        "/openai/v1/chat/completions",
        {"model": "gpt-4.1-mini", "messages": _history("Hi"), "temperature": 3},
        "decimal_above_max_value",
    ),
    (
        "/openai/v1/chat/completions",
        {"model": "gpt-4.1-mini", "messages": [{"role": "tool", "tool_call_id": "c", "content": "x"}]},
        "tool_result_without_call",
    ),
    (
        "/openai/v1/chat/completions",
        {"model": "o3", "messages": _history("Hi"), "temperature": 0.5},
        "unsupported_value",
    ),
    (
        "/anthropic/v1/messages",
        {
            "model": "claude-test-1",
            "max_tokens": 2048,
            "thinking": _THINK,
            "messages": [
                {"role": "user", "content": "Weather?"},
                {
                    "role": "assistant",
                    "content": [{"type": "thinking", "thinking": "Hm.", "signature": "forged"}, _TOOL_USE],
                },
                {"role": "user", "content": [_TOOL_RESULT]},
            ],
        },
        "thinking_block_modified",
    ),
    (
        "/cohere/v2/chat",
        {
            "model": "command-a-03-2025",
            "messages": [*_history("Hi"), {"role": "tool", "tool_call_id": "c", "content": "x"}],
        },
        "tool_result_without_call",
    ),
    (
        "/bedrock/model/anthropic.claude-3-7-sonnet-20250219-v1:0/converse",
        {
            "messages": [
                {"role": "user", "content": [{"text": "Weather?"}]},
                {"role": "assistant", "content": [_CONVERSE_USE]},
                {"role": "user", "content": [{"text": "and?"}]},
            ]
        },
        "tool_use_without_tool_result",
    ),
    (
        "/anthropic/v1/messages",
        {"model": "claude-test-1", "max_tokens": 64, "messages": _history("Hi")},
        "scenario",
    ),
]


def _wire_message(path: str, body: dict[str, Any]) -> str:
    """The error message in each provider's envelope."""
    error = body.get("error")
    return str(error["message"] if isinstance(error, dict) else body["message"])


@pytest.mark.sdk
def test_wire_explanations_run_the_strict_rules_as_admission_does(app_session: SessionClient) -> None:
    app_session.configure(
        {
            "models": [
                "gpt-4.1-mini",
                "gpt-4.1-nano",
                "o3",
                "claude-test-1",
                "command-a-03-2025",
                "anthropic.claude-3-7-sonnet-20250219-v1:0",
            ],
            "scenarios": [{"id": "any", "responses": [{"text": "answered"}]}],
        }
    )
    for path, body, expected in WIRE_CASES:
        explained = app_session.explain_wire(path, body)
        namespace = path.split("/")[1]
        headers = {"Authorization": "Bearer " + app_session.credential(namespace)}
        headers["x-api-key"] = app_session.credential(namespace)
        real = send_raw(app_session, "POST", path, body, headers)
        entry = app_session.requests()[0]
        if expected == "scenario":
            assert (explained["outcome"], explained["selected_scenario"], explained["strict_rule"]) == (
                "scenario",
                "any",
                None,
            )
            assert (real.status, entry["scenario"]) == (200, "any")
            continue
        assert (explained["outcome"], explained["error_code"]) == ("rejected", expected), path
        assert explained["strict_rule"] and explained["candidates"] == [], path
        assert (real.status, entry["error_code"]) == (400, expected), path
        assert _wire_message(path, real.json()) == explained["error_message"], path
    # Nothing was consumed by the explanations or the rejected requests: the last one got the only answer.
    assert app_session.requests()[0]["response_index"] == 0


def test_wire_explanations_follow_strict_requests_and_refuse_bad_input(app_session: SessionClient) -> None:
    path, body, _ = WIRE_CASES[0]
    app_session.configure(
        {"strict_requests": False, "scenarios": [{"id": "any", "responses": [{"text": "x"}]}]}
    )
    assert app_session.explain_wire(path, body)["outcome"] == "scenario"

    with pytest.raises(ServerError) as unknown:
        app_session.explain_wire("/openai/v1/nowhere", body)
    assert unknown.value.status == 400 and "no provider route" in str(unknown.value)
    with pytest.raises(ServerError) as unparsable:
        app_session.explain_wire(path, {"messages": "not a list"})
    assert unparsable.value.status == 400 and "the provider would refuse wire.body" in str(unparsable.value)
    with pytest.raises(ServerError) as both:
        app_session.server.request(
            "POST",
            "/admin-api/match/explain",
            {"request": {"messages": _history("Hi")}, "wire": {"path": path, "body": body}},
            session_id=app_session.id,
        )
    assert both.value.status == 400 and both.value.details[0]["path"] == "request"
