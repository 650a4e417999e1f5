"""Gemini request -> neutral request, without a server: history mapping and function-call id resolution.

The SDK tests prove the wire; these pin the mapping details the runtime's predicates rely on.
"""

from __future__ import annotations

from typing import Any

import pytest

from llmts.errors import InvalidRequest
from llmts.providers.gemini.parse import GENERATE, STREAM_SSE, parse_body


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"text": text}]}


def _call(name: str, args: dict[str, Any], call_id: str | None = None) -> dict[str, Any]:
    call: dict[str, Any] = {"name": name, "args": args}
    if call_id is not None:
        call["id"] = call_id
    return {"functionCall": call}


def _result(name: str, response: dict[str, Any], call_id: str | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {"name": name, "response": response}
    if call_id is not None:
        result["id"] = call_id
    return {"functionResponse": result}


def test_function_responses_without_ids_resolve_to_the_matching_calls_in_order() -> None:
    body = {
        "contents": [
            _user("Weather in Paris and Oslo, and the time?"),
            {
                "role": "model",
                "parts": [
                    {"text": "Checking."},
                    _call("get_weather", {"city": "Paris"}, "c_paris"),
                    _call("get_time", {}),
                    _call("get_weather", {"city": "Oslo"}, "c_oslo"),
                ],
            },
            {
                "role": "user",
                "parts": [
                    _result("get_time", {"t": "noon"}),
                    _result("get_weather", {"sky": "clear"}),
                    _result("get_weather", {"sky": "snow"}),
                ],
            },
        ]
    }

    request = parse_body(body, "m", GENERATE)

    user, model, *results = request.messages
    assert (user.role, user.text) == ("user", "Weather in Paris and Oslo, and the time?")
    assert model.role == "assistant" and model.text == "Checking."
    assert [(c.id, c.name, c.arguments) for c in model.tool_calls] == [
        ("c_paris", "get_weather", '{"city":"Paris"}'),
        ("call_1_2", "get_time", "{}"),
        ("c_oslo", "get_weather", '{"city":"Oslo"}'),
    ]
    assert [(m.role, m.tool_call_id, m.text) for m in results] == [
        ("tool", "call_1_2", '{"t":"noon"}'),
        ("tool", "c_paris", '{"sky":"clear"}'),
        ("tool", "c_oslo", '{"sky":"snow"}'),
    ]
    assert request.latest_user_text() == "Weather in Paris and Oslo, and the time?"


def test_function_response_ids_win_and_unmatched_names_fall_back() -> None:
    body = {
        "contents": [
            _user("Hi"),
            {"role": "model", "parts": [_call("f", {}, "a"), _call("f", {}, "b")]},
            {"role": "function", "parts": [_result("f", {}, "b"), _result("f", {}), _result("g", {})]},
        ]
    }

    messages = parse_body(body, "m", GENERATE).messages

    assert [m.tool_call_id for m in messages[2:]] == ["b", "a", "g"]


def test_user_turn_with_text_after_function_responses_keeps_both() -> None:
    body = {
        "contents": [
            _user("Hi"),
            {"role": "model", "parts": [_call("f", {}, "a")]},
            {"role": "user", "parts": [_result("f", {"ok": True}), {"text": "And now?"}]},
        ]
    }

    messages = parse_body(body, "m", GENERATE).messages

    assert [(m.role, m.text) for m in messages[2:]] == [("tool", '{"ok":true}'), ("user", "And now?")]


def test_thought_parts_are_not_answer_text_and_role_defaults_to_user() -> None:
    body = {
        "contents": [
            {"parts": [{"text": "Question"}]},
            {"role": "model", "parts": [{"text": "thinking...", "thought": True}, {"text": "Answer"}]},
        ]
    }

    messages = parse_body(body, "m", GENERATE).messages

    assert [(m.role, m.text) for m in messages] == [("user", "Question"), ("assistant", "Answer")]


def test_preamble_holds_system_instruction_and_tools() -> None:
    tools = [{"functionDeclarations": [{"name": "f"}, {"name": "g"}]}, {"googleSearch": {}}]
    body = {"contents": [_user("Hi")], "systemInstruction": {"parts": [{"text": "Be "}, {"text": "brief."}]}}

    request = parse_body({**body, "tools": tools}, "m", STREAM_SSE)

    assert request.preamble.startswith("Be brief.\n")
    assert '"functionDeclarations"' in request.preamble
    assert request.tool_names == ("f", "g")
    assert request.stream and request.cache_mode == "implicit" and request.provider == "gemini"


@pytest.mark.parametrize(
    ("config", "mode", "name", "names"),
    [
        (None, "auto", None, ("f", "g")),
        ({"mode": "AUTO"}, "auto", None, ("f", "g")),
        ({"mode": "VALIDATED"}, "auto", None, ("f", "g")),
        ({"mode": "NONE"}, "none", None, ("f", "g")),
        ({"mode": "ANY"}, "required", None, ("f", "g")),
        ({"mode": "ANY", "allowedFunctionNames": ["g"]}, "function", "g", ("f", "g")),
        ({"mode": "ANY", "allowedFunctionNames": ["f", "g"]}, "required", None, ("f", "g")),
    ],
)
def test_function_calling_config(config: Any, mode: str, name: str | None, names: tuple[str, ...]) -> None:
    body: dict[str, Any] = {
        "contents": [_user("Hi")],
        "tools": [{"functionDeclarations": [{"name": "f"}, {"name": "g"}]}],
    }
    if config is not None:
        body["toolConfig"] = {"functionCallingConfig": config}

    request = parse_body(body, "m", GENERATE)

    assert (request.tool_choice.mode, request.tool_choice.name, request.tool_names) == (mode, name, names)


@pytest.mark.parametrize(
    ("generation_config", "expected"),
    [
        (None, "text"),
        ({"temperature": 0.2}, "text"),
        ({"responseMimeType": "text/plain"}, "text"),
        ({"responseMimeType": "application/json"}, "json_object"),
        ({"responseMimeType": "application/json", "responseSchema": {"type": "OBJECT"}}, "json_schema"),
        ({"responseMimeType": "application/json", "responseJsonSchema": {"type": "object"}}, "json_schema"),
    ],
)
def test_response_format(generation_config: Any, expected: str) -> None:
    body: dict[str, Any] = {"contents": [_user("Hi")]}
    if generation_config is not None:
        body["generationConfig"] = generation_config

    assert parse_body(body, "m", GENERATE).response_format == expected


def test_function_call_in_a_user_turn_is_rejected() -> None:
    with pytest.raises(InvalidRequest) as caught:
        parse_body({"contents": [{"role": "user", "parts": [_call("f", {})]}]}, "m", GENERATE)
    assert caught.value.param == "contents[0].parts[0].functionCall"
