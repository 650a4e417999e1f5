"""Tests of llmts/providers/cohere/."""
