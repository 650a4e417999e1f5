"""The same provider-neutral graphs through the Responses API (with stored continuation), Anthropic Messages
and Gemini, and identity isolation across sessions, providers, credentials and conversation ids."""

from __future__ import annotations

from typing import Any

import anthropic
import openai
import pytest
from google.genai import errors as genai_errors
from google.genai import types

from llmts import ConfigBuilder, LlmTestServer, SessionClient

pytestmark = pytest.mark.sdk

MODEL = "gpt-4.1-mini"


def approval(**graph: Any) -> ConfigBuilder:
    return (
        ConfigBuilder()
        .conversation("approval", **graph)
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
        .config
    )


def test_responses_stored_continuation_and_replay(app_session: SessionClient) -> None:
    app_session.configure(approval())
    client = app_session.for_conversation("r").openai_client(_strict_response_validation=True, max_retries=0)

    first = client.responses.create(model=MODEL, input="Start")
    second = client.responses.create(model=MODEL, input="Approve", previous_response_id=first.id)
    # previous_response_id is not part of the fingerprint: the restored history is. The same request with
    # the full history inline, or streamed, replays the retained result.
    inline = client.responses.create(
        model=MODEL,
        input=[
            {"role": "user", "content": "Start"},
            {"role": "assistant", "content": "Approve or cancel?"},
            {"role": "user", "content": "Approve"},
        ],
    )
    with client.responses.stream(model=MODEL, input="Approve", previous_response_id=first.id) as stream:
        streamed = stream.get_final_response()

    assert (first.output_text, second.output_text) == ("Approve or cancel?", "Approved")
    assert inline.id == streamed.id == second.id and inline.output_text == "Approved"
    state = app_session.conversations("r")[0]
    assert (state["executed_steps"], state["replays"], state["state"]) == (["ask", "approve"], 2, "completed")
    with pytest.raises(openai.ConflictError) as caught:
        client.responses.create(model=MODEL, input="Cancel", previous_response_id=first.id)
    assert caught.value.code == "conversation_completed"  # another branch after completion: rejected


def test_anthropic_tool_use_and_result_with_arguments(app_session: SessionClient) -> None:
    weather = {
        "name": "get_weather",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
    app_session.configure(
        ConfigBuilder()
        .conversation("agent")
        .step("call")
        .when(latest_user_contains="weather")
        .tool_call("get_weather", {"city": "Paris"}, id="toolu_1")
        .then("answer")
        .step("answer")
        .when(turn=2, tool_result="get_weather", call_id="toolu_1", tool_arguments_json={"city": "Paris"})
        .when(latest_json=("$.sky", "clear"))
        .text("Clear skies in Paris")
        .complete()
    )
    client = app_session.for_conversation("agent-1").anthropic_client(max_retries=0)
    question = [{"role": "user", "content": "What is the weather?"}]

    first = client.messages.create(model=MODEL, max_tokens=64, tools=[weather], messages=question)
    (call,) = first.content
    history = [
        *question,
        {"role": "assistant", "content": [call.model_dump(exclude_none=True)]},
    ]
    with pytest.raises(anthropic.ConflictError) as caught:  # a result that does not match the JSON predicate
        client.messages.create(
            model=MODEL,
            max_tokens=64,
            tools=[weather],
            messages=[
                *history,
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "toolu_1", "content": '{"sky": "grey"}'}
                    ],
                },
            ],
        )
    second = client.messages.create(
        model=MODEL,
        max_tokens=64,
        tools=[weather],
        messages=[
            *history,
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": '{"sky": "clear"}'}],
            },
        ],
    )

    assert (call.type, call.name, call.input) == ("tool_use", "get_weather", {"city": "Paris"})
    assert caught.value.status_code == 409 and caught.value.body["error"]["type"] == "conflict_error"
    assert caught.value.body["error"]["code"] == "conversation_step_mismatch"
    assert "latest_json" in caught.value.message
    assert second.content[0].text == "Clear skies in Paris"
    state = app_session.conversations("agent-1")[0]
    assert (state["provider"], state["executed_steps"]) == ("anthropic", ["call", "answer"])


def test_gemini_function_call_and_response(app_session: SessionClient) -> None:
    model = "gemini-2.5-flash"
    app_session.configure(
        ConfigBuilder()
        .models(model)
        .conversation("g")
        .step("call")
        .when(turn=1)
        .tool_call("get_weather", {"city": "Paris"})
        .then("answer")
        .step("answer")
        .when(tool_result="get_weather", latest_json_value=("$.temp", 18))
        .text("18 degrees")
        .complete()
    )
    gemini = app_session.for_conversation("gem").gemini_client()
    tools: list[Any] = [
        types.Tool(
            function_declarations=[
                types.FunctionDeclaration(
                    name="get_weather",
                    parameters_json_schema={"type": "object", "properties": {"city": {"type": "string"}}},
                )
            ]
        )
    ]
    config = types.GenerateContentConfig(tools=tools)
    question = types.Content(role="user", parts=[types.Part(text="Weather in Paris?")])

    first = gemini.models.generate_content(model=model, contents=[question], config=config)
    (call,) = first.function_calls
    answer = types.Content(
        role="user", parts=[types.Part.from_function_response(name="get_weather", response={"temp": 18})]
    )
    second = gemini.models.generate_content(
        model=model, contents=[question, first.candidates[0].content, answer], config=config
    )

    assert (call.name, call.args) == ("get_weather", {"city": "Paris"})
    assert second.text == "18 degrees"
    state = app_session.conversations("gem")[0]
    assert (state["provider"], state["executed_steps"], state["last_turn"]) == (
        "gemini",
        ["call", "answer"],
        2,
    )
    with pytest.raises(genai_errors.ClientError) as caught:  # completed, policy reject: 409 in Google's shape
        gemini.models.generate_content(model=model, contents="Weather again?", config=config)
    assert caught.value.code == 409
    assert caught.value.details["error"]["details"][0]["reason"] == "conversation_completed"


def _start_and_approve(client: Any) -> list[str]:
    start = [{"role": "user", "content": "Start"}]
    first = client.chat.completions.create(model=MODEL, messages=start).choices[0].message.content
    history = [*start, {"role": "assistant", "content": first}, {"role": "user", "content": "Approve"}]
    second = client.chat.completions.create(model=MODEL, messages=history).choices[0].message.content
    return [first, second]


def test_isolation_across_sessions_and_conversation_ids(
    llmts_app_server: LlmTestServer, app_session: SessionClient
) -> None:
    other_session = llmts_app_server.create_session()
    try:
        for session in (app_session, other_session):
            session.configure(approval())
        assert _start_and_approve(app_session.for_conversation("c").openai_client(max_retries=0)) == [
            "Approve or cancel?",
            "Approved",
        ]
        # Same conversation id in another session, and another id in the same session: fresh state.
        assert (
            _start_and_approve(other_session.for_conversation("c").openai_client(max_retries=0))[1]
            == "Approved"
        )
        assert (
            _start_and_approve(app_session.for_conversation("d").openai_client(max_retries=0))[1]
            == "Approved"
        )
        assert [s["conversation_id"] for s in app_session.conversations()] == ["c", "d"]
        assert [s["conversation_id"] for s in other_session.conversations()] == ["c"]
    finally:
        other_session.delete()


def test_isolation_across_providers_and_credentials(app_session: SessionClient) -> None:
    app_session.configure(approval())
    conversation = app_session.for_conversation("shared")
    start = [{"role": "user", "content": "Start"}]

    assert _start_and_approve(conversation.openai_client(max_retries=0))[1] == "Approved"
    # Another credential is another identity: it starts at the start step again.
    assert _start_and_approve(conversation.openai_client(api_key="sk-other", max_retries=0))[1] == "Approved"
    # Another provider namespace too.
    claude = conversation.anthropic_client(max_retries=0)
    reply = claude.messages.create(model=MODEL, max_tokens=16, messages=start)
    assert reply.content[0].text == "Approve or cancel?"

    states = app_session.conversations("shared")
    assert [(s["provider"], s["state"]) for s in states] == [
        ("openai", "completed"),
        ("openai", "completed"),
        ("anthropic", "awaiting"),
    ]
    assert states[0]["credential_hash"] != states[1]["credential_hash"]
    assert all(
        s["credential_hash"].startswith("sha256:") and "sk-other" not in s["credential_hash"] for s in states
    )
