"""Tests of llmts/providers/ollama/ (the native API and its OpenAI-compatible /ollama/v1)."""
