"""Tests of llmts/providers/anthropic/ (Anthropic Messages)."""
