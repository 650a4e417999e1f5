"""What a request costs its session, the same for an HTTP exchange (server/provider_path.py) and a realtime
turn (server/realtime/connection.py): the allowances checked before admission, and the bookkeeping once
its answer is complete (docs/configuration.md, ``budget`` and ``rate_limits``; docs/journal.md, "Usage and
cost")."""

from __future__ import annotations

from llmts.runtime.admission import Admission
from llmts.runtime.journal_record import JournalRecord
from llmts.runtime.session import Session
from llmts.schema.neutral import Completion, NeutralRequest

__all__ = ["account_completion", "check_allowances"]


def check_allowances(session: Session, neutral: NeutralRequest) -> None:
    """The budget, then the rate-limit window: a refused request consumes nothing."""
    session.spend.check()
    session.rates.take(neutral)


def account_completion(
    session: Session, entry: JournalRecord, admission: Admission, completion: Completion
) -> None:
    """The answer's output tokens against the rate window, and its text, usage, price and tool calls on
    its journal entry (which also says whether a conversation graph replayed its retained result)."""
    session.rates.spend(completion.usage.output_tokens)
    ticket = admission.conversation
    entry.apply_completion(completion, replayed=ticket is not None and ticket.replay is not None)
    assert entry.usage is not None
    entry.priced(session.spend.spend(entry.provider, entry.model, entry.usage))
    entry.capture_output_calls(completion.output.tool_calls, session.journal.preview_bytes)
