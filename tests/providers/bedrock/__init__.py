"""Tests of llmts/providers/bedrock/ (boto3 on the real server: it has no in-process transport)."""
