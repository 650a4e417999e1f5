"""Who a conversation request belongs to: the selector header, the presented credential, the state key.

State is partitioned by session (each session owns its book), graph, provider namespace, conversation id
and a hash of the credential the request presented. The header selects state; it is not a credential.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from llmts.errors import InvalidConversationId

__all__ = [
    "CONVERSATION_ENVIRON",
    "CONVERSATION_HEADER",
    "DEFAULT_CALLER",
    "DEFAULT_CONVERSATION_ID",
    "MAX_CONVERSATION_ID_CHARS",
    "Caller",
    "ConversationKey",
    "conversation_id_from",
    "credential_hash",
]

CONVERSATION_HEADER = "X-Llm-Test-Server-Conversation"
CONVERSATION_ENVIRON = "HTTP_X_LLM_TEST_SERVER_CONVERSATION"
DEFAULT_CONVERSATION_ID = "default"
MAX_CONVERSATION_ID_CHARS = 128

# (graph id, provider namespace, conversation id, credential hash or None)
ConversationKey = tuple[str, str, str, str | None]


def conversation_id_from(value: str | None) -> str:
    """The header's value, checked: nonblank, at most 128 characters, sent once (servers join a repeated
    header with commas, so a comma means it was repeated)."""
    if value is None:
        return DEFAULT_CONVERSATION_ID
    if not value.strip() or len(value) > MAX_CONVERSATION_ID_CHARS or "," in value:
        raise InvalidConversationId(
            f"{CONVERSATION_HEADER} must be one nonblank value of at most {MAX_CONVERSATION_ID_CHARS} "
            "characters without commas",
            param=CONVERSATION_HEADER,
        )
    return value


def credential_hash(credential: str | None) -> str | None:
    """A short, stable digest of the presented credential (the credential itself is never kept)."""
    if credential is None:
        return None
    return "sha256:" + hashlib.sha256(credential.encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Caller:
    """The identity inputs a provider request brings besides its neutral body."""

    conversation_id: str = DEFAULT_CONVERSATION_ID
    credential: str | None = None


DEFAULT_CALLER = Caller()
