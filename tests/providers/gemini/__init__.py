"""Tests of llmts/providers/gemini/."""
