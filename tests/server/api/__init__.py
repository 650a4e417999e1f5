"""Tests of llmts/server/api/: the control API, its auth, the dashboard's routes and /metrics."""
