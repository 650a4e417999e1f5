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

ANSWERED = {"start", "execute", "restart", "repeat_last_response", "replay", "scenario"}


def _configure(session: SessionClient) -> None:
    session.configure(
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
    )


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
def test_admission_and_explanation_agree(llmts_session: SessionClient) -> None:
    _configure(llmts_session)
    seen = set()
    for conversation, model, texts, expected in CASES:
        messages = _history(*texts)
        explained = llmts_session.explain(
            {"model": model, "messages": messages}, conversation_id=conversation
        )
        real = _send(llmts_session, conversation, model, messages)
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


def test_explanations_name_the_messages_admission_answers(llmts_session: SessionClient) -> None:
    """The three messages the two copies used to word differently."""
    _configure(llmts_session)
    unknown = llmts_session.explain({"model": "gpt-9", "messages": _history("Hi")})
    assert unknown["error_message"] == "The model `gpt-9` does not exist or you do not have access to it."
    nothing = llmts_session.explain({"model": "o3", "messages": _history("Hi")})
    assert nothing["error_message"] == "no scenario of this session serves openai requests for model 'o3'"
    llmts_session.openai_client(max_retries=0).chat.completions.create(
        model="gpt-4.1-mini", messages=_history("Hello")
    )
    exhausted = llmts_session.explain({"model": "gpt-4.1-mini", "messages": _history("Hello", "x", "y")})
    assert (
        exhausted["error_message"] == "scenario 'fallback' has no responses left (1 configured, all consumed)"
    )
