"""``ConversationClient``: one conversation identity of a session (``SessionClient.for_conversation``), and
the normalized-request form the explain route takes."""

from __future__ import annotations

from typing import Any, Protocol

from llmts.client.sdk_shortcuts import SdkClientShortcuts
from llmts.schema.verify import VerificationRequest, VerificationResult

__all__ = ["CONVERSATION_HEADER", "ConversationClient", "explained_request"]

CONVERSATION_HEADER = "X-Llm-Test-Server-Conversation"
_EXPLAINED_FIELDS = (
    "model",
    "operation",
    "messages",
    "tool_names",
    "tool_choice",
    "response_format",
    "stream",
)


def explained_request(request: Any) -> dict[str, Any]:
    """A normalized request as the explain route takes it (from a dict or a ``NeutralRequest``)."""
    if isinstance(request, dict):
        return dict(request)
    dump = getattr(request, "model_dump", None)
    if dump is None:
        raise TypeError(f"explain() takes a dict or a NeutralRequest, not {type(request).__name__}")
    data: dict[str, Any] = dump(mode="json")
    body = {key: data[key] for key in _EXPLAINED_FIELDS if key in data}
    body["provider"] = data.get("provider")
    if data.get("choices", 1) != 1:
        body["n"] = data["choices"]
    choice = data.get("tool_choice") or {}
    body["tool_choice"] = (
        {"name": choice["name"]} if choice.get("mode") == "function" else choice.get("mode", "auto")
    )
    body["messages"] = [
        {
            "role": m["role"],
            "text": m.get("text", ""),
            "tool_calls": [
                {"id": c["id"], "name": c["name"], "arguments": c["arguments"]}
                for c in m.get("tool_calls", ())
            ],
            "tool_call_id": m.get("tool_call_id"),
        }
        for m in data.get("messages", ())
    ]
    return body


class _Session(Protocol):
    """What a conversation identity calls on its ``SessionClient`` (a protocol, so this module does not
    import ``session.py``, which imports it)."""

    id: str

    def sdk_client(self, name: str, /, *, headers: dict[str, str] | None = None, **kwargs: Any) -> Any: ...

    def conversations(self, conversation_id: str | None = None) -> list[dict[str, Any]]: ...

    def explain(
        self,
        request: Any,
        provider: str | None = None,
        *,
        conversation_id: str | None = None,
        credential: str | None = None,
    ) -> dict[str, Any]: ...

    def explain_wire(
        self,
        path: str,
        body: dict[str, Any],
        *,
        conversation_id: str | None = None,
        credential: str | None = None,
    ) -> dict[str, Any]: ...

    def verify(
        self,
        request: VerificationRequest | dict[str, Any] | None = None,
        /,
        *,
        conversation: str | None = None,
        **fields: Any,
    ) -> VerificationResult: ...


class ConversationClient(SdkClientShortcuts):
    """One conversation identity of a session (``SessionClient.for_conversation``).

    Its SDK clients send ``X-Llm-Test-Server-Conversation`` on every request (SDK ``default_headers``), so
    two clients with different ids keep separate graph state in the same session. Dropping this object
    changes nothing on the server: reset, configure or delete the session to clear state.
    """

    def __init__(self, session: _Session, conversation_id: str) -> None:
        if not conversation_id.strip() or len(conversation_id) > 128 or "," in conversation_id:
            raise ValueError("a conversation id is 1..128 characters, not blank, without commas")
        self.session = session
        self.id = conversation_id

    def __repr__(self) -> str:
        return f"ConversationClient(id={self.id!r}, session={self.session.id!r})"

    @property
    def headers(self) -> dict[str, str]:
        return {CONVERSATION_HEADER: self.id}

    def sdk_client(self, name: str, /, **kwargs: Any) -> Any:
        """``SessionClient.sdk_client`` with this conversation's header on every request."""
        return self.session.sdk_client(name, headers=self.headers, **kwargs)

    def conversations(self) -> list[dict[str, Any]]:
        """This identity's state in every graph of the session."""
        return self.session.conversations(self.id)

    def explain(
        self, request: Any, provider: str | None = None, *, credential: str | None = None
    ) -> dict[str, Any]:
        return self.session.explain(request, provider, conversation_id=self.id, credential=credential)

    def explain_wire(
        self, path: str, body: dict[str, Any], *, credential: str | None = None
    ) -> dict[str, Any]:
        return self.session.explain_wire(path, body, conversation_id=self.id, credential=credential)

    def verify(
        self, request: VerificationRequest | dict[str, Any] | None = None, /, **fields: Any
    ) -> VerificationResult:
        """``SessionClient.verify`` scoped to this conversation's requests (and state)."""
        return self.session.verify(request, conversation=self.id, **fields)
