"""Stored Responses: what ``store`` keeps per session and how a lookup misses (404 in OpenAI's envelope).

The session's bounded store (1024 entries / 64 MiB per namespace, oldest evicted) holds, per response id,
the exact JSON the client got, the neutral history a ``previous_response_id`` restores, and the request's
own input items.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from llmts.errors import LlmtsError
from llmts.providers.base import SessionView
from llmts.schema.neutral import NeutralMessage

__all__ = ["StoredResponse", "load_stored", "save_stored"]

# Rough per-entry overhead for the byte bound (ids, tuples, the dataclass itself).
_ENTRY_OVERHEAD = 256
# A history message beside its texts: a NeutralMessage with a short text is about 540 bytes resident.
_MESSAGE_OVERHEAD = 512


@dataclass(frozen=True, slots=True)
class StoredResponse:
    body: bytes
    history: tuple[NeutralMessage, ...]
    input_items: tuple[dict[str, Any], ...]
    input_bytes: int  # the input items' accounted size, parsed (runtime/resident_size.py's ``json_size``)


def _size(stored: StoredResponse) -> int:
    history = sum(
        _MESSAGE_OVERHEAD + len(m.text) + sum(len(c.arguments) + len(c.name) for c in m.tool_calls)
        for m in stored.history
    )
    return _ENTRY_OVERHEAD + len(stored.body) + history + stored.input_bytes


def save_stored(session: SessionView, namespace: str, response_id: str, stored: StoredResponse) -> None:
    session.store.put(namespace, response_id, stored, _size(stored))


def load_stored(session: SessionView, namespace: str, response_id: str, param: str | None) -> StoredResponse:
    stored = session.store.get(namespace, response_id)
    if not isinstance(stored, StoredResponse):
        if param == "previous_response_id":
            raise LlmtsError(
                f"Previous response with id '{response_id}' not found.",
                code="previous_response_not_found",
                http_status=404,
                param=param,
            )
        raise LlmtsError(
            f"No response found with id '{response_id}'.",
            code="response_not_found",
            http_status=404,
            param=param,
        )
    return stored
