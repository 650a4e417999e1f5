"""Conversation graph configuration: every invalid graph is a precise 400 and changes nothing; the builder
serializes to the same JSON as the dict form."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from llmts import ConfigBuilder, ServerError, SessionClient
from llmts.errors import ConfigurationInvalid
from llmts.schema import LIMITS


def step(step_id: str, **fields: Any) -> dict[str, Any]:
    fields.setdefault("response", {"text": step_id})
    if "then" not in fields:
        fields.setdefault("complete", True)
    return {"id": step_id, **fields}


def graph(*steps: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"conversations": [{"id": "g", **fields, "steps": list(steps)}]}


def when(**predicates: Any) -> dict[str, Any]:
    return graph(step("s", when=predicates))


VALID = graph(step("a", then=["b"]), step("b"))

INVALID: list[tuple[str, dict[str, Any], str, str]] = [
    (
        "unknown next step",
        graph(step("a", then=["nope"])),
        "conversations[0].steps[0].then[0]",
        "unknown next step",
    ),
    (
        "duplicate step ids",
        graph(step("a", then=["a"]), step("a")),
        "conversations[0].steps[1].id",
        "duplicate",
    ),
    ("unreachable step", graph(step("a"), step("b")), "conversations[0].steps[1]", "unreachable"),
    ("unknown start_at", graph(step("a"), start_at="z"), "conversations[0].start_at", "names no step"),
    (
        "then and complete",
        graph(step("a", then=["a"], complete=True)),
        "conversations[0].steps[0].then",
        "not both",
    ),
    (
        "neither then nor complete",
        graph({"id": "a", "response": {"text": "x"}}),
        "conversations[0].steps[0].then",
        "needs then",
    ),
    (
        "target listed twice",
        graph(step("a", then=["b", "b"]), step("b")),
        "conversations[0].steps[0].then[1]",
        "twice",
    ),
    ("empty then", graph(step("a", then=[])), "conversations[0].steps[0].then", "at least 1"),
    ("no steps", graph(), "conversations[0].steps", "at least 1"),
    ("too many steps", graph(*[step(f"s{i}") for i in range(257)]), "conversations[0].steps", "at most 256"),
    (
        "max_steps 0",
        graph(step("a"), max_steps=0),
        "conversations[0].max_steps",
        "greater than or equal to 1",
    ),
    (
        "max_steps 4097",
        graph(step("a"), max_steps=4097),
        "conversations[0].max_steps",
        "less than or equal to 4096",
    ),
    ("linear queue", graph(step("a"), responses=[{"text": "x"}]), "conversations[0].responses", "linear"),
    (
        "step without response",
        graph({"id": "a", "complete": True}),
        "conversations[0].steps[0].response",
        "required",
    ),
    (
        "two response kinds",
        graph(step("a", response={"text": "x", "json": 1})),
        "conversations[0].steps[0].response",
        "exactly one",
    ),
    ("step id too long", graph(step("x" * 129)), "conversations[0].steps[0].id", "at most 128"),
    (
        "unknown terminal policy",
        graph(step("a"), terminal_policy="loop"),
        "conversations[0].terminal_policy",
        "reject",
    ),
    ("unknown provider", graph(step("a"), provider="acme"), "conversations[0].provider", "unknown provider"),
    (
        "unserved model",
        {**graph(step("a"), model="gpt-9"), "models": ["gpt-4.1-mini"]},
        "conversations[0].model",
        "not one of the session's models",
    ),
    ("turn 0", when(turn=0), "conversations[0].steps[0].when.turn", "greater than or equal to 1"),
    ("unknown role", when(latest_role="robot"), "conversations[0].steps[0].when.latest_role", "user"),
    (
        "unknown predicate",
        when(latest_user_matches="x"),
        "conversations[0].steps[0].when.latest_user_matches",
        "not permitted",
    ),
    (
        "arguments without tool_result",
        when(tool_arguments_json={"a": 1}),
        "conversations[0].steps[0].when.tool_arguments_json",
        "tool_result",
    ),
    (
        "tool_result without name",
        when(tool_result={"call_id": "c"}),
        "conversations[0].steps[0].when.tool_result.name",
        "required",
    ),
    (
        "wildcard path",
        when(latest_json={"path": "$.items[*]", "expected_json": 1}),
        "conversations[0].steps[0].when.latest_json.path",
        "not supported",
    ),
    (
        "filter path",
        when(latest_json_value={"path": "$.a[?(@.b)]", "value": 1}),
        "conversations[0].steps[0].when.latest_json_value.path",
        "not supported",
    ),
    (
        "recursive path",
        when(latest_json={"path": "$..a", "expected_json": 1}),
        "conversations[0].steps[0].when.latest_json.path",
        "not supported",
    ),
    (
        "negative index",
        when(latest_json={"path": "$.a[-1]", "expected_json": 1}),
        "conversations[0].steps[0].when.latest_json.path",
        "unsupported selector",
    ),
    (
        "bad pointer escape",
        when(latest_json={"path": "/a~2b", "expected_json": 1}),
        "conversations[0].steps[0].when.latest_json.path",
        "escape",
    ),
    (
        "path without root",
        when(latest_json={"path": "a.b", "expected_json": 1}),
        "conversations[0].steps[0].when.latest_json.path",
        "starts with",
    ),
    (
        "path too long",
        when(latest_json={"path": "$." + "a" * 255, "expected_json": 1}),
        "conversations[0].steps[0].when.latest_json.path",
        "at most 256",
    ),
    (
        "missing expected_json",
        when(latest_json={"path": "$"}),
        "conversations[0].steps[0].when.latest_json.expected_json",
        "required",
    ),
    (
        "pattern that does not compile",
        when(latest_text_matches="(unclosed"),
        "conversations[0].steps[0].when.latest_text_matches",
        "not a valid regular expression",
    ),
    (
        "pattern too long",
        when(latest_text_matches="a" * 1025),
        "conversations[0].steps[0].when.latest_text_matches",
        "at most 1024",
    ),
    (
        "empty pattern",
        when(latest_text_matches=""),
        "conversations[0].steps[0].when.latest_text_matches",
        "at least 1",
    ),
    (
        "empty system text",
        when(system_contains=""),
        "conversations[0].steps[0].when.system_contains",
        "at least 1",
    ),
    (
        "tool name not a string",
        when(declares_tool=["get_weather"]),
        "conversations[0].steps[0].when.declares_tool",
        "valid string",
    ),
    (
        "tool name too long",
        when(declares_tool="t" * 129),
        "conversations[0].steps[0].when.declares_tool",
        "at most 128",
    ),
    (
        "graph id used by a scenario",
        {**graph(step("a")), "scenarios": [{"id": "g", "responses": [{"text": "x"}]}]},
        "conversations[0].id",
        "already used",
    ),
    (
        "duplicate graph ids",
        {"conversations": [{"id": "g", "steps": [step("a")]}] * 2},
        "conversations[1].id",
        "already used",
    ),
    ("too many graphs", {"conversations": [{"steps": [step("a")]}] * 257}, "conversations", "at most 256"),
    (
        "negative capacity",
        {**VALID, "conversation_capacity": {"max_conversations": -1}},
        "conversation_capacity.max_conversations",
        "greater than or equal to 0",
    ),
    (
        "capacity over the limit",
        {**VALID, "conversation_capacity": {"max_bytes": 2**31}},
        "conversation_capacity.max_bytes",
        "less than or equal to",
    ),
    (
        "unknown capacity key",
        {**VALID, "conversation_capacity": {"max_states": 1}},
        "conversation_capacity.max_states",
        "not permitted",
    ),
]


@pytest.mark.parametrize(
    ("config", "path", "message"), [pytest.param(c, p, m, id=i) for i, c, p, m in INVALID]
)
def test_invalid_graphs_are_rejected_atomically(
    app_session: SessionClient, config: dict[str, Any], path: str, message: str
) -> None:
    app_session.configure(VALID)
    before = app_session.configuration()

    with pytest.raises(ServerError) as caught:
        app_session.configure(config)

    error = caught.value
    assert error.status == 400 and error.code == "invalid_configuration"
    assert [d["path"] for d in error.details][:1] == [path], error.details
    assert message in error.details[0]["message"], error.details
    assert app_session.configuration() == before


def test_valid_graph_round_trips_through_configuration(app_session: SessionClient) -> None:
    config = {
        "conversations": [
            {
                "id": "approval",
                "start_at": "ask",
                "terminal_policy": "restart",
                "max_steps": 10,
                "replay_successful_requests": False,
                "model": "gpt-4.1-mini",
                "provider": "openai",
                "steps": [
                    {
                        "id": "ask",
                        "when": {"latest_user_equals": "", "turn": 1, "latest_role": "user"},
                        "response": {"text": "Approve?", "delay_ms": 5},
                        "then": ["done"],
                    },
                    {
                        "id": "done",
                        "when": {
                            "tool_result": {"name": "f", "call_id": "c1"},
                            "tool_arguments_json": None,
                            "latest_json": {"path": "/a~1b/0", "expected_json": {"k": [1, 2]}},
                            "latest_json_value": {"path": "$['x.y'].z[3]", "value": None},
                            "latest_text_contains": "t",
                            "latest_user_contains": "u",
                        },
                        "response": {"error": {"status": 500, "code": "boom", "message": "Boom"}},
                        "complete": True,
                    },
                ],
            }
        ],
        "conversation_capacity": {"max_conversations": 0, "max_bytes": 0},
    }
    effective = app_session.configure(config)
    assert effective["conversations"] == config["conversations"]
    assert effective["conversation_capacity"] == config["conversation_capacity"]
    assert app_session.configuration() == effective


def test_builder_serializes_to_the_configuration_json() -> None:
    builder = (
        ConfigBuilder()
        .conversation("approval", start_at="ask", max_steps=8)
        .step("ask")
        .when(latest_user_equals="Start", turn=1)
        .text("Approve or cancel?")
        .then("approve", "cancel")
        .step("approve")
        .when_latest_user_equals("Approve")
        .when_turn(2)
        .text("Approved")
        .complete()
        .step("cancel")
        .when_tool_result("f", "c1", arguments={"x": 1})
        .when_latest_json("$.a", {"b": 1})
        .when_latest_json_value("/a", 2)
        .error(503, "busy", "Later", should_retry=False)
        .complete()
        .config.conversation_capacity(max_conversations=3, max_bytes=4096)
    )
    expected = {
        "conversation_capacity": {"max_conversations": 3, "max_bytes": 4096},
        "conversations": [
            {
                "id": "approval",
                "start_at": "ask",
                "max_steps": 8,
                "steps": [
                    {
                        "id": "ask",
                        "when": {"latest_user_equals": "Start", "turn": 1},
                        "response": {"text": "Approve or cancel?"},
                        "then": ["approve", "cancel"],
                    },
                    {
                        "id": "approve",
                        "when": {"latest_user_equals": "Approve", "turn": 2},
                        "response": {"text": "Approved"},
                        "complete": True,
                    },
                    {
                        "id": "cancel",
                        "when": {
                            "tool_result": {"name": "f", "call_id": "c1"},
                            "tool_arguments_json": {"x": 1},
                            "latest_json": {"path": "$.a", "expected_json": {"b": 1}},
                            "latest_json_value": {"path": "/a", "value": 2},
                        },
                        "response": {
                            "error": {
                                "status": 503,
                                "code": "busy",
                                "message": "Later",
                                "should_retry": False,
                            }
                        },
                        "complete": True,
                    },
                ],
            }
        ],
    }
    assert builder.to_dict() == expected
    built = builder.build().model_dump(mode="json")
    assert built["conversations"][0]["steps"] == expected["conversations"][0]["steps"]  # type: ignore[index]


def test_builder_validates_locally() -> None:
    with pytest.raises(ConfigurationInvalid) as caught:
        ConfigBuilder().conversation("g").step("a").text("x").then("missing").build()
    assert caught.value.details[0]["path"] == "conversations[0].steps[0].then[0]"


def test_conversation_limits_are_published() -> None:
    assert {
        key: LIMITS[key]
        for key in (
            "conversations",
            "steps_per_conversation",
            "max_steps",
            "json_path_chars",
            "conversation_id_chars",
        )
    } == {
        "conversations": 256,
        "steps_per_conversation": 256,
        "max_steps": 4096,
        "json_path_chars": 256,
        "conversation_id_chars": 128,
    }


def test_configure_without_conversations_keeps_the_json_unchanged(app_session: SessionClient) -> None:
    config = {"models": ["gpt-4.1-mini"], "scenarios": [{"id": "s", "responses": [{"text": "x"}]}]}
    effective = app_session.configure(copy.deepcopy(config))
    assert "conversations" not in effective and "conversation_capacity" not in effective


def test_builder_takes_the_new_predicates_and_validates_them_with_the_model() -> None:
    step_builder = (
        ConfigBuilder()
        .conversation("g")
        .step("a")
        .when(system_contains="terse", declares_tool="get_weather", latest_text_matches=r"^\d+$")
    )
    assert step_builder.to_dict()["when"] == {
        "system_contains": "terse",
        "declares_tool": "get_weather",
        "latest_text_matches": r"^\d+$",
    }
    built = step_builder.text("x").complete().build().model_dump(mode="json")
    assert built["conversations"][0]["steps"][0]["when"]["latest_text_matches"] == r"^\d+$"
    with pytest.raises(ConfigurationInvalid) as caught:
        ConfigBuilder().conversation("g").step("a").when(latest_text_matches="(")
    assert caught.value.details[0]["path"] == "when.latest_text_matches"
    with pytest.raises(ConfigurationInvalid) as caught:
        ConfigBuilder().conversation("g").step("a").when(call_id="c1")  # needs tool_result's name
    assert caught.value.details[0]["path"] == "when.tool_result.name"
    with pytest.raises(ConfigurationInvalid) as caught:
        ConfigBuilder().conversation("g").step("a").when(latest_user_matches="x")
    assert caught.value.details[0]["path"] == "when.latest_user_matches"
