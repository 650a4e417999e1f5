"""The MCP protocol revisions llmts speaks (docs/mcp.md, "Revisions and transports") and what each one
adds to the wire, so an answer never carries a field its negotiated revision does not define."""

from __future__ import annotations

__all__ = [
    "HANDSHAKE_VERSIONS",
    "LATEST_HANDSHAKE",
    "MODERN_VERSIONS",
    "at_least",
    "negotiate",
]

# The revisions with an ``initialize`` handshake and an ``Mcp-Session-Id``, newest first: every one the
# official Python SDK's newest and previous majors (mcp 2.x, 1.x) negotiate.
HANDSHAKE_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
LATEST_HANDSHAKE = HANDSHAKE_VERSIONS[0]
# The stateless revisions (no handshake, no session): mcp 2.x's ``Client`` probes for them.
MODERN_VERSIONS = ("2026-07-28",)

# Revisions are dates: ISO strings compare in time order.
STRUCTURED_OUTPUT = "2025-06-18"  # outputSchema, structuredContent, title, resource_link, elicitation
TOOL_ANNOTATIONS = "2025-03-26"  # tool annotations, audio content, the completions capability


def negotiate(requested: object) -> str:
    """The revision to answer ``initialize`` with: the client's when llmts speaks it, else the newest."""
    return requested if isinstance(requested, str) and requested in HANDSHAKE_VERSIONS else LATEST_HANDSHAKE


def at_least(version: str, floor: str) -> bool:
    return version >= floor
