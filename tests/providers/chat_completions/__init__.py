"""Tests of llmts/providers/chat_completions/: the Chat Completions wire the OpenAI-compatible providers
share."""
