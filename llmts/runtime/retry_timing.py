"""How long a client waited between two attempts, and whether that was as long as it was told: the one
measurement behind ``retries`` verification (``respect_retry_after``) and the resilience verdict."""

from __future__ import annotations

import math

from llmts.schema.journal import JournalEntry

__all__ = ["SPACING_SLACK_SECONDS", "SPACING_SLACK_SHARE", "retry_gap", "waited_as_told"]

# How much earlier than Retry-After a retry may start and still count as on time: the server stamps an
# attempt's completion just after its last write returns, and on a loaded machine the process can be
# scheduled out in between while the client already has the answer and starts waiting (docs/journal.md).
SPACING_SLACK_SECONDS = 0.05
SPACING_SLACK_SHARE = 0.1


def retry_gap(attempt: JournalEntry, following: JournalEntry) -> float | None:
    """Seconds from ``attempt``'s completion to ``following``'s start on the server's monotonic clock, or
    None when the attempt has no usable completion time (in progress, or timing that does not add up)."""
    done, started, began = (
        attempt.completed_monotonic_seconds,
        following.started_monotonic_seconds,
        attempt.started_monotonic_seconds,
    )
    if done is None or not all(math.isfinite(value) for value in (done, started, began)) or done < began:
        return None
    return started - done


def waited_as_told(gap: float, advertised: float) -> bool:
    """The wait was at least the advertised one, less the small stamping slack."""
    return gap >= advertised - min(SPACING_SLACK_SECONDS, SPACING_SLACK_SHARE * advertised)
