"""Unit tests of the runtime (on top of, never instead of, the HTTP tests)."""

from __future__ import annotations

import pytest

from llmts.errors import (
    FixtureMismatch,
    ModelNotFound,
    RequestSuperseded,
    ScenarioExhausted,
    ScriptedError,
    SessionCapacityExceeded,
)
from llmts.runtime import SessionRegistry
from llmts.runtime.tokens import estimate_input_tokens, estimate_text_tokens
from llmts.schema import ConfigBuilder, NeutralMessage, NeutralRequest, ToolChoice
from tests.runtime.doubles import CountingIds, FixedClock


def _request(text: str = "hi", **fields: object) -> NeutralRequest:
    return NeutralRequest(
        provider="openai",
        operation="chat.completions",
        model=str(fields.pop("model", "gpt-4.1-mini")),
        messages=(NeutralMessage(role="user", text=text),),
        **fields,  # type: ignore[arg-type]
    )


def _registry() -> SessionRegistry:
    return SessionRegistry(clock=FixedClock(1_700_000_000.5), ids=CountingIds())


def test_clock_and_ids_are_injected() -> None:
    session = _registry().create()
    session.configure(ConfigBuilder().scenario().text("a").build())
    completion = session.complete(session.admit(_request()), _request())
    assert completion.created_at == 1_700_000_000
    assert completion.response_id == "000000000000000000000001"


def test_queue_consumed_in_order_then_rejected() -> None:
    session = _registry().create()
    session.configure(ConfigBuilder().scenario("s").text("a").text("b").build())
    answers = [session.complete(session.admit(_request()), _request()).output.text for _ in range(2)]
    assert answers == ["a", "b"]
    with pytest.raises(ScenarioExhausted):
        session.admit(_request())


def test_scripted_error_is_consumed_and_raised_on_completion() -> None:
    session = _registry().create()
    session.configure(
        ConfigBuilder().scenario().error(429, "rate", "slow", retry_after=1.5).text("ok").build()
    )
    admission = session.admit(_request())
    with pytest.raises(ScriptedError) as caught:
        session.complete(admission, _request())
    assert (caught.value.http_status, caught.value.code, caught.value.retry_after) == (429, "rate", 1.5)
    assert session.complete(session.admit(_request()), _request()).output.text == "ok"


def test_mismatch_does_not_advance() -> None:
    session = _registry().create()
    session.configure(ConfigBuilder().scenario().tool_call("f", {}).build())
    with pytest.raises(FixtureMismatch):
        session.admit(_request())  # declares no tools
    completion = session.complete(session.admit(_request(tool_names=("f",))), _request())
    assert completion.output.tool_calls[0].name == "f"


def test_tool_choice_none_rejects_tool_fixture() -> None:
    session = _registry().create()
    session.configure(ConfigBuilder().scenario().tool_call("f", {}).build())
    with pytest.raises(FixtureMismatch):
        session.admit(_request(tool_names=("f",), tool_choice=ToolChoice(mode="none")))


def test_reset_supersedes_admitted_work() -> None:
    session = _registry().create()
    session.configure(ConfigBuilder().scenario().text("a").build())
    admission = session.admit(_request())
    session.reset()
    with pytest.raises(RequestSuperseded):
        session.complete(admission, _request())


def test_unknown_model() -> None:
    session = _registry().create()
    session.configure(ConfigBuilder().models("m1").scenario().text("a").build())
    with pytest.raises(ModelNotFound):
        session.admit(_request(model="m2"))


def test_echo_until_configured() -> None:
    session = _registry().create()
    assert (
        session.complete(session.admit(_request("repeat me", model="anything")), _request()).output.text
        == "repeat me"
    )


def test_token_estimates_are_documented_numbers() -> None:
    assert [estimate_text_tokens(t) for t in ("", "a", "abcd", "abcde")] == [0, 1, 1, 2]
    messages = (NeutralMessage(role="system", text="x" * 8), NeutralMessage(role="user", text="y"))
    assert estimate_input_tokens(messages) == 3 + (4 + 2) + (4 + 1)
    assert estimate_input_tokens(messages, preamble="z" * 10) == 11 + 3 + 3


def test_registry_bounds_and_default() -> None:
    registry = SessionRegistry(max_sessions=1)
    registry.create()
    with pytest.raises(SessionCapacityExceeded, match="limit"):
        registry.create()
    assert registry.get("default") is registry.default


def test_scripted_errors_do_not_touch_the_prompt_cache() -> None:
    session = _registry().create()
    session.configure(ConfigBuilder().scenario().error(500, "boom", "m").text("ok").text("ok").build())
    long_request = NeutralRequest(
        provider="openai",
        operation="chat.completions",
        model="gpt-4.1-mini",
        messages=(NeutralMessage(role="system", text="x" * 6000), NeutralMessage(role="user", text="q")),
        cache_mode="implicit",
    )
    with pytest.raises(ScriptedError):
        session.complete(session.admit(long_request), long_request)
    first = session.complete(session.admit(long_request), long_request)
    second = session.complete(session.admit(long_request), long_request)
    assert first.usage.cached_tokens == 0  # the error before it cached nothing
    assert second.usage.cached_tokens >= 1024
