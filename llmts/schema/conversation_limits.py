"""Configuration limits of conversation graphs (merged into ``LIMITS``; documented in
docs/configuration.md)."""

from __future__ import annotations

__all__ = ["CONVERSATION_LIMITS"]

CONVERSATION_LIMITS: dict[str, int] = {
    "conversations": 256,
    "steps_per_conversation": 256,
    "max_steps": 4096,
    "json_path_chars": 256,
    "predicate_chars": 65536,
    "pattern_chars": 1024,
    "conversation_id_chars": 128,
    "conversation_capacity_conversations": 65536,
    "conversation_capacity_bytes": 1024 * 1024 * 1024,
}
