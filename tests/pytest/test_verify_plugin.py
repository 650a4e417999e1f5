"""The ``llmts_verify`` marker and the ``llmts_expect`` fixture, run for real in an inner pytest
against this run's server: passing verdicts pass, failing ones fail the test with the server's report."""

from __future__ import annotations

import pytest

from llmts import LlmTestServer
from tests.support.inner_pytest import attached_to, run_in_process

pytestmark = pytest.mark.sdk

INNER_TESTS = """
import openai
import pytest

HI = [{"role": "user", "content": "hi"}]
WEATHER = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}


CHAT = {"name": "chat", "query": {"provider": "openai"}}


@pytest.mark.llmts_verify(no_unexpected_calls=True, requests=[CHAT])
def test_marker_passes(llmts_openai):
    llmts_openai.chat.completions.create(model="gpt-4.1-mini", messages=HI)


@pytest.mark.llmts_verify(no_unexpected_calls=True)
def test_marker_fails_on_an_unexpected_call(llmts_openai):
    llmts_openai.chat.completions.create(model="gpt-4.1-mini", messages=HI)


@pytest.mark.llmts_verify(no_unexpected_calls=True)
def test_marker_alone_brings_the_session_and_passes_without_calls():
    pass


def test_expect_fixture_passes(llmts_session, llmts_expect):
    llmts_session.configure({"scenarios": [{"responses": [
        {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]}
    ]}]})
    llmts_expect.no_unexpected_calls().request("weather", provider="openai", success=True).tool(
        "response_call", name="get_weather", arguments={"city": "Paris"}
    )
    llmts_session.openai_client(max_retries=0).chat.completions.create(
        model="gpt-4.1-mini", messages=HI, tools=[WEATHER]
    )


def test_expect_fixture_fails_with_the_report(llmts_session, llmts_expect):
    llmts_expect.request("two chats", provider="openai", minimum_count=2, maximum_count=2)
    llmts_session.openai_client(max_retries=0).chat.completions.create(model="gpt-4.1-mini", messages=HI)


@pytest.mark.llmts_verify(retries=[{"group": "g", "status_sequence": [429, 200]}])
def test_marker_and_fixture_combine(llmts_session, llmts_expect):
    llmts_session.configure({"scenarios": [{"responses": [
        {"error": {"status": 429, "code": "rate_limit_exceeded", "message": "slow", "retry_after": 0}},
        {"text": "ok"},
    ]}]})
    llmts_expect.no_unexpected_calls()
    headers = {"X-Llm-Test-Server-Retry-Group": "g"}
    client = llmts_session.openai_client(max_retries=1, default_headers=headers)
    client.chat.completions.create(model="gpt-4.1-mini", messages=HI)


def test_a_failing_body_reports_its_own_failure(llmts_openai, llmts_expect):
    llmts_expect.no_unexpected_calls()
    llmts_openai.chat.completions.create(model="gpt-4.1-mini", messages=HI)
    assert 1 == 2, "the body's own failure"


@pytest.mark.llmts_verify(requests=[{"query": {}}])
def test_a_malformed_marker_errors_at_set_up():
    pass


@pytest.mark.llmts_verify(no_unexpected_call=True)
def test_an_unknown_marker_argument_errors_at_set_up():
    pass


def test_an_unknown_argument_fails_at_the_call(llmts_expect):
    llmts_expect.request("weather", provder="openai")
    raise AssertionError("not reached")


def test_a_failed_tool_result_check_shows_what_was_sent(llmts_session, llmts_expect):
    llmts_session.configure({"scenarios": [{"responses": [
        {"tool_calls": [{"id": "call_w", "name": "get_weather", "arguments": {"city": "Paris"}}]},
        {"text": "Clear."},
    ]}]})
    llmts_expect.request("answers", has_tool_results=True).tool(
        "result", name="get_weather", result={"sky": "rain"}
    )
    client = llmts_session.openai_client(max_retries=0)
    first = client.chat.completions.create(model="gpt-4.1-mini", messages=HI, tools=[WEATHER])
    result = {"role": "tool", "tool_call_id": "call_w", "content": '{"sky": "clear"}'}
    history = [*HI, first.choices[0].message.model_dump(exclude_none=True), result]
    client.chat.completions.create(model="gpt-4.1-mini", messages=history, tools=[WEATHER])
"""


def test_marker_and_fixture_verify_after_the_test(
    pytester: pytest.Pytester, llmts_server: LlmTestServer
) -> None:
    pytester.makepyfile(test_inner=INNER_TESTS)
    args = [*attached_to(llmts_server), "-rA"]

    result = run_in_process(pytester, *args, preload=("openai",))

    outcomes = result.parseoutcomes()
    assert (outcomes.get("passed"), outcomes.get("failed"), outcomes.get("errors")) == (4, 5, 2), (
        result.stdout.str()
    )
    output = result.stdout.str()
    failures = output.split("= FAILURES =")[1]
    unexpected = failures.split("test_marker_fails_on_an_unexpected_call")[1]
    assert "llmts: verification failed: 1 problem(s)" in unexpected
    assert (
        "- [unexpected_call] 1 request(s) in scope match no expectation: #1 openai chat.completions -> 200"
        in unexpected
    )
    counted = failures.split("test_expect_fixture_fails_with_the_report")[1]
    assert "- [count] requests[0] (two chats): expected exactly 2 matching request(s), found 1" in counted
    assert "AssertionError: the body's own failure" in failures
    # The failing body is not verified on top. Count in the tracebacks only: under CI=true pytest repeats
    # full failure messages in the short summary.
    tracebacks = failures.split("short test summary info")[0]
    assert tracebacks.count("llmts: verification failed") == 3
    assert "ERROR at setup of test_a_malformed_marker_errors_at_set_up" in output
    assert "@pytest.mark.llmts_verify(): requests[0].name: Field required" in output
    assert "ERROR at setup of test_an_unknown_marker_argument_errors_at_set_up" in output
    assert (
        "@pytest.mark.llmts_verify() got an unexpected argument 'no_unexpected_call' (did you mean "
        "'no_unexpected_calls'?); valid: conversation, conversations, in_order, max_cost_usd, "
        "no_unexpected_calls, requests, resilience, retries, scope"
    ) in output
    # An unknown argument fails the line that has it, before the body goes on, with the valid names.
    unknown = failures.split("_ test_an_unknown_argument_fails_at_the_call _")[1].split("\n_")[0]
    assert '>       llmts_expect.request("weather", provder="openai")' in unknown
    assert (
        "LlmtsExpectationError: llmts_expect.request() got an unexpected argument 'provder' (did you mean "
        "'provider'?); valid: a2a_agent, after, completed, conversation,"
    ) in unknown
    assert "not reached" not in unknown
    assert "llmts/pytest/verify.py" not in unknown  # the traceback ends at the test's own line
    # A failed tool-result check shows what the request sent back.
    sent = failures.split("_ test_a_failed_tool_result_check_shows_what_was_sent _")[1]
    assert "- [tool_count] requests[0] (answers).tools[0]: request req_" in sent
    assert 'expected exactly 1 result name=\'get_weather\' result={"sky":"rain"}, found 0' in sent
    assert "    the request sent back 1 tool result(s), closest first:" in sent
    assert '        get_weather(call_w): {"sky": "clear"}  [differs: result]' in sent
    for name in (
        "test_marker_passes",
        "test_marker_alone_brings_the_session_and_passes_without_calls",
        "test_expect_fixture_passes",
        "test_marker_and_fixture_combine",
    ):
        assert f"PASSED test_inner.py::{name}" in output
