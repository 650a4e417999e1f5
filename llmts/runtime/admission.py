"""What admitting a request hands the rest of its lifecycle (``Admission``), and the input-token estimate
admission and the ``rate_limits`` window count."""

from __future__ import annotations

from dataclasses import dataclass

from llmts.runtime.conversations import Ticket
from llmts.runtime.operations import operation_input_tokens
from llmts.runtime.plans import ResponsePlan
from llmts.runtime.tokens import estimate_input_tokens
from llmts.schema.neutral import NeutralRequest, OperationRequest, ScriptedOutput

__all__ = ["Admission", "input_tokens"]


# Not frozen (nothing changes it after construction): one is built per request, and a frozen
# dataclass costs about four times as much to construct (docs/architecture.md, "The server's hot path").
@dataclass(slots=True)
class Admission:
    generation: int
    delay_ms: int
    response: ResponsePlan | None
    echo: ScriptedOutput | None
    scenario_id: str | None
    input_tokens: int
    # Set when a conversation graph owns the request: its reservation (or replay) to settle.
    conversation: Ticket | None = None
    # A scenario's answers for choices 1..n-1 of an OpenAI Chat ``n`` request (consumed with ``response``).
    more: tuple[ResponsePlan, ...] = ()
    # No scenario scripts this (non-chat) operation: ``complete`` generates the answer.
    generated: bool = False


def input_tokens(request: NeutralRequest) -> int:
    """The request's input tokens: the adapter's exact count when it made one, else the estimate (an
    operation's own count for non-chat operations)."""
    exact = request.exact_tokens
    if exact is not None:
        return exact.input_tokens
    if isinstance(request, OperationRequest):
        return operation_input_tokens(request)
    return estimate_input_tokens(request.messages, request.preamble)
