"""Tests of llmts/providers/openai/: Chat Completions, Responses, native tools, Azure OpenAI, media and the
OpenAPI spec check (``spec/``)."""
