"""Tests of llmts/server/process/ and the CLI: processes, workers, restarts, nginx in front."""
