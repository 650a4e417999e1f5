"""``llmts_expect``'s calls and the ``llmts_verify`` marker check their arguments where they are made: an
unknown argument or a refused value raises ``LlmtsExpectationError`` (a ``TypeError``) naming it and the
valid names, which are the models' own fields (no server: nothing is sent until the test ends)."""

from __future__ import annotations

import re
from typing import Any, cast

import pytest
from pydantic import BaseModel, ValidationError

from llmts.client import SessionClient
from llmts.pytest.verify import LlmtsExpectationError, LlmtsExpectations
from llmts.schema.journal import JournalQuery
from llmts.schema.resilience import ResilienceExpectation
from llmts.schema.verify import (
    ConversationExpectation,
    RequestExpectation,
    RetryExpectation,
    ToolExpectation,
    VerificationRequest,
)
from tests.support.docs import ROOT, doc_table

_NO_SESSION = cast(SessionClient, None)  # nothing here talks to a server


def _expect(**marker: Any) -> LlmtsExpectations:
    return LlmtsExpectations(_NO_SESSION, **marker)


def _valid(error: pytest.ExceptionInfo[LlmtsExpectationError]) -> list[str]:
    """The names after ``valid:`` in the message."""
    return str(error.value).split("; valid: ")[1].split(", ")


def _fields(model: type[BaseModel], *without: str) -> list[str]:
    return sorted(set(model.model_fields) - set(without))


def test_the_error_is_a_type_error_and_never_a_validation_error() -> None:
    assert issubclass(LlmtsExpectationError, TypeError)
    assert not issubclass(LlmtsExpectationError, ValidationError)


def test_an_unknown_filter_names_itself_a_close_name_and_every_valid_one() -> None:
    with pytest.raises(LlmtsExpectationError) as error:
        _expect().request("weather", provder="openai")
    message = str(error.value)
    assert message.startswith(
        "llmts_expect.request() got an unexpected argument 'provder' (did you mean 'provider'?); valid: "
    )
    # The journal query's filters and the expectation's own fields, sorted: derived from the models.
    assert _valid(error) == sorted(_fields(JournalQuery) + _fields(RequestExpectation, "name", "query"))
    assert {"nth", "has_tool_results", "tool_result_contains", "from_", "minimum_count"} <= set(_valid(error))
    assert "\n" not in message


@pytest.mark.parametrize(
    ("call", "model", "positional"),
    [
        (lambda e: e.request("r").tool("result", argumets={}), ToolExpectation, "kind"),
        (lambda e: e.retry("g", statuses=[429]), RetryExpectation, "group"),
        (lambda e: e.conversation_state("graph", visited=["a"]), ConversationExpectation, "scenario"),
        (lambda e: e.scope(provder="openai"), JournalQuery, None),
        (lambda e: e.resilient(honored_retry_after=True), ResilienceExpectation, "group"),
    ],
    ids=["tool", "retry", "conversation_state", "scope", "resilient"],
)
def test_every_method_lists_its_models_fields(
    call: Any, model: type[BaseModel], positional: str | None
) -> None:
    with pytest.raises(LlmtsExpectationError) as error:
        call(_expect())
    assert re.match(
        r"llmts_expect\.[a-z_]+\(('r'\)\.tool\()?\) got an unexpected argument '\w+'", str(error.value)
    )
    assert _valid(error) == _fields(model, *([positional] if positional else []))


def test_several_unknown_arguments_are_all_named() -> None:
    with pytest.raises(LlmtsExpectationError, match=r"got unexpected arguments 'provder', 'modle'; valid: "):
        _expect().scope(provder="openai", modle="gpt-4o")


def test_the_marker_lists_the_verification_fields_and_the_conversation() -> None:
    with pytest.raises(LlmtsExpectationError) as error:
        _expect(no_unexpected_call=True)
    assert str(error.value).startswith(
        "@pytest.mark.llmts_verify() got an unexpected argument 'no_unexpected_call' "
        "(did you mean 'no_unexpected_calls'?)"
    )
    assert _valid(error) == sorted([*_fields(VerificationRequest), "conversation"])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda e: e.request("r", minimum_count=-1),
            "llmts_expect.request('r'): minimum_count: Input should be greater than or equal to 0 (got -1)",
        ),
        (
            lambda e: e.request("r", status="teapot"),
            "llmts_expect.request('r'): status: Input should be a valid integer, unable to parse string as "
            "an integer (got 'teapot')",
        ),
        (
            lambda e: e.request("r", nth=0),
            "llmts_expect.request('r'): nth: Input should be greater than or equal to 1 (got 0)",
        ),
        (
            lambda e: e.request("r", nth=2, maximum_count=None),
            "llmts_expect.request('r'): nth selects one request (it must exist): minimum_count and "
            "maximum_count do not apply with it, leave them out",
        ),
        (
            lambda e: e.request("r", tool_result_contains=""),
            "llmts_expect.request('r'): tool_result_contains: String should have at least 1 character "
            "(got '')",
        ),
        (
            lambda e: e.request("r", from_="2026-01-01T00:00:00"),
            "llmts_expect.request('r'): from/to need a time zone (e.g. 2026-01-01T00:00:00Z)",
        ),
        (
            lambda e: e.request("r").tool("call"),
            "llmts_expect.request('r').tool('call'): kind: Input should be 'response_call', 'request_call' "
            "or 'result' (got 'call')",
        ),
        (
            lambda e: e.request("r").tool("result", arguments={"city": "Paris"}),
            "llmts_expect.request('r').tool('result'): arguments applies to response_call and request_call; "
            "use result for results",
        ),
        (
            lambda e: e.retry("g", status_sequence=[429, 42]),
            "llmts_expect.retry('g'): status_sequence: statuses are 100..599 (or null) (got [429, 42])",
        ),
        (
            lambda e: e.conversation_state("graph"),
            "llmts_expect.conversation_state('graph'): a conversation expectation needs visited_steps and/or "
            "terminal",
        ),
        (
            lambda e: e.scope(limit=501),
            "llmts_expect.scope(): limit: Input should be less than or equal to 500 (got 501)",
        ),
        (
            lambda e: e.request("r").request("r"),
            "llmts_expect.request('r'): a request expectation named 'r' exists already (names are unique)",
        ),
    ],
)
def test_a_refused_value_fails_the_call_in_one_line(call: Any, message: str) -> None:
    with pytest.raises(LlmtsExpectationError) as error:
        call(_expect())
    assert str(error.value) == message


def test_a_marker_value_is_checked_at_set_up_and_its_names_stay_taken() -> None:
    with pytest.raises(LlmtsExpectationError) as error:
        _expect(requests=[{"query": {}}])
    assert str(error.value) == "@pytest.mark.llmts_verify(): requests[0].name: Field required"
    marked = _expect(requests=[{"name": "chat"}])
    with pytest.raises(LlmtsExpectationError, match="named 'chat' exists already"):
        marked.request("chat")


def test_the_per_request_tool_bound_fails_at_the_call_that_breaks_it() -> None:
    builder = _expect().request("r")
    for _ in range(64):
        builder.tool("result")
    with pytest.raises(
        LlmtsExpectationError, match=r"^llmts_expect.request\('r'\).tool\('result'\): tools: "
    ):
        builder.tool("result")


def test_valid_calls_build_the_verification_request() -> None:
    expect = _expect(no_unexpected_calls=True)
    expect.scope(**{"from": "2026-01-01T00:00:00Z"}, has_tool_results=True)
    expect.request("second", provider="openai", tool_result_contains="Paris", nth=2).tool(
        "result", name="get_weather", result={"sky": "clear"}
    ).request("any", from_="2026-01-01T00:00:00Z", maximum_count=None)
    expect.retry("g", status_sequence=[429, 200]).conversation_state("graph", terminal=True).in_order()

    request = expect.verification_request().model_dump(mode="json", by_alias=True, exclude_unset=True)
    assert request["scope"] == {"from": "2026-01-01T00:00:00Z", "has_tool_results": True}
    assert request["requests"] == [
        {
            "name": "second",
            "query": {"provider": "openai", "tool_result_contains": "Paris"},
            "nth": 2,
            "tools": [{"kind": "result", "name": "get_weather", "result": {"sky": "clear"}}],
        },
        {"name": "any", "query": {"from": "2026-01-01T00:00:00Z"}, "maximum_count": None},
    ]
    assert (request["no_unexpected_calls"], request["in_order"]) == (True, True)
    assert request["retries"] == [{"group": "g", "status_sequence": [429, 200]}]
    assert request["conversations"] == [{"scenario": "graph", "terminal": True}]


def test_resilient_checks_its_values_at_the_call_and_builds_the_request() -> None:
    with pytest.raises(
        LlmtsExpectationError, match=r"^llmts_expect\.resilient\('g'\): backoff: Input should be"
    ):
        _expect().resilient("g", backoff="linear")
    with pytest.raises(LlmtsExpectationError, match=r"needs a field to check"):
        _expect().resilient(provider="openai")
    expect = _expect().resilient(honoured_retry_after=True, gave_up=False).resilient("g", maximum_attempts=2)
    request = expect.verification_request().model_dump(mode="json", exclude_unset=True)
    assert request["resilience"] == [
        {"honoured_retry_after": True, "gave_up": False},
        {"group": "g", "maximum_attempts": 2},
    ]


def test_the_expectation_fields_and_the_query_filters_do_not_overlap() -> None:
    """``request(name, **arguments)`` sorts its arguments into the two by name."""
    assert not set(_fields(RequestExpectation, "name", "query")) & set(_fields(JournalQuery))


def test_the_docs_filter_table_lists_every_journal_filter() -> None:
    """pytest-plugin.md's table of ``request(...)`` filters names every field of ``JournalQuery``, so a new
    journal filter is documented where tests use it."""
    table = doc_table("docs/pytest-plugin.md", "| filter | type | a request matches when |")
    listed = {name for row in table for name in re.findall(r"`([a-z0-9_]+)`", row[0])}
    assert listed == set(JournalQuery.model_fields)


def test_the_docs_show_the_error_as_it_is() -> None:
    """pytest-plugin.md quotes the error of a misspelled filter whole, every valid name included."""
    with pytest.raises(LlmtsExpectationError) as error:
        _expect().request("weather", provder="openai")
    text = (ROOT / "docs" / "pytest-plugin.md").read_text(encoding="utf-8")
    assert f"E       llmts.pytest.verify.LlmtsExpectationError: {error.value}\n" in text
