"""Tests of llmts/server/http/: the connection loop, parsing, deadlines, the access log, host policy."""
