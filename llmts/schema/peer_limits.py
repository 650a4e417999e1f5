"""Bounds of the ``mcp_servers`` and ``a2a_agents`` sections (docs/configuration.md, "Limits"): a leaf,
so ``fixtures.LIMITS`` can list them without importing the models."""

from __future__ import annotations

__all__ = ["PEER_LIMITS"]

PEER_LIMITS: dict[str, int] = {
    "mcp_servers": 32,
    "mcp_tools_per_server": 256,
    "mcp_results_per_tool": 1024,
    "mcp_resources_per_server": 1024,
    "mcp_resource_templates_per_server": 256,
    "mcp_prompts_per_server": 256,
    "mcp_messages_per_prompt": 64,
    "mcp_content_blocks": 64,
    "mcp_progress_notifications": 256,
    "mcp_text_chars": 1_000_000,
    # A resource's ``uri`` (and ``uri_template``), and a URI a 2026-07-28 listen subscribes to.
    "mcp_uri_chars": 4096,
    "mcp_sessions_per_server": 1024,
    # Per client session: resources it subscribes to, server notifications waiting for its GET stream
    # (the oldest are dropped beyond it), and the longest wait for its answer to a server request.
    "mcp_subscriptions_per_session": 1024,
    "mcp_pending_notifications": 1024,
    # Per legacy (HTTP+SSE) client session: calls running at once, and answers waiting for its stream
    # (beyond it a POST waits for the stream to take one; answers are never dropped).
    "mcp_legacy_calls_in_flight": 64,
    "mcp_answer_timeout_ms": 300_000,
    # Per server: 2026-07-28 ``subscriptions/listen`` streams open at once (more are refused).
    "mcp_listens_per_server": 64,
    "mcp_flood_notifications": 10_000,
    "a2a_agents": 32,
    "a2a_skills_per_agent": 64,
    "a2a_responses_per_agent": 1024,
    "a2a_artifacts_per_task": 64,
    "a2a_states_per_task": 16,
    "a2a_tasks_per_agent": 1024,
    "a2a_text_chars": 1_000_000,
}
