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
"""

from __future__ import annotations

from typing import Any

from llmts.client import SessionClient
from llmts.schema.verify import (
    ConversationExpectation,
    RequestExpectation,
    RetryExpectation,
    ToolExpectation,
    VerificationRequest,
    VerificationResult,
)

__all__ = ["MARKER", "LlmtsExpectations", "RequestExpectationBuilder"]

MARKER = "llmts_verify"


class RequestExpectationBuilder:
    """One named request expectation; ``tool(...)`` adds tool expectations to it."""

    def __init__(self, owner: LlmtsExpectations, fields: dict[str, Any]) -> None:
        self._owner = owner
        self.fields = fields

    def tool(self, kind: str, **fields: Any) -> RequestExpectationBuilder:
        """``kind``: ``response_call``, ``request_call`` or ``result``; fields as ``ToolExpectation``."""
        self.fields.setdefault("tools", []).append(ToolExpectation(kind=kind, **fields))  # type: ignore[arg-type]
        return self

    def request(self, name: str, **fields: Any) -> RequestExpectationBuilder:
        return self._owner.request(name, **fields)


_REQUEST_FIELDS = frozenset({"minimum_count", "maximum_count", "tools", "require_streaming_terminal_marker"})


class LlmtsExpectations:
    """The expectations of one test on its session (the ``llmts_expect`` fixture)."""

    def __init__(self, session: SessionClient, *, conversation: str | None = None, **fields: Any) -> None:
        self.session = session
        self.conversation = conversation
        # The marker's fields, checked now so a typo fails at set-up rather than after the test.
        self._base: dict[str, Any] = (
            VerificationRequest.model_validate(fields).model_dump(
                mode="json", by_alias=True, exclude_unset=True
            )
            if fields
            else {}
        )
        self._marked = bool(fields)
        self._requests: list[RequestExpectationBuilder] = []
        self._conversations: list[ConversationExpectation] = []
        self._retries: list[RetryExpectation] = []
        self._flags: dict[str, Any] = {}

    def request(self, name: str, **fields: Any) -> RequestExpectationBuilder:
        """Requests named ``name``: keyword arguments are ``minimum_count``, ``maximum_count``,
        ``require_streaming_terminal_marker`` and any journal query filter (``provider="openai"``...)."""
        expectation = {key: fields.pop(key) for key in list(fields) if key in _REQUEST_FIELDS}
        if "from_" in fields:
            fields["from"] = fields.pop("from_")
        builder = RequestExpectationBuilder(self, {"name": name, "query": fields, **expectation})
        self._requests.append(builder)
        return builder

    def retry(self, group: str, **fields: Any) -> LlmtsExpectations:
        """The attempts of retry group ``group`` (fields as ``RetryExpectation``)."""
        self._retries.append(RetryExpectation(group=group, **fields))
        return self

    def conversation_state(self, scenario: str, **fields: Any) -> LlmtsExpectations:
        """A conversation graph's state (fields as ``ConversationExpectation``)."""
        self._conversations.append(ConversationExpectation(scenario=scenario, **fields))
        return self

    def no_unexpected_calls(self) -> LlmtsExpectations:
        self._flags["no_unexpected_calls"] = True
        return self

    def in_order(self) -> LlmtsExpectations:
        self._flags["in_order"] = True
        return self

    def scope(self, **query: Any) -> LlmtsExpectations:
        if "from_" in query:
            query["from"] = query.pop("from_")
        self._flags["scope"] = query
        return self

    @property
    def active(self) -> bool:
        return self._marked or bool(self._requests or self._conversations or self._retries or self._flags)

    def verification_request(self) -> VerificationRequest:
        data = {**self._base, **self._flags}
        data["requests"] = [
            *data.get("requests", []),
            *(RequestExpectation.model_validate(builder.fields) for builder in self._requests),
        ]
        data["conversations"] = [*data.get("conversations", []), *self._conversations]
        data["retries"] = [*data.get("retries", []), *self._retries]
        return VerificationRequest.model_validate(data)

    def verify(self) -> VerificationResult:
        return self.session.verify(self.verification_request(), conversation=self.conversation)
