"""What the dashboard API test modules share: the chat route they send provider requests to."""

from __future__ import annotations

CHAT = "/openai/v1/chat/completions"
