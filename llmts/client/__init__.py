"""Python API: start or attach to a server, manage sessions, and get official SDK clients bound to them.

    with LlmTestServer.start() as server:
        session = server.create_session()
        session.configure(ConfigBuilder().scenario().text("Hello!").build())
        reply = session.openai_client().chat.completions.create(
            model="gpt-4.1-mini", messages=[{"role": "user", "content": "Hi"}]
        )

Only the standard library is used for the control API; each provider SDK is imported when its client is
first asked for.
"""

from __future__ import annotations

from llmts.client.control import DEFAULT_API_KEY, ServerError, new_session_id
from llmts.client.conversations import ConversationClient
from llmts.client.journal_table import journal_table
from llmts.client.server import LlmTestServer
from llmts.client.session import SessionClient

__all__ = [
    "DEFAULT_API_KEY",
    "ConversationClient",
    "LlmTestServer",
    "ServerError",
    "SessionClient",
    "journal_table",
    "new_session_id",
]
