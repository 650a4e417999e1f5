"""Expectations a pytest test declares on what it sent; checked after the test body by the plugin.

    @pytest.mark.llmts_verify(no_unexpected_calls=True)
    def test_agent(llmts_session, llmts_expect):
        llmts_expect.request("weather call", provider="openai", success=True).tool(
            "response_call", name="get_weather", arguments={"city": "Paris"}
        )
        ...  # drive the application

The marker's keyword arguments are fields of a ``VerificationRequest``; the ``llmts_expect`` fixture adds
expectations fluently. Both end up in one ``POST /admin-api/verify``; a failed verdict fails the test
with the server's report.

Every call is checked where it is made: an argument the models have no field for, or a value they
refuse, raises ``LlmtsExpectationError`` (a ``TypeError``) naming it and the valid arguments, so a typo
fails the line that has it (the marker's fail the test's set-up); the functions that raise hide their
frames (``__tracebackhide__``), so pytest's traceback ends at the test's own line. The valid names are
the models' own fields (docs/pytest-plugin.md, "llmts_expect reference").
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from llmts.client import SessionClient
from llmts.schema.journal import JournalQuery
from llmts.schema.resilience import ResilienceExpectation
from llmts.schema.validation import format_location
from llmts.schema.verify import (
    ConversationExpectation,
    RequestExpectation,
    RetryExpectation,
    ToolExpectation,
    VerificationRequest,
    VerificationResult,
)

__all__ = ["MARKER", "LlmtsExpectationError", "LlmtsExpectations", "RequestExpectationBuilder"]

MARKER = "llmts_verify"

_Model = TypeVar("_Model", bound=BaseModel)

# A reported value is cut to this many characters.
_SHOWN_INPUT_CHARS = 60


class LlmtsExpectationError(TypeError):
    """An ``llmts_expect`` call or ``llmts_verify`` marker with an argument its model does not have, or a
    value the model refuses; the message names the argument and the valid ones, or the field and why."""


def _fields(model: type[BaseModel], *without: str) -> frozenset[str]:
    """A model's fields as keyword arguments (``from_``, not its alias ``from``)."""
    return frozenset(model.model_fields) - set(without)


# The filters every journal query takes, and the fields of each expectation beside its positional one.
_QUERY_ARGUMENTS = _fields(JournalQuery)
_REQUEST_FIELDS = _fields(RequestExpectation, "name", "query")
_REQUEST_ARGUMENTS = _REQUEST_FIELDS | _QUERY_ARGUMENTS
_TOOL_ARGUMENTS = _fields(ToolExpectation, "kind")
_RETRY_ARGUMENTS = _fields(RetryExpectation, "group")
_CONVERSATION_ARGUMENTS = _fields(ConversationExpectation, "scenario")
_RESILIENCE_ARGUMENTS = _fields(ResilienceExpectation)
# The marker's fields, plus the conversation the fixture verifies (the conversation header).
_MARKER_ARGUMENTS = _fields(VerificationRequest) | {"conversation"}


def _python_names(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """``from`` (the JSON name, reachable as ``**{"from": ...}``) as the keyword ``from_``."""
    return {("from_" if name == "from" else name): value for name, value in arguments.items()}


def _check_names(call: str, given: Iterable[str], valid: frozenset[str]) -> None:
    __tracebackhide__ = True
    unknown = [name for name in given if name not in valid]
    if not unknown:
        return
    if len(unknown) == 1:
        close = difflib.get_close_matches(unknown[0], valid, n=1)
        what = f"an unexpected argument {unknown[0]!r}" + (f" (did you mean {close[0]!r}?)" if close else "")
    else:
        what = "unexpected arguments " + ", ".join(repr(name) for name in unknown)
    raise LlmtsExpectationError(f"{call} got {what}; valid: {', '.join(sorted(valid))}")


def _reason(error: Mapping[str, Any], within: str | None) -> str:
    """One of pydantic's errors as ``field: reason (got value)``; ``within`` is dropped from the path (the
    query a call's filters went into)."""
    location = tuple(error["loc"])
    if within is not None and location[:1] == (within,):
        location = tuple("from_" if part == "from" else part for part in location[1:])
    message = str(error["msg"]).removeprefix("Value error, ")
    value = error.get("input")
    if error["type"] != "missing" and not isinstance(value, Mapping | BaseModel):
        shown = repr(value)
        if len(shown) > _SHOWN_INPUT_CHARS:
            shown = shown[: _SHOWN_INPUT_CHARS - 3] + "..."
        message += f" (got {shown})"
    path = format_location(location)
    return f"{path}: {message}" if path else message


def _validated(call: str, model: type[_Model], data: Any, within: str | None = None) -> _Model:
    __tracebackhide__ = True
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        reasons = "; ".join(_reason(error, within) for error in exc.errors())
        raise LlmtsExpectationError(f"{call}: {reasons}") from None


class RequestExpectationBuilder:
    """One named request expectation; ``tool(...)`` adds tool expectations to it."""

    def __init__(self, owner: LlmtsExpectations, fields: dict[str, Any]) -> None:
        self._owner = owner
        self.fields = fields

    def tool(self, kind: str, **fields: Any) -> RequestExpectationBuilder:
        """``kind``: ``response_call``, ``request_call`` or ``result``; keyword arguments are the fields of
        ``ToolExpectation`` (``name``, ``call_id``, ``arguments``, ``result``, ``fields``, ``minimum_count``,
        ``maximum_count``)."""
        __tracebackhide__ = True
        request = f"llmts_expect.request({self.fields['name']!r})"
        _check_names(f"{request}.tool()", fields, _TOOL_ARGUMENTS)
        call = f"{request}.tool({kind!r})"
        tool = _validated(call, ToolExpectation, {"kind": kind, **fields})
        tools = [*self.fields.get("tools", []), tool]
        _validated(call, RequestExpectation, {**self.fields, "tools": tools})  # the per-request bound
        self.fields["tools"] = tools
        return self

    def request(self, name: str, **fields: Any) -> RequestExpectationBuilder:
        """Another request expectation (as ``LlmtsExpectations.request``)."""
        __tracebackhide__ = True
        return self._owner.request(name, **fields)


class LlmtsExpectations:
    """The expectations of one test on its session (the ``llmts_expect`` fixture)."""

    def __init__(self, session: SessionClient, *, conversation: str | None = None, **fields: Any) -> None:
        __tracebackhide__ = True
        self.session = session
        self.conversation = conversation
        # The marker's fields, checked now so a typo fails at set-up rather than after the test.
        call = f"@pytest.mark.{MARKER}()"
        _check_names(call, fields, _MARKER_ARGUMENTS)
        marked = _validated(call, VerificationRequest, fields) if fields else None
        self._base: dict[str, Any] = (
            marked.model_dump(mode="json", by_alias=True, exclude_unset=True) if marked is not None else {}
        )
        self._names = {expectation.name for expectation in marked.requests} if marked is not None else set()
        self._marked = bool(fields)
        self._requests: list[RequestExpectationBuilder] = []
        self._conversations: list[ConversationExpectation] = []
        self._retries: list[RetryExpectation] = []
        self._resilience: list[ResilienceExpectation] = []
        self._flags: dict[str, Any] = {}
        # The last verification request ``verify`` sent (the plugin's trace shows it with the verdict).
        self.sent: VerificationRequest | None = None

    def request(self, name: str, **fields: Any) -> RequestExpectationBuilder:
        """The requests named ``name``: keyword arguments are the journal query's filters (``provider``,
        ``model``, ``tool_result_contains``...) and the expectation's own fields (``minimum_count``,
        ``maximum_count``, ``nth``, ``tools``, ``require_streaming_terminal_marker``)."""
        __tracebackhide__ = True
        fields = _python_names(fields)
        _check_names("llmts_expect.request()", fields, _REQUEST_ARGUMENTS)
        call = f"llmts_expect.request({name!r})"
        expectation = {key: value for key, value in fields.items() if key in _REQUEST_FIELDS}
        query = {key: value for key, value in fields.items() if key not in _REQUEST_FIELDS}
        data = {"name": name, "query": query, **expectation}
        _validated(call, RequestExpectation, data, within="query")
        if name in self._names:
            raise LlmtsExpectationError(
                f"{call}: a request expectation named {name!r} exists already (names are unique)"
            )
        self._names.add(name)
        builder = RequestExpectationBuilder(self, data)
        self._requests.append(builder)
        return builder

    def retry(self, group: str, **fields: Any) -> LlmtsExpectations:
        """The attempts of retry group ``group``; keyword arguments are the fields of ``RetryExpectation``."""
        __tracebackhide__ = True
        _check_names("llmts_expect.retry()", fields, _RETRY_ARGUMENTS)
        data = {"group": group, **fields}
        self._retries.append(_validated(f"llmts_expect.retry({group!r})", RetryExpectation, data))
        return self

    def resilient(self, group: str | None = None, /, **fields: Any) -> LlmtsExpectations:
        """How the client retried (``GET /admin-api/resilience``): every retry group in scope, or the one
        named ``group``; keyword arguments are the fields of ``ResilienceExpectation``
        (``honoured_retry_after``, ``backoff``, ``jitter``, ``retried_non_retryable``, ``gave_up``,
        ``cut_stream``, ``minimum_attempts``, ``maximum_attempts``, ``provider``, ``name``)."""
        __tracebackhide__ = True
        _check_names("llmts_expect.resilient()", fields, _RESILIENCE_ARGUMENTS - {"group"})
        data = {**fields} if group is None else {"group": group, **fields}
        call = "llmts_expect.resilient(" + ("" if group is None else repr(group)) + ")"
        self._resilience.append(_validated(call, ResilienceExpectation, data))
        return self

    def conversation_state(self, scenario: str, **fields: Any) -> LlmtsExpectations:
        """A conversation graph's state; keyword arguments are the fields of ``ConversationExpectation``."""
        __tracebackhide__ = True
        _check_names("llmts_expect.conversation_state()", fields, _CONVERSATION_ARGUMENTS)
        data = {"scenario": scenario, **fields}
        call = f"llmts_expect.conversation_state({scenario!r})"
        self._conversations.append(_validated(call, ConversationExpectation, data))
        return self

    def no_unexpected_calls(self) -> LlmtsExpectations:
        self._flags["no_unexpected_calls"] = True
        return self

    def in_order(self) -> LlmtsExpectations:
        self._flags["in_order"] = True
        return self

    def max_cost_usd(self, maximum: float) -> LlmtsExpectations:
        """The requests in scope cost at most ``maximum`` US dollars together (their journal ``cost_usd``,
        docs/prices.md); a request whose model has no price fails it (``cost_unpriced``)."""
        __tracebackhide__ = True
        data = {**self._base, **self._flags, "max_cost_usd": maximum}
        self._flags["max_cost_usd"] = _validated(
            "llmts_expect.max_cost_usd()", VerificationRequest, data
        ).max_cost_usd
        return self

    def scope(self, **query: Any) -> LlmtsExpectations:
        """Only the requests matching these journal query filters are seen by the expectations."""
        __tracebackhide__ = True
        query = _python_names(query)
        _check_names("llmts_expect.scope()", query, _QUERY_ARGUMENTS)
        scope = _validated("llmts_expect.scope()", JournalQuery, query)
        self._flags["scope"] = scope.model_dump(mode="json", by_alias=True, exclude_unset=True)
        return self

    @property
    def active(self) -> bool:
        return self._marked or bool(
            self._requests or self._conversations or self._retries or self._resilience or self._flags
        )

    def verification_request(self) -> VerificationRequest:
        __tracebackhide__ = True
        data = {**self._base, **self._flags}
        data["requests"] = [
            *data.get("requests", []),
            *(RequestExpectation.model_validate(builder.fields) for builder in self._requests),
        ]
        data["conversations"] = [*data.get("conversations", []), *self._conversations]
        data["retries"] = [*data.get("retries", []), *self._retries]
        data["resilience"] = [*data.get("resilience", []), *self._resilience]
        # Each part was checked at its call; what is left is the whole's (how many expectations in all).
        return _validated("llmts_expect", VerificationRequest, data)

    def verify(self) -> VerificationResult:
        """Send the expectations (``POST /admin-api/verify``); the request sent stays in ``sent``."""
        self.sent = self.verification_request()
        return self.session.verify(self.sent, conversation=self.conversation)
