"""OpenAI Responses native tools through the official openai SDK against a real server: which requests a
native-item fixture answers. Named and forced tool choices, model pairing and the documented 400 refusals,
and fixture mismatches (file search, code interpreter, web search domains, undeclared families, other
surfaces, conversation steps) that are 409s and consume nothing."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from llmts import SessionClient
from tests.providers.openai.native_fixtures import (
    CODE_ITEMS,
    CODE_MODEL,
    CODE_TOOL,
    FILE_ITEMS,
    FILE_MODEL,
    FILE_TOOL,
    MODELS,
    WEB_ITEMS,
    WEB_MODEL,
    WEB_TOOL,
    configure,
    items,
    # the ``client`` fixture: pytest finds it by name once it is imported here
    strict_responses_client,  # noqa: F401
)

pytestmark = pytest.mark.sdk


# --- tool choice and model pairing ------------------------------------------------------------------------


def test_tool_choice_is_checked_against_the_ordered_fixture(app_session: SessionClient, client: Any) -> None:
    message_only = [{"kind": "message", "content": "No search needed."}]
    configure(app_session, FILE_ITEMS, message_only)

    with pytest.raises(openai.ConflictError) as none_choice:
        client.responses.create(model=FILE_MODEL, input="x", tools=[FILE_TOOL], tool_choice="none")
    with pytest.raises(openai.ConflictError) as forced_function:
        client.responses.create(
            model=FILE_MODEL,
            input="x",
            tools=[FILE_TOOL, {"type": "function", "name": "lookup", "parameters": {"type": "object"}}],
            tool_choice={"type": "function", "name": "lookup"},
        )
    first = client.responses.create(model=FILE_MODEL, input="x", tools=[FILE_TOOL], tool_choice="required")
    with pytest.raises(openai.ConflictError) as required:
        client.responses.create(model=FILE_MODEL, input="x", tools=[FILE_TOOL], tool_choice="required")
    with pytest.raises(openai.ConflictError) as named:
        client.responses.create(
            model=FILE_MODEL, input="x", tools=[FILE_TOOL], tool_choice={"type": "file_search"}
        )
    second = client.responses.create(model=FILE_MODEL, input="x", tools=[FILE_TOOL], tool_choice="none")

    assert none_choice.value.param == forced_function.value.param == "tool_choice"
    assert "tool_choice to none" in none_choice.value.message
    assert "requires a tool call" in required.value.message
    assert "forces the file_search tool" in named.value.message
    assert first.output[0].type == "file_search_call"
    assert second.output_text == "No search needed."


def test_named_native_choice_rejects_text_and_function_fixtures(
    app_session: SessionClient, client: Any
) -> None:
    app_session.configure(
        {
            "models": MODELS,
            "scenarios": [{"responses": [{"tool_calls": [{"name": "lookup"}]}, {"text": "plain"}]}],
        }
    )
    tools = [FILE_TOOL, {"type": "function", "name": "lookup", "parameters": {"type": "object"}}]

    with pytest.raises(openai.ConflictError) as caught:
        client.responses.create(model=FILE_MODEL, input="x", tools=tools, tool_choice={"type": "file_search"})

    assert "forces the file_search tool" in caught.value.message
    assert client.responses.create(model=FILE_MODEL, input="x", tools=tools).output[0].name == "lookup"


@pytest.mark.parametrize(
    ("model", "tools"),
    [
        ("gpt-5.4", [WEB_TOOL]),  # the spec's own examples
        ("gpt-4.1", [FILE_TOOL]),
        ("gpt-4o", [CODE_TOOL]),
        ("gpt-4o", [WEB_TOOL, FILE_TOOL, CODE_TOOL]),
        ("o3", [{"type": "web_search_preview"}, CODE_TOOL]),
        ("gpt-4.1-nano", [FILE_TOOL, CODE_TOOL]),
        ("some-future-model", [WEB_TOOL]),
    ],
    ids=["web-gpt-5.4", "file-gpt-4.1", "code-gpt-4o", "all-three", "o3", "nano-file-code", "unknown-model"],
)
def test_every_model_the_real_api_serves_takes_native_tools(
    app_session: SessionClient, client: Any, model: str, tools: list[Any]
) -> None:
    app_session.configure({"scenarios": [{"responses": [{"text": "Answered without a tool."}]}]})

    answer = client.responses.create(model=model, input="x", tools=tools)

    assert answer.output_text == "Answered without a tool." and answer.model == model


@pytest.mark.parametrize(
    ("model", "tools", "extra", "param", "words"),
    [
        ("gpt-4.1-nano", [WEB_TOOL], {}, "tools[0]", "not supported with gpt-4.1-nano"),
        ("gpt-4.1-nano-2025-04-14", [FILE_TOOL, WEB_TOOL], {}, "tools[1]", "not supported"),
        ("gpt-5", [WEB_TOOL], {"reasoning": {"effort": "minimal"}}, "tools[0]", "reasoning.effort 'minimal'"),
        (
            FILE_MODEL,
            [FILE_TOOL],
            {"tool_choice": {"type": "code_interpreter"}},
            "tool_choice",
            "declares no",
        ),
    ],
    ids=["web-on-nano", "web-on-nano-snapshot", "web-at-minimal-effort", "undeclared-choice"],
)
def test_documented_refusals_are_400_and_consume_nothing(
    app_session: SessionClient,
    client: Any,
    model: str,
    tools: list[Any],
    extra: Any,
    param: str,
    words: str,
) -> None:
    configure(app_session, FILE_ITEMS, models=None)

    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model=model, input="x", tools=tools, **extra)

    assert caught.value.param == param and words in caught.value.message
    assert (
        client.responses.create(model=FILE_MODEL, input="x", tools=[FILE_TOOL]).output[0].id == "fs_fixture"
    )


def test_refusals_are_strict_rules(app_session: SessionClient, client: Any) -> None:
    """``strict_requests: false`` accepts what the real API refuses, like every strict rule."""
    app_session.configure({"strict_requests": False, "scenarios": [{"responses": [{"text": "Lenient."}]}]})

    answer = client.responses.create(model="gpt-4.1-nano", input="x", tools=[WEB_TOOL])

    assert answer.output_text == "Lenient."


# --- mismatches never consume ---------------------------------------------------------------------------


def test_web_search_allowed_domains_mismatch_consumes_nothing(
    app_session: SessionClient, client: Any
) -> None:
    configure(app_session, WEB_ITEMS)
    narrow = {"type": "web_search", "filters": {"allowed_domains": ["weather.example.com"]}}
    wide = {"type": "web_search", "filters": {"allowed_domains": ["example.com", "example.org"]}}

    with pytest.raises(openai.ConflictError) as caught:
        client.responses.create(model=WEB_MODEL, input="x", tools=[narrow])
    answer = client.responses.create(
        model=WEB_MODEL, input="x", tools=[wide], include=["web_search_call.action.sources"]
    )

    assert caught.value.code == "llm_test_server_fixture_mismatch"
    assert caught.value.param == "tools[0].filters.allowed_domains"
    assert "news.example.org" in caught.value.message
    assert len(answer.output[0].action.sources) == 2


@pytest.mark.parametrize(
    ("tool", "param", "words"),
    [
        ({**FILE_TOOL, "vector_store_ids": ["vs_other"]}, "tools[0].vector_store_ids", "vs_fixture"),
        ({**FILE_TOOL, "vector_store_ids": []}, "tools[0].vector_store_ids", "vs_fixture"),
        (
            {**FILE_TOOL, "ranking_options": {"score_threshold": 0.95}},
            "tools[0].ranking_options.score_threshold",
            "below",
        ),
        (
            {**FILE_TOOL, "filters": {"type": "eq", "key": "category", "value": "other"}},
            "tools[0].filters",
            "match",
        ),
        ({**FILE_TOOL, "filters": {"type": "gt", "key": "missing", "value": 1}}, "tools[0].filters", "match"),
    ],
    ids=["foreign-store", "no-stores", "threshold", "filter", "missing-attribute"],
)
def test_file_search_mismatch_consumes_nothing(
    app_session: SessionClient, client: Any, tool: dict[str, Any], param: str, words: str
) -> None:
    configure(app_session, FILE_ITEMS)

    with pytest.raises(openai.ConflictError) as caught:
        client.responses.create(model=FILE_MODEL, input="x", tools=[tool])
    answer = client.responses.create(
        model=FILE_MODEL,
        input="x",
        tools=[{**FILE_TOOL, "vector_store_ids": ["vs_x", "vs_fixture", "vs_fixture"]}],
    )

    assert caught.value.code == "llm_test_server_fixture_mismatch"
    assert caught.value.param == param and words in caught.value.message
    assert caught.value.response.headers["x-should-retry"] == "false"
    assert answer.output[0].id == "fs_fixture"


def test_max_num_results_must_already_fit(app_session: SessionClient, client: Any) -> None:
    two = items(FILE_ITEMS, results=[{"file_id": "file_source"}, {"file_id": "file_two"}])
    configure(app_session, two)

    with pytest.raises(openai.ConflictError) as caught:
        client.responses.create(model=FILE_MODEL, input="x", tools=[{**FILE_TOOL, "max_num_results": 1}])
    answer = client.responses.create(model=FILE_MODEL, input="x", tools=[{**FILE_TOOL, "max_num_results": 2}])

    assert caught.value.param == "tools[0].max_num_results"
    assert answer.output[0].id == "fs_fixture"


@pytest.mark.parametrize(
    ("container", "param"),
    [
        ("cntr_other", "tools[0].container"),
        ({"type": "auto"}, "tools[0].container.file_ids"),
        ({"type": "auto", "file_ids": ["file_input", "file_extra"]}, "tools[0].container.file_ids"),
    ],
    ids=["foreign-container", "no-files", "extra-file"],
)
def test_code_interpreter_mismatch_consumes_nothing(
    app_session: SessionClient, client: Any, container: Any, param: str
) -> None:
    configure(app_session, CODE_ITEMS)

    with pytest.raises(openai.ConflictError) as caught:
        client.responses.create(
            model=CODE_MODEL, input="x", tools=[{"type": "code_interpreter", "container": container}]
        )
    answer = client.responses.create(
        model=CODE_MODEL,
        input="x",
        tools=[
            {
                "type": "code_interpreter",
                "container": {"type": "auto", "file_ids": ["file_input", "file_input"]},
            }
        ],
    )

    assert caught.value.param == param
    assert answer.output[0].container_id == "cntr_fixture"


def test_undeclared_family_and_other_surfaces_consume_nothing(
    app_session: SessionClient, client: Any
) -> None:
    configure(app_session, FILE_ITEMS)

    with pytest.raises(openai.ConflictError) as undeclared:
        client.responses.create(model=FILE_MODEL, input="x")
    with pytest.raises(openai.ConflictError) as chat:
        client.chat.completions.create(model=FILE_MODEL, messages=[{"role": "user", "content": "x"}])
    answer = client.responses.create(model=FILE_MODEL, input="x", tools=[FILE_TOOL])

    assert undeclared.value.param == "tools" and "declares no file_search tool" in undeclared.value.message
    assert "only OpenAI Responses requests" in chat.value.message
    assert answer.output[0].id == "fs_fixture"


def test_chat_completions_reject_native_declarations(app_session: SessionClient, client: Any) -> None:
    configure(app_session, FILE_ITEMS)

    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(
            model=FILE_MODEL,
            messages=[{"role": "user", "content": "x"}],
            tools=[{"type": "file_search", "vector_store_ids": ["vs_fixture"]}],
        )

    assert caught.value.param == "tools[0].type" and "Responses API tool" in caught.value.message


def test_conversation_step_with_items_is_not_consumed_by_a_mismatch(app_session: SessionClient) -> None:
    app_session.configure(
        {
            "models": MODELS,
            "conversations": [
                {
                    "id": "research",
                    "steps": [
                        {
                            "id": "search",
                            "when": {"turn": 1},
                            "response": {"items": FILE_ITEMS},
                            "then": ["done"],
                        },
                        {"id": "done", "when": {"turn": 2}, "response": {"text": "Done."}, "complete": True},
                    ],
                }
            ],
        }
    )
    conversation = app_session.for_conversation("c1")
    client = conversation.openai_client(_strict_response_validation=True, max_retries=0)

    with pytest.raises(openai.ConflictError) as caught:
        client.responses.create(
            model=FILE_MODEL, input="Find it", tools=[{**FILE_TOOL, "vector_store_ids": ["vs_elsewhere"]}]
        )
    first = client.responses.create(model=FILE_MODEL, input="Find it", tools=[FILE_TOOL])
    second = client.responses.create(model=FILE_MODEL, input="Thanks", previous_response_id=first.id)

    assert caught.value.code == "llm_test_server_fixture_mismatch"
    assert first.output[0].id == "fs_fixture" and second.output_text == "Done."
    (state,) = conversation.conversations()
    assert state["executed_steps"] == ["search", "done"]
