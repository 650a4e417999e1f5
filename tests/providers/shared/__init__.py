"""Tests across providers: the shared runtime, conversations, determinism, strict requests, reasoning and
realistic answers."""
