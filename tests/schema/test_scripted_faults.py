"""Ready-made stream faults and scripted errors (``llmts.schema.scripted_faults``) and the builder methods
that attach them: one factory per mode of the table, each the JSON a hand-written plan would be, and what
the official SDKs do with them against a real server."""

from __future__ import annotations

import itertools
import json
import re
import time
from typing import Any

import anthropic
import openai
import pytest

from llmts import ConfigBuilder, SessionClient
from llmts.errors import ConfigurationInvalid
from llmts.schema.builder import ScenarioBuilder, StepBuilder
from llmts.schema.faults import MODES, StreamDelivery
from llmts.schema.fixtures import ErrorFixture
from llmts.schema.scripted_faults import (
    ERRORS,
    STREAM_FAULTS,
    abort_connection,
    delay_then_continue,
    early_clean_end,
    http_error_page,
    rate_limited,
    reset_before_headers,
    server_error,
    stall,
    websocket_close,
)
from tests.helpers import USER_HI, transport_errors
from tests.support.docs import doc_table

MODEL = "gpt-4.1-mini"
NEXT = "Explicit next attempt."
# The parameters a mode cannot do without (the table's ``needs``), for calling every factory.
REQUIRED = {
    "delay_then_continue": {"delay_ms": 5},
    "stall": {"delay_ms": 5},
    "truncate_bytes": {"cut_bytes": 3},
    "slow_drip": {"bytes_per_second": 100},
    "close": {"code": 1011},
    "http_error_page": {"status": 502},
}


# --- the factories ---------------------------------------------------------------------------------------


def test_every_mode_of_the_table_has_its_factory() -> None:
    assert list(STREAM_FAULTS) == list(MODES)
    for mode, factory in STREAM_FAULTS.items():
        plan = factory(**REQUIRED.get(mode, {}))
        assert isinstance(plan, StreamDelivery) and plan.mode == mode
        # What a hand-written dict of the same plan validates to.
        assert StreamDelivery.model_validate({"mode": mode, **REQUIRED.get(mode, {})}) == plan


def test_python_api_lists_every_factory() -> None:
    """docs/python-api.md's "Faults and errors" table has a row naming each mode's factory, and each
    error factory (step 4 of contributing.md's fault-mode recipe)."""

    def factories(header: str) -> set[str]:
        return {
            name
            for row in doc_table("docs/python-api.md", header)
            for name in re.findall(r"`([a-z_]+)\(", row[0])
        }

    assert {factory.__name__ for factory in STREAM_FAULTS.values()} <= factories("| factory | the plan |")
    assert set(ERRORS) <= factories("| factory | status, `code` |")


def test_factories_take_the_mode_parameters() -> None:
    assert early_clean_end(2).model_dump(mode="json") == {
        "mode": "early_clean_end",
        "after_content_frames": 2,
    }
    assert stall(3, delay_ms=500).model_dump(mode="json") == {
        "mode": "stall",
        "after_content_frames": 3,
        "delay_ms": 500,
    }
    assert http_error_page(504).model_dump(mode="json") == {"mode": "http_error_page", "status": 504}
    assert websocket_close(4000, "bye", after_content_frames=2).model_dump(mode="json") == {
        "mode": "close",
        "after_content_frames": 2,
        "code": 4000,
        "reason": "bye",
    }
    assert reset_before_headers().model_dump(mode="json") == {"mode": "reset_before_headers"}


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: stall(delay_ms=0), "stall needs delay_ms"),
        (lambda: early_clean_end(0), "after_content_frames"),
        (lambda: http_error_page(500), "http_error_page needs status 502, 503 or 504"),
        (lambda: websocket_close(1005), "close needs code"),
        (lambda: rate_limited(-1), "retry_after"),
    ],
)
def test_a_bad_parameter_fails_at_the_call(make: Any, message: str) -> None:
    with pytest.raises(ConfigurationInvalid) as raised:
        make()
    assert message in str(raised.value)


def test_error_factories_and_their_builder_methods() -> None:
    statuses = {
        name: factory("a message") if name == "bad_request" else factory() for name, factory in ERRORS.items()
    }
    assert {name: (e.status, e.code) for name, e in statuses.items()} == {
        "rate_limited": (429, "rate_limit_exceeded"),
        "quota_exceeded": (429, "insufficient_quota"),
        "server_error": (500, "server_error"),
        "service_unavailable": (503, "service_unavailable"),
        "overloaded": (529, "overloaded_error"),
        "bad_request": (400, "invalid_request_error"),
        "context_length_exceeded": (400, "context_length_exceeded"),
    }
    assert all(isinstance(e, ErrorFixture) and e.message for e in statuses.values())
    assert statuses["quota_exceeded"].should_retry is False  # out of credit: retrying cannot help
    for name in ERRORS:  # each error has its method on both builders
        assert callable(getattr(ScenarioBuilder, name)) and callable(getattr(StepBuilder, name))


def test_builders_write_the_configuration_json_a_test_would_write_by_hand() -> None:
    built = (
        ConfigBuilder()
        .scenario("main")
        .text("First second.", chunks=["First ", "second."], stream_delivery=early_clean_end(1))
        .json({"a": 1}, stream_delivery=http_error_page(503))
        .tool_call("get_weather", {"city": "Paris"}, stream_delivery=reset_before_headers())
        .rate_limited(2, delay_ms=10)
        .overloaded(message="Busy")
        .fail(server_error(retry_after=1))
        .response({"text": "Late.", "stream_delivery": stall(delay_ms=50)})
        .conversation("graph")
        .step("ask")
        .when(turn=1)
        .text("Hi.", stream_delivery={"mode": "empty_response"})
        .then("next")
        .step("next")
        .context_length_exceeded()
        .complete()
        .config
    )

    data = built.to_dict()

    assert data["scenarios"][0]["responses"] == [
        {
            "text": "First second.",
            "chunks": ["First ", "second."],
            "stream_delivery": {"mode": "early_clean_end", "after_content_frames": 1},
        },
        {"json": {"a": 1}, "stream_delivery": {"mode": "http_error_page", "status": 503}},
        {
            "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
            "stream_delivery": {"mode": "reset_before_headers"},
        },
        {
            "error": {
                "status": 429,
                "code": "rate_limit_exceeded",
                "message": "Rate limit reached. Please try again later.",
                "retry_after": 2,
            },
            "delay_ms": 10,
        },
        {"error": {"status": 529, "code": "overloaded_error", "message": "Busy"}},
        {
            "error": {
                "status": 500,
                "code": "server_error",
                "message": "The server had an error while processing your request.",
                "retry_after": 1,
            }
        },
        {"text": "Late.", "stream_delivery": {"mode": "stall", "after_content_frames": 1, "delay_ms": 50}},
    ]
    steps = data["conversations"][0]["steps"]
    assert steps[0]["response"] == {"text": "Hi.", "stream_delivery": {"mode": "empty_response"}}
    assert steps[1]["response"]["error"]["code"] == "context_length_exceeded"
    built.build()  # and it is a valid configuration


def test_mcp_and_a2a_results_take_them_too() -> None:
    config = (
        ConfigBuilder().mcp_server("files").tool("search").text("found", stream_delivery=stall(delay_ms=50))
    )
    config.config.a2a_agent("helper").text("On it.", stream_delivery=reset_before_headers())

    data = json.loads(json.dumps(config.config.to_dict()))  # plain JSON all the way down

    result = data["mcp_servers"][0]["tools"][0]["results"][0]
    assert result["stream_delivery"] == {"mode": "stall", "after_content_frames": 1, "delay_ms": 50}
    assert data["a2a_agents"][0]["responses"][0]["stream_delivery"] == {"mode": "reset_before_headers"}
    config.build()


def test_a_step_still_takes_one_response() -> None:
    step = ConfigBuilder().conversation("g").step("only").rate_limited()
    with pytest.raises(ValueError, match="already has a response"):
        step.server_error()


# --- through a real server and the official SDKs ----------------------------------------------------------


def _stream_text(client: Any) -> str:
    chunks = client.chat.completions.create(model=MODEL, messages=USER_HI, stream=True)
    return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)


def _faulted(session: SessionClient, plan: StreamDelivery) -> None:
    """A two-chunk stream delivered by ``plan``, then the answer a client's next attempt gets."""
    builder = ConfigBuilder().models(MODEL).scenario()
    builder.text("First second.", chunks=["First ", "second."], stream_delivery=plan).text(NEXT)
    session.configure(builder)


def _answer(client: Any) -> str:
    return str(client.chat.completions.create(model=MODEL, messages=USER_HI).choices[0].message.content)


def _entries(session: SessionClient) -> list[dict[str, Any]]:
    """The journal oldest first, once every entry is complete."""
    deadline = time.monotonic() + 5
    while True:
        entries = list(reversed(session.requests()))
        if all(entry["completed"] for entry in entries):
            return entries
        assert time.monotonic() < deadline, entries
        time.sleep(0.01)


@pytest.mark.sdk
def test_rate_limited_is_retried_after_retry_after_then_raised(llmts_session: SessionClient) -> None:
    llmts_session.configure(
        ConfigBuilder().models(MODEL).scenario(terminal_policy="repeat_last_response").rate_limited(0.2)
    )
    client = llmts_session.openai_client(max_retries=2)

    with pytest.raises(openai.RateLimitError) as raised:
        client.chat.completions.create(model=MODEL, messages=USER_HI)

    assert raised.value.status_code == 429 and raised.value.code == "rate_limit_exceeded"
    attempts = _entries(llmts_session)
    assert [(e["status"], e["retry_after_seconds"]) for e in attempts] == [(429, 0.2)] * 3
    starts = [e["started_monotonic_seconds"] for e in attempts]
    assert all(later - earlier >= 0.19 for earlier, later in itertools.pairwise(starts))


@pytest.mark.sdk
def test_quota_exceeded_is_not_retried(llmts_session: SessionClient) -> None:
    llmts_session.configure(ConfigBuilder().models(MODEL).scenario().quota_exceeded().text(NEXT))
    client = llmts_session.openai_client(max_retries=2)

    with pytest.raises(openai.RateLimitError) as raised:
        client.chat.completions.create(model=MODEL, messages=USER_HI)

    assert raised.value.code == "insufficient_quota"
    assert len(_entries(llmts_session)) == 1  # x-should-retry: false
    assert _answer(client) == NEXT


@pytest.mark.sdk
def test_server_errors_raise_each_sdks_own_exception(llmts_session: SessionClient) -> None:
    scenario = ConfigBuilder().scenario().server_error().service_unavailable().overloaded()
    scenario.bad_request("No such tool.").context_length_exceeded().overloaded()
    llmts_session.configure(scenario)
    client = llmts_session.openai_client(max_retries=0)
    raised: list[tuple[type[Exception], int, str | None]] = []
    for _ in range(5):
        with pytest.raises(openai.APIStatusError) as error:
            client.chat.completions.create(model=MODEL, messages=USER_HI)
        raised.append((type(error.value), error.value.status_code, error.value.code))

    assert raised == [
        (openai.InternalServerError, 500, "server_error"),
        (openai.InternalServerError, 503, "service_unavailable"),
        (openai.InternalServerError, 529, "overloaded_error"),
        (openai.BadRequestError, 400, "invalid_request_error"),
        (openai.BadRequestError, 400, "context_length_exceeded"),
    ]
    with pytest.raises(anthropic.OverloadedError):  # 529 is Anthropic's own overloaded answer
        llmts_session.anthropic_client(max_retries=0).messages.create(
            model="claude-sonnet-4-6", max_tokens=16, messages=USER_HI
        )


@pytest.mark.sdk
def test_early_clean_end_ends_the_stream_after_the_prefix(llmts_session: SessionClient) -> None:
    _faulted(llmts_session, early_clean_end(1))
    client = llmts_session.openai_client(max_retries=0)

    assert _stream_text(client) == "First "
    assert _entries(llmts_session)[0]["transport_outcome"] == "early_end"
    assert _answer(client) == NEXT


@pytest.mark.sdk
def test_abort_connection_breaks_the_stream(llmts_session: SessionClient) -> None:
    _faulted(llmts_session, abort_connection(1))
    client = llmts_session.openai_client(max_retries=0)

    with pytest.raises(transport_errors()):
        _stream_text(client)
    assert _entries(llmts_session)[0]["transport_outcome"] == "aborted"


@pytest.mark.sdk
def test_connection_faults_are_retried_by_the_sdk(llmts_session: SessionClient) -> None:
    _faulted(llmts_session, reset_before_headers())
    assert _stream_text(llmts_session.openai_client(max_retries=1)) == NEXT  # the retry got the next answer

    _faulted(llmts_session, http_error_page(503))
    with pytest.raises(openai.InternalServerError) as raised:
        _stream_text(llmts_session.openai_client(max_retries=0))
    assert raised.value.status_code == 503 and "<html" in raised.value.response.text.lower()


@pytest.mark.sdk
def test_delay_then_continue_on_a_conversation_step(llmts_session: SessionClient) -> None:
    config = ConfigBuilder().models(MODEL).conversation("slow").step("only").when(turn=1)
    config.text(
        "First second.", chunks=["First ", "second."], stream_delivery=delay_then_continue(delay_ms=300)
    )
    llmts_session.configure(config.complete())
    client = llmts_session.openai_client(max_retries=0)

    started = time.monotonic()
    assert _stream_text(client) == "First second."
    assert time.monotonic() - started >= 0.29
    entry = _entries(llmts_session)[0]
    assert (entry["step"], entry["transport_outcome"], entry["stream_delivery_applied"]) == (
        "only",
        "completed",
        True,
    )


def _every_error(session: SessionClient, model: str) -> None:
    """One scenario answering each ready-made error once, in the order of ``ERRORS``."""
    scenario = ConfigBuilder().models(model).scenario()
    scenario.rate_limited(1).quota_exceeded().server_error().service_unavailable().overloaded()
    session.configure(scenario.bad_request("No such tool.").context_length_exceeded())


@pytest.mark.sdk
def test_anthropic_raises_its_own_exception_for_each_error(llmts_session: SessionClient) -> None:
    _every_error(llmts_session, "claude-sonnet-4-6")
    client = llmts_session.anthropic_client(max_retries=0)
    raised = []
    for _ in ERRORS:
        with pytest.raises(anthropic.APIStatusError) as error:
            client.messages.create(model="claude-sonnet-4-6", max_tokens=16, messages=USER_HI)
        raised.append(type(error.value))

    assert raised == [
        anthropic.RateLimitError,
        anthropic.RateLimitError,
        anthropic.InternalServerError,
        anthropic.ServiceUnavailableError,
        anthropic.OverloadedError,
        anthropic.BadRequestError,
        anthropic.BadRequestError,
    ]


@pytest.mark.sdk
def test_google_genai_raises_client_and_server_errors_with_googles_status(
    llmts_session: SessionClient,
) -> None:
    from google.genai import errors

    _every_error(llmts_session, "gemini-2.5-flash")
    client = llmts_session.gemini_client()
    raised = []
    for _ in ERRORS:
        with pytest.raises(errors.APIError) as error:
            client.models.generate_content(model="gemini-2.5-flash", contents="Hi")
        raised.append((type(error.value), error.value.code, error.value.status))

    assert raised == [
        (errors.ClientError, 429, "RESOURCE_EXHAUSTED"),
        (errors.ClientError, 429, "RESOURCE_EXHAUSTED"),
        (errors.ServerError, 500, "INTERNAL"),
        (errors.ServerError, 503, "UNAVAILABLE"),
        (errors.ServerError, 529, "INTERNAL"),
        (errors.ClientError, 400, "INVALID_ARGUMENT"),
        (errors.ClientError, 400, "INVALID_ARGUMENT"),
    ]


@pytest.mark.sdk
def test_boto3_raises_the_modelled_bedrock_exceptions(llmts_session: SessionClient) -> None:
    import botocore.config
    import botocore.exceptions

    model = "anthropic.claude-3-5-haiku-20241022-v1:0"
    _every_error(llmts_session, model)
    client = llmts_session.bedrock_client(config=botocore.config.Config(retries={"total_max_attempts": 1}))
    raised = []
    for _ in ERRORS:
        with pytest.raises(botocore.exceptions.ClientError) as error:
            client.converse(modelId=model, messages=[{"role": "user", "content": [{"text": "Hi"}]}])
        raised.append(error.value.response["Error"]["Code"])

    assert raised == [
        "ThrottlingException",
        "ThrottlingException",
        "InternalServerException",
        "ServiceUnavailableException",
        "InternalServerException",
        "ValidationException",
        "ValidationException",
    ]
